// The backup point a rebuild starts from and the gate on a quorum lost with no survivor, as tables.
import type { BackupPoint, LossFindings } from '../contracts/quorum-loss';
import type { QuorumLossVerdict } from './quorum-loss';
import type { EtcdMemberView } from './plan-types';
import { describeSource, newestBackupPoint, rebuildGate, rollbackGate } from './rebuild-point';

const snap = (snapshot: string, revision: number, verified?: BackupPoint['verified']): BackupPoint => ({
  snapshot,
  revision,
  takenAt: '2026-11-26T10:00:00Z',
  uri: `s3://b/${snapshot}`,
  ...(verified ? { verified } : {}),
});

describe('newestBackupPoint', () => {
  test.each<[string, Pick<LossFindings, 'continuous' | 'restorable'>, string | undefined]>([
    ['nothing stored gives no point', {}, undefined],
    ['a snapshot alone is the point', { restorable: snap('s1', 40, 'True') }, 'Snapshot s1 40'],
    [
      'the continuous backup wins over a snapshot, even an older-looking one',
      { continuous: { revision: 30, time: 't' }, restorable: snap('s1', 40) },
      'Continuous 30',
    ],
    ['the continuous backup alone is the point', { continuous: { revision: 7 } }, 'Continuous 7'],
  ])('%s', (_name, findings, want) => {
    const point = newestBackupPoint(findings);
    const said =
      point === undefined
        ? undefined
        : point.kind === 'Snapshot'
          ? `Snapshot ${point.snapshot} ${point.revision}`
          : `Continuous ${point.revision}`;
    expect(said).toBe(want);
  });
});

describe('describeSource', () => {
  test.each([
    [
      'a continuous point says it is a lower bound',
      { kind: 'Continuous' as const, revision: 9, time: 'T' },
      "the continuous backup's newest point (at least revision 9, safe at T)",
    ],
    [
      'a snapshot names itself',
      { kind: 'Snapshot' as const, snapshot: 's', revision: 3, takenAt: 'T' },
      'snapshot s at revision 3, taken T',
    ],
  ])('%s', (_name, source, want) => {
    expect(describeSource(source)).toBe(want);
  });
});

const verdict: Extract<QuorumLossVerdict, { kind: 'Permanent' }> = {
  kind: 'Permanent',
  members: ['c-0', 'c-1', 'c-2'],
  survivors: [],
  gone: [
    { name: 'c-0', why: 'its claim was deleted' },
    { name: 'c-1', why: 'its claim was deleted' },
    { name: 'c-2', why: 'its claim was deleted' },
  ],
};
const uid = 'uid-1';

describe('rebuildGate', () => {
  test.each<[string, { approval?: string; findings?: LossFindings }, string, RegExp]>([
    [
      'before the backup is looked at it waits and says so',
      { approval: uid },
      'Wait',
      /no member is left to recover from: .*the backup is not looked at yet/,
    ],
    [
      'no backup at all: nothing to approve, said plainly, even when approved',
      { approval: uid, findings: { survivors: [] } },
      'Wait',
      /there is no backup of this cluster .*nothing to rebuild from and nothing to approve/,
    ],
    [
      'snapshots that could not be listed: not "no backup", even when approved; it looks again',
      { approval: uid, findings: { survivors: [], snapshotsUnread: 'connection refused' } },
      'Wait',
      /EtcdSnapshots could not be listed \(connection refused\), so the newest backup point cannot be told yet; looking again$/,
    ],
    [
      'only a snapshot that failed its check: nothing to approve, and the snapshot is named',
      { findings: { survivors: [], backup: snap('bad', 50, 'False') } },
      'Wait',
      /no backup .*snapshot bad \(revision 50\) failed its check and is not used/,
    ],
    [
      'a snapshot and no approval: waits, naming the point and how to approve',
      { findings: { survivors: [], backup: snap('s1', 40), restorable: snap('s1', 40) } },
      'Wait',
      /rebuilds the cluster in place from snapshot s1 at revision 40.*kubectl etcd approve-recovery c/,
    ],
    [
      "an approval naming another object's uid is refused",
      { approval: 'other', findings: { survivors: [], restorable: snap('s1', 40) } },
      'Wait',
      /"other", which is not this EtcdCluster's uid uid-1: refused/,
    ],
    [
      'approved with a snapshot: rebuild from it',
      { approval: uid, findings: { survivors: [], restorable: snap('s1', 40) } },
      'Rebuild',
      /Snapshot s1/,
    ],
    [
      'approved with a continuous backup: rebuild from its newest point',
      {
        approval: ` ${uid} `,
        findings: { survivors: [], continuous: { revision: 77 }, restorable: snap('s1', 40) },
      },
      'Rebuild',
      /Continuous 77/,
    ],
  ])('%s', (_name, input, kind, said) => {
    const gate = rebuildGate({ cluster: 'c', uid, verdict, ...input });
    expect(gate.kind).toBe(kind);
    const text =
      gate.kind === 'Wait'
        ? gate.message
        : `${gate.source.kind} ${gate.source.kind === 'Snapshot' ? gate.source.snapshot : gate.source.revision} gone ${gate.gone.join(',')}`;
    expect(text).toMatch(said);
    if (gate.kind === 'Rebuild') expect(gate.gone).toEqual(['c-0', 'c-1', 'c-2']);
    // The Event is told once per loss by the message's head: it must name the members gone.
    if (gate.kind === 'Wait') expect(gate.message.split(': ')[0]).toContain('(c-0, c-1, c-2)');
  });
});

const voter = (name: string, over: Partial<EtcdMemberView> = {}): EtcdMemberView => ({
  id: name,
  name,
  isLearner: false,
  started: true,
  reachable: true,
  ...over,
});
const healthy = { members: [voter('c-0'), voter('c-1'), voter('c-2')] };

describe('rollbackGate', () => {
  test.each<[string, Partial<Parameters<typeof rollbackGate>[0]>, string]>([
    ['no spec.rollback: nothing', { approval: uid, etcd: healthy }, 'spec.rollback is not set'],
    [
      'spec.rollback without the approval: nothing',
      { rollback: { snapshotRef: { name: 's' } }, etcd: healthy },
      'not approved',
    ],
    [
      "an approval naming another object's uid approves nothing",
      { rollback: { snapshotRef: { name: 's' } }, approval: 'other', etcd: healthy },
      'which is not this EtcdCluster',
    ],
    [
      'etcd does not answer: waits for a healthy cluster',
      { rollback: { snapshotRef: { name: 's' } }, approval: uid },
      'etcd does not answer',
    ],
    [
      'a member that does not answer: waits',
      {
        rollback: { snapshotRef: { name: 's' } },
        approval: uid,
        etcd: { members: [voter('c-0'), voter('c-1'), voter('c-2', { reachable: false })] },
      },
      '2 of 3 members are healthy voters',
    ],
    [
      'a learner still catching up: waits',
      {
        rollback: { snapshotRef: { name: 's' } },
        approval: uid,
        etcd: { members: [voter('c-0'), voter('c-1'), voter('c-2', { isLearner: true })] },
      },
      '2 of 3 members are healthy voters',
    ],
    [
      'approved, healthy, to a named snapshot: roll back to it',
      { rollback: { snapshotRef: { name: 's' } }, approval: uid, etcd: healthy },
      'Rollback Snapshot s',
    ],
    [
      'approved, healthy, to a revision of the continuous backup: roll back to it',
      { rollback: { pointInTime: { revision: 1200 } }, approval: uid, etcd: healthy },
      'Rollback PointInTime 1200',
    ],
    [
      'approved, healthy, to a time of the continuous backup: roll back to it',
      { rollback: { pointInTime: { time: '2026-11-26T10:00:00Z' } }, approval: uid, etcd: healthy },
      'Rollback PointInTime 2026-11-26T10:00:00Z',
    ],
  ])('%s', (_name, input, said) => {
    const gate = rollbackGate({ uid, replicas: 3, ...input });
    const text =
      gate.kind === 'None'
        ? gate.why
        : `Rollback ${gate.step.source.kind} ${
            gate.step.source.kind === 'Snapshot'
              ? gate.step.source.snapshot
              : gate.step.source.kind === 'PointInTime'
                ? (gate.step.source.revision ?? gate.step.source.time)
                : ''
          }`;
    expect(text).toContain(said);
  });
});
