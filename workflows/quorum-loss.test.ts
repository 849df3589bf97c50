// Permanent versus temporary quorum loss, the survivor a recovery starts from, the approval, and the lost window, as tables.
import type { KubeMemberView, Observed } from './plan-types';
import type { LossFindings, SurvivorProbe } from './quorum-loss';
import {
  approvalFor,
  chooseRecoverySource,
  highestRevision,
  judgeApproval,
  judgeQuorumLoss,
  lostWindow,
  newerRevision,
  recoveryGate,
  whyDataGone,
  withEarlierAnswers,
} from './quorum-loss';

type Pod = NonNullable<KubeMemberView['pod']>;
const pod = (over: Partial<Pod> = {}): Pod => ({
  phase: 'Running',
  ready: false,
  terminating: false,
  ...over,
});
const claim = (over: Partial<NonNullable<KubeMemberView['claim']>> = {}) => ({
  terminating: false,
  dataLost: false,
  ...over,
});
const running = (name: string): KubeMemberView => ({ name, pod: pod(), claim: claim() });
const down = (name: string): KubeMemberView => ({ name, claim: claim() });
const crashLooping = (name: string): KubeMemberView => ({
  name,
  pod: pod({ phase: 'Running' }),
  claim: claim(),
  problem: { reason: 'MemberCrashLooping', message: 'etcd keeps exiting' },
});
const unschedulable = (name: string): KubeMemberView => ({
  name,
  pod: pod({ phase: 'Pending' }),
  claim: claim(),
  problem: { reason: 'PodUnschedulable', message: 'node(s) had untolerated taint' },
});
const marked = (name: string): KubeMemberView => ({ name, pod: pod(), claim: claim({ dataLost: true }) });
const claimGoing = (name: string): KubeMemberView => ({
  name,
  pod: pod(),
  claim: claim({ terminating: true }),
});
const podOnly = (name: string): KubeMemberView => ({ name, pod: pod() });

const three = ['c-0', 'c-1', 'c-2'];
const five = ['c-0', 'c-1', 'c-2', 'c-3', 'c-4'];
const observed = (kube: KubeMemberView[], members = three, over: Partial<Observed> = {}) => ({
  kube,
  recorded: { clusterId: '42', members, paused: false },
  ...over,
});
const desired = { cluster: 'c', replicas: 3, medium: '' as const };

describe('judgeQuorumLoss', () => {
  test.each([
    [
      'every member down with its claim kept is temporary: wait',
      [down('c-0'), down('c-1'), down('c-2')],
      three,
      'Temporary',
      [],
    ],
    [
      'one claim deleted of three leaves a quorum with data: temporary',
      [running('c-0'), running('c-1')],
      three,
      'Temporary',
      ['c-2'],
    ],
    ['two claims deleted of three is permanent', [running('c-0')], three, 'Permanent', ['c-1', 'c-2']],
    ['every claim deleted is permanent with no survivor', [], three, 'Permanent', ['c-0', 'c-1', 'c-2']],
    [
      'claims marked data-lost count as gone',
      [running('c-0'), marked('c-1'), marked('c-2')],
      three,
      'Permanent',
      ['c-1', 'c-2'],
    ],
    [
      'claims being deleted count as gone',
      [running('c-0'), claimGoing('c-1'), claimGoing('c-2')],
      three,
      'Permanent',
      ['c-1', 'c-2'],
    ],
    [
      'a Pod left without its claim counts as gone',
      [running('c-0'), podOnly('c-1'), podOnly('c-2')],
      three,
      'Permanent',
      ['c-1', 'c-2'],
    ],
    [
      'crash-looping members keep their data: temporary',
      [running('c-0'), crashLooping('c-1'), crashLooping('c-2')],
      three,
      'Temporary',
      [],
    ],
    [
      'unschedulable Pods keep their claims (the node may return): temporary',
      [running('c-0'), unschedulable('c-1'), unschedulable('c-2')],
      three,
      'Temporary',
      [],
    ],
    [
      'two of five gone leaves three, a quorum: temporary',
      [running('c-0'), running('c-1'), down('c-2')],
      five,
      'Temporary',
      ['c-3', 'c-4'],
    ],
    [
      'three of five gone is permanent',
      [running('c-0'), down('c-1')],
      five,
      'Permanent',
      ['c-2', 'c-3', 'c-4'],
    ],
    ['the single member of a one-member cluster gone is permanent', [], ['c-0'], 'Permanent', ['c-0']],
    [
      'one of two gone is permanent (a quorum of two is two)',
      [running('c-0')],
      ['c-0', 'c-1'],
      'Permanent',
      ['c-1'],
    ],
  ])('%s', (_name, kube, members, kind, goneNames) => {
    const verdict = judgeQuorumLoss(desired, observed(kube, members));
    expect(verdict.kind).toBe(kind);
    if (verdict.kind === 'NotJudged') throw new Error('judged');
    expect(verdict.gone.map((g) => g.name)).toEqual(goneNames);
    expect([...verdict.survivors, ...goneNames].sort()).toEqual([...members].sort());
  });

  test.each([
    [
      'etcd answers',
      observed([running('c-0')], three, { etcd: { clusterId: '42', members: [] } }),
      desired,
      'etcd answers',
    ],
    [
      'members refuse the TLS handshake',
      observed([], three, { etcdRefused: 'bad certificate' }),
      desired,
      'TLS',
    ],
    [
      'the cluster never formed',
      { kube: [], recorded: { members: three, paused: false } },
      desired,
      'never formed',
    ],
    [
      'the cluster is paused',
      observed([down('c-0')], ['c-0'], { recorded: { clusterId: '42', members: ['c-0'], paused: true } }),
      desired,
      'paused',
    ],
    ['replicas 0 asks for a pause', observed([down('c-0')]), { ...desired, replicas: 0 }, 'paused'],
    ['no member was recorded', observed([], []), desired, 'no member'],
  ])('nothing is judged when %s', (_name, obs, want, why) => {
    const verdict = judgeQuorumLoss(want, obs);
    expect(verdict).toEqual({ kind: 'NotJudged', why: expect.stringContaining(why) });
  });

  test('a Memory member whose Pod is gone has lost its data; a live one keeps it', () => {
    const memory = { ...desired, medium: 'Memory' as const };
    const verdict = judgeQuorumLoss(memory, observed([podOnly('c-0'), down('c-1')]));
    expect(verdict).toMatchObject({ kind: 'Permanent', survivors: ['c-0'] });
    expect(whyDataGone(undefined, 'Memory')).toMatch(/Memory volume/);
    expect(whyDataGone(podOnly('c-0'), 'Memory')).toBeUndefined();
  });

  test('each gone member says how the operator knows', () => {
    const verdict = judgeQuorumLoss(desired, observed([running('c-0'), marked('c-1')]));
    expect(verdict.kind).toBe('Permanent');
    if (verdict.kind !== 'Permanent') return;
    expect(verdict.gone).toEqual([
      { name: 'c-1', why: expect.stringContaining('data-lost') },
      { name: 'c-2', why: 'its claim was deleted' },
    ]);
  });

  test('members sort by ordinal, not as strings', () => {
    const names = Array.from({ length: 11 }, (_, i) => `c-${i}`);
    const verdict = judgeQuorumLoss(desired, observed([running('c-10')], names));
    if (verdict.kind === 'NotJudged') throw new Error('judged');
    expect(verdict.members.slice(-2)).toEqual(['c-9', 'c-10']);
  });
});

const probe = (name: string, revision: string, over: Partial<SurvivorProbe> = {}): SurvivorProbe => ({
  name,
  answered: true,
  id: `${name.length}${name.slice(-1)}`,
  revision,
  raftIndex: revision,
  isLearner: false,
  ...over,
});

describe('chooseRecoverySource', () => {
  test.each([
    ['the only survivor', ['c-0'], [probe('c-0', '100')], 'c-0'],
    [
      'the survivor with the highest revision',
      ['c-0', 'c-1'],
      [probe('c-0', '100'), probe('c-1', '120')],
      'c-1',
    ],
    [
      'revisions compare as numbers, not strings',
      ['c-0', 'c-1'],
      [probe('c-0', '99'), probe('c-1', '100')],
      'c-1',
    ],
    [
      'a tie on revision goes to the higher raft index',
      ['c-0', 'c-1'],
      [probe('c-0', '100', { raftIndex: '5' }), probe('c-1', '100', { raftIndex: '9' })],
      'c-1',
    ],
    [
      'a full tie goes to the lowest ordinal',
      ['c-0', 'c-1'],
      [probe('c-1', '100'), probe('c-0', '100')],
      'c-0',
    ],
    [
      'a voter wins over a learner with a higher revision',
      ['c-0', 'c-1'],
      [probe('c-0', '100'), probe('c-1', '200', { isLearner: true })],
      'c-0',
    ],
    [
      'a learner is chosen when it is the only survivor',
      ['c-1'],
      [probe('c-1', '200', { isLearner: true })],
      'c-1',
    ],
  ])('recovers from %s', (_name, survivors, probes, member) => {
    const source = chooseRecoverySource('c', survivors, probes);
    expect(source).toMatchObject({ kind: 'Member', member });
  });

  test.each([
    ['no member survives', [], [], 'no member survives'],
    [
      'a survivor does not answer',
      ['c-0', 'c-1'],
      [probe('c-0', '100'), { name: 'c-1', answered: false, error: 'deadline exceeded' }],
      'c-1 (deadline exceeded) does not answer',
    ],
    ['a survivor was not asked', ['c-0', 'c-1'], [probe('c-0', '100')], 'c-1 does not answer'],
    ['the survivor reported no member id', ['c-0'], [probe('c-0', '100', { id: undefined })], 'member id'],
  ])('chooses nothing when %s', (_name, survivors, probes, why) => {
    expect(chooseRecoverySource('c', survivors, probes)).toEqual({
      kind: 'None',
      why: expect.stringContaining(why),
    });
  });
});

describe('judgeApproval', () => {
  const uid = '0b7a6a3c-1111-2222-3333-444455556666';
  test.each([
    ['no annotation', undefined, 'None'],
    ['an empty annotation', '', 'None'],
    ['the cluster uid', uid, 'Approved'],
    ['the uid with stray whitespace', ` ${uid}\n`, 'Approved'],
    ['another object uid', 'ffffffff-1111-2222-3333-444455556666', 'Refused'],
    ['a yes instead of the uid', 'true', 'Refused'],
  ])('%s', (_name, value, kind) => {
    expect(judgeApproval(value, uid).kind).toBe(kind);
  });

  test('a refusal names the value and the uid, and that nothing was done', () => {
    const verdict = judgeApproval('true', 'u-1');
    expect(verdict).toEqual({
      kind: 'Refused',
      value: 'true',
      message: expect.stringMatching(/"true".*uid u-1: refused, nothing was done/),
    });
  });

  test('the approval to give is the annotation with the uid', () => {
    expect(approvalFor('u-1')).toBe('etcd.conductor.dev/approve-recovery=u-1');
  });
});

describe('lostWindow', () => {
  test.each([
    [
      'the operator saw revisions beyond the recovered one',
      '100',
      { revision: '130', at: 'T1' },
      '30',
      /revisions 101\.\.130 \(30\).*gone/,
    ],
    [
      'the recovered revision is the newest seen',
      '130',
      { revision: '130', at: 'T1' },
      '0',
      /at or beyond revision 130/,
    ],
    ['the survivor is ahead of the last look', '140', { revision: '130', at: 'T1' }, '0', /at or beyond/],
    ['the operator never saw a revision', '100', undefined, '0', /cannot be counted/],
  ])('%s', (_name, recovered, seen, lost, message) => {
    const window = lostWindow(recovered, seen);
    expect(window.lostRevisions).toBe(lost);
    expect(window.recoveredRevision).toBe(recovered);
    expect(window.message).toMatch(message);
  });
});

describe('revision sightings', () => {
  test.each([
    ['none before', undefined, { revision: '5', at: 'b' }, '5'],
    ['a newer one replaces', { revision: '5', at: 'a' }, { revision: '6', at: 'b' }, '6'],
    [
      'an older one (a lagging member) does not',
      { revision: '50', at: 'a' },
      { revision: '6', at: 'b' },
      '50',
    ],
    ['none now keeps the old', { revision: '5', at: 'a' }, undefined, '5'],
  ])('%s', (_name, a, b, want) => {
    expect(newerRevision(a, b)?.revision).toBe(want);
  });

  test('the highest revision of an observation, numerically', () => {
    expect(highestRevision([{ revision: '99' }, {}, { revision: '100' }])).toBe('100');
    expect(highestRevision([{}])).toBeUndefined();
  });
});

describe('recoveryGate', () => {
  const verdict = {
    kind: 'Permanent' as const,
    members: three,
    survivors: ['c-0'],
    gone: [
      { name: 'c-1', why: 'its claim was deleted' },
      { name: 'c-2', why: 'its claim was deleted' },
    ],
  };
  const findings: LossFindings = {
    survivors: [probe('c-0', '120')],
    backup: {
      snapshot: 'c-daily',
      revision: 100,
      takenAt: '2026-11-25T12:00:00Z',
      uri: 's3://b/c-daily.db',
      verified: 'True',
    },
  };
  const gate = (approval?: string, f: LossFindings | null = findings) =>
    recoveryGate({
      cluster: 'c',
      uid: 'u-1',
      ...(approval !== undefined ? { approval } : {}),
      verdict,
      ...(f ? { findings: f } : {}),
    });

  test('without an approval it waits, saying what is lost, what survives, the backup and the approval to give', () => {
    const g = gate();
    expect(g.kind).toBe('Wait');
    if (g.kind !== 'Wait') return;
    expect(g.message).toMatch(
      /^2 of 3 members lost their data for good \(c-1, c-2\), so a quorum cannot form again: /,
    );
    expect(g.message).toContain('c-1: its claim was deleted; c-2: its claim was deleted');
    expect(g.message).toContain('survivors: c-0 at revision 120');
    expect(g.message).toContain(
      'newest snapshot c-daily at revision 100, taken 2026-11-25T12:00:00Z, verified',
    );
    expect(g.message).toContain('rebuilds the cluster from c-0 at revision 120');
    expect(g.message).toContain('kubectl etcd approve-recovery c');
    expect(g.message).toContain('etcd.conductor.dev/approve-recovery=u-1');
    expect(g.refused).toBeUndefined();
  });

  test('the first part of the message names only the members lost (the Event is told once per loss)', () => {
    const a = gate();
    const b = gate(undefined, { survivors: [probe('c-0', '999')] });
    if (a.kind !== 'Wait' || b.kind !== 'Wait') throw new Error('waits');
    expect(a.message.split(': ')[0]).toBe(b.message.split(': ')[0]);
  });

  test('a wrong uid waits, refused, and says so first', () => {
    const g = gate('u-2');
    expect(g).toMatchObject({ kind: 'Wait', refused: { value: 'u-2' } });
    if (g.kind !== 'Wait') return;
    expect(g.message).toMatch(
      /again: etcd.conductor.dev\/approve-recovery is "u-2", which is not this EtcdCluster's uid u-1: refused, nothing was done/,
    );
  });

  test("the cluster's uid recovers from the newest survivor", () => {
    expect(gate('u-1')).toEqual({
      kind: 'Recover',
      member: 'c-0',
      id: '30',
      revision: '120',
      gone: ['c-1', 'c-2'],
    });
  });

  test('approved while a survivor has not answered, it waits and says why', () => {
    const g = gate('u-1', { survivors: [{ name: 'c-0', answered: false, error: 'timeout' }] });
    expect(g.kind).toBe('Wait');
    if (g.kind !== 'Wait') return;
    expect(g.message).toMatch(
      /again: approved, but no recovery can start yet: surviving member c-0 \(timeout\) does not answer/,
    );
  });

  test('before the survivors were asked, it waits without a source', () => {
    const g = gate('u-1', null);
    expect(g.kind).toBe('Wait');
    if (g.kind !== 'Wait') return;
    expect(g.message).toContain('the backup is not looked at yet');
    expect(g.message).toContain('c-0 (does not answer)');
  });

  test("a survivor's earlier answer reads the same as a fresh one, and is never acted on", () => {
    const earlier: LossFindings = { ...findings, survivors: [{ ...probe('c-0', '120'), earlier: true }] };
    expect(gate(undefined, earlier)).toEqual(gate());
    const g = gate('u-1', earlier);
    expect(g.kind).toBe('Wait');
    if (g.kind !== 'Wait') return;
    expect(g.message).toMatch(
      /again: approved, but surviving member c-0 did not answer its status at this look, so the newest data cannot be told yet; /,
    );
  });

  test('snapshots that could not be listed are said so, not "no snapshot"', () => {
    const g = gate(undefined, { survivors: [probe('c-0', '120')], snapshotsUnread: 'connection reset' });
    if (g.kind !== 'Wait') throw new Error('waits');
    expect(g.message).toContain("the cluster's EtcdSnapshots could not be listed (connection reset)");
    expect(g.message).not.toContain('no snapshot of this cluster succeeded');
  });
});

describe('withEarlierAnswers', () => {
  const backup = { snapshot: 's-1', revision: 10, takenAt: '2026-11-25T12:00:00Z', uri: 's3://b/s-1.db' };
  const silent = (name: string): SurvivorProbe => ({ name, answered: false, error: 'deadline exceeded' });
  const before: LossFindings = {
    survivors: [probe('c-0', '120'), silent('c-1')],
    backup,
    restorable: backup,
  };
  test.each<[string, LossFindings, LossFindings | undefined, LossFindings]>([
    [
      'the first look is what it is',
      { survivors: [silent('c-0')] },
      undefined,
      { survivors: [silent('c-0')] },
    ],
    [
      'a survivor silent now keeps its last answer, marked earlier',
      { survivors: [silent('c-0'), silent('c-1')], backup },
      before,
      { survivors: [{ ...probe('c-0', '120'), earlier: true }, silent('c-1')], backup },
    ],
    [
      'a fresh answer replaces the earlier one',
      { survivors: [probe('c-0', '121'), probe('c-1', '119')] },
      before,
      { survivors: [probe('c-0', '121'), probe('c-1', '119')] },
    ],
    [
      'snapshots unread keep the points found before',
      { survivors: [probe('c-0', '120')], snapshotsUnread: 'timeout' },
      before,
      { survivors: [probe('c-0', '120')], snapshotsUnread: 'timeout', backup, restorable: backup },
    ],
    [
      'snapshots listed and none found: none, whatever was found before',
      { survivors: [probe('c-0', '120')] },
      before,
      { survivors: [probe('c-0', '120')] },
    ],
  ])('%s', (_what, now, earlier, expected) => {
    expect(withEarlierAnswers(now, earlier)).toEqual(expected);
  });
});
