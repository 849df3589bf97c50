// The rolling upgrade as the planner decides it, one row per situation: order, gates, leader hand-off, refusals, and what else the refusal holds back.
import { plan, operationFor, describeStep } from './plan';
import { continuesOperation, summarize } from './operations/registry';
import type { ActionStep, Desired, Observed, Step } from './plan';
import { planUpgrade } from './upgrade-plan';

const id = (n: number) => `1027665774393297${5400 + n}`;
const name = (n: number) => `main-${n}`;

interface M {
  n: number;
  /** What the process reports (undefined: does not answer). */
  runs?: string;
  /** The Pod's image version (undefined with `pod: 'none'`). */
  image?: string;
  pod?: 'ready' | 'notReady' | 'none' | 'terminating';
  raft?: string;
}

function observed(members: M[], leader = 0): Observed {
  return {
    etcd: {
      clusterId: '14841639068965178418',
      leaderId: id(leader),
      members: members.map((m) => ({
        id: id(m.n),
        name: name(m.n),
        isLearner: false,
        started: true,
        reachable: m.runs !== undefined,
        raftIndex: m.raft ?? '5000',
        ...(m.runs !== undefined ? { version: m.runs } : {}),
      })),
    },
    kube: members.map((m) => ({
      name: name(m.n),
      ...(m.pod === 'none'
        ? {}
        : {
            pod: {
              phase: 'Running' as const,
              ready: (m.pod ?? 'ready') === 'ready',
              terminating: m.pod === 'terminating',
              ...(m.image !== undefined ? { version: m.image } : {}),
            },
          }),
      claim: { terminating: false, dataLost: false },
    })),
    recorded: { clusterId: '14841639068965178418', members: members.map((m) => name(m.n)), paused: false },
  };
}

const desired = (version: string, over: Partial<Desired> = {}): Desired => ({
  cluster: 'main',
  replicas: 3,
  medium: '',
  versionKnown: true,
  version,
  ...over,
});

const old = (n: number, more: Partial<M> = {}): M => ({ n, runs: '3.5.35', image: '3.5.35', ...more });
const fresh = (n: number, more: Partial<M> = {}): M => ({ n, runs: '3.6.16', image: '3.6.16', ...more });

type Row = [string, Desired, Observed, Partial<Step> & { kind: Step['kind'] }, string?];

describe('plan, when spec.version differs from what members run', () => {
  test.each<Row>([
    [
      'all members on 3.5.35 and spec 3.6.16: the lowest-ordinal follower goes first',
      desired('3.6.16'),
      observed([old(0), old(1), old(2)]),
      { kind: 'UpgradeMember', member: 'main-1', id: id(1), from: '3.5.35', to: '3.6.16' },
      'upgradeMembers',
    ],
    [
      'with main-1 upgraded and caught up, the next follower main-2 goes',
      desired('3.6.16'),
      observed([old(0), fresh(1), old(2)]),
      { kind: 'UpgradeMember', member: 'main-2' },
    ],
    [
      'with only the leader left, leadership moves to the most caught-up upgraded voter first',
      desired('3.6.16'),
      observed([old(0, { raft: '5000' }), fresh(1, { raft: '4990' }), fresh(2, { raft: '5000' })]),
      {
        kind: 'MoveLeader',
        from: { name: 'main-0', id: id(0) },
        to: { name: 'main-2', id: id(2) },
        reason: 'Upgrade',
      },
    ],
    [
      'once leadership moved, the old leader is an ordinary follower and is restarted last',
      desired('3.6.16'),
      observed([old(0), fresh(1), fresh(2)], 2),
      { kind: 'UpgradeMember', member: 'main-0' },
    ],
    [
      'the leader of a one-member cluster is restarted in place (there is no one to hand over to)',
      desired('3.6.16', { replicas: 1 }),
      observed([old(0)]),
      { kind: 'UpgradeMember', member: 'main-0' },
    ],
    [
      'a member restarted on 3.6.16 that is not Ready yet holds the next one back',
      desired('3.6.16'),
      observed([old(0), fresh(1, { pod: 'notReady' }), old(2)]),
      { kind: 'Wait', reason: 'MemberNotReady', message: 'member main-1 restarted on 3.6.16, starting' },
    ],
    [
      'a restarted member that lags the leader by more than 1000 raft entries is catching up',
      desired('3.6.16'),
      observed([old(0, { raft: '9000' }), fresh(1, { raft: '7000' }), old(2, { raft: '9000' })]),
      {
        kind: 'Wait',
        reason: 'MemberNotReady',
        message: 'member main-1 restarted on 3.6.16, catching up (raft index 7000 of 9000)',
      },
    ],
    [
      'a follower that is not Ready stops the upgrade: taking another member down would risk quorum',
      desired('3.6.16'),
      observed([old(0), old(1), old(2, { pod: 'notReady' })]),
      { kind: 'Wait', reason: 'MemberNotReady' },
    ],
    [
      'a member whose Pod was deleted for the upgrade comes back through RecreatePod',
      desired('3.6.16'),
      observed([old(0), { n: 1, pod: 'none' }, old(2)]),
      { kind: 'RecreatePod', member: 'main-1', id: id(1) },
      'recreateMissingPods',
    ],
    [
      'a member whose Pod is still stopping is waited for',
      desired('3.6.16'),
      observed([old(0), old(1, { pod: 'terminating', runs: undefined }), old(2)]),
      { kind: 'Wait', reason: 'WaitingForDeletion' },
    ],
    [
      'an unfinished upgrade rolls back to 3.5.35 when the spec says so: upgraded members restart on 3.5',
      desired('3.5.35'),
      observed([old(0), fresh(1), old(2)]),
      { kind: 'UpgradeMember', member: 'main-1', from: '3.6.16', to: '3.5.35' },
    ],
    [
      "a downgrade 3.6 -> 3.5 of a finished upgrade first enables etcd's downgrade, touching no member",
      desired('3.5.35'),
      observed([fresh(0), fresh(1), fresh(2)]),
      { kind: 'EnableDowngrade', from: '3.6.16', to: '3.5.35', targetVersion: '3.5.0' },
      'downgradeGate',
    ],
    [
      'once etcd moved cluster and storage versions to 3.5, the downgrade restarts followers first like an upgrade',
      desired('3.5.35'),
      {
        ...observed([fresh(0), fresh(1), fresh(2)]),
        downgrade: { clusterVersion: '3.5.0', storageVersions: { 'main-1': '3.5.0' }, enabled: true },
      },
      { kind: 'UpgradeMember', member: 'main-1', from: '3.6.16', to: '3.5.35' },
      'upgradeMembers',
    ],
    [
      'while etcd still reports cluster version 3.6 the downgrade waits, restarting nothing',
      desired('3.5.35'),
      {
        ...observed([fresh(0), fresh(1), fresh(2)]),
        downgrade: { clusterVersion: '3.6.0', storageVersions: {}, enabled: true },
      },
      { kind: 'Wait', reason: 'WaitingForClusterVersion' },
      'downgradeGate',
    ],
    [
      'a downgrade to a 3.5 patch below the floor is refused and nothing is touched',
      desired('3.5.20'),
      observed([fresh(0), fresh(1), fresh(2)]),
      { kind: 'Wait', reason: 'UpgradePathRefused' },
      'upgradePathAllowed',
    ],
    [
      'members below 3.5.32 are refused 3.6, naming the patch to take first',
      desired('3.6.16'),
      observed([old(0, { runs: '3.5.20', image: '3.5.20' }), old(1, { runs: '3.5.20', image: '3.5.20' })]),
      {
        kind: 'Wait',
        reason: 'UpgradePathRefused',
        message: expect.stringMatching(/3\.5\.32 or later/) as string,
      },
    ],
    [
      'a refused path also holds back a member Pod that a heal would start on the refused version',
      desired('3.5.20'),
      observed([fresh(0), { n: 1, pod: 'none' }, fresh(2)]),
      { kind: 'Wait', reason: 'UpgradePathRefused' },
      'upgradePathAllowed',
    ],
    [
      'members on the spec version converge as before',
      desired('3.6.16'),
      observed([fresh(0), fresh(1), fresh(2)]),
      { kind: 'None', reason: 'Converged' },
    ],
    [
      'Pods whose image names no version are never restarted for an upgrade',
      desired('3.6.16'),
      observed([
        { n: 0, runs: '3.5.35' },
        { n: 1, runs: '3.5.35' },
        { n: 2, runs: '3.5.35' },
      ]),
      { kind: 'None', reason: 'Converged' },
    ],
    [
      'an upgrade to a version without an image waits as UnsupportedVersion before any Pod is deleted',
      desired('3.6.99', { versionKnown: false }),
      observed([fresh(0), fresh(1), fresh(2)]),
      { kind: 'Wait', reason: 'UnsupportedVersion' },
      'versionHasImage',
    ],
  ])('%s', (...row) => {
    const [, d, o, step, by] = row as Row;
    const decision = plan(d, o);
    expect(decision.step).toMatchObject(step);
    if (by) expect(decision.check).toBe(by);
  });
});

describe('the Upgrade operation', () => {
  const first: ActionStep = {
    kind: 'UpgradeMember',
    member: 'main-1',
    id: id(1),
    from: '3.5.35',
    to: '3.6.16',
  };
  const handOff: ActionStep = {
    kind: 'MoveLeader',
    from: { name: 'main-0', id: id(0) },
    to: { name: 'main-1', id: id(1) },
    reason: 'Upgrade',
    upgrade: { from: '3.5.35', to: '3.6.16' },
  };
  test('restarting a member and handing leadership over for it are Upgrade steps', () => {
    expect(operationFor(first, 3)).toBe('Upgrade');
    expect(operationFor(handOff, 3)).toBe('Upgrade');
  });
  test('an Upgrade recreates the Pod it deleted itself, and ends on a scale step', () => {
    expect(continuesOperation('Upgrade', { kind: 'RecreatePod', member: 'main-1', id: id(1) }, 3)).toBe(true);
    expect(continuesOperation('Upgrade', { kind: 'AddMember', member: 'main-3' }, 4)).toBe(false);
  });
  test('its summary and steps read as a person would say them', () => {
    expect(summarize('Upgrade', { namespace: 'default', name: 'main' }, 3, 3, first)).toBe(
      'upgrade default/main 3.5.35 -> 3.6.16',
    );
    expect(summarize('Upgrade', { namespace: 'default', name: 'main' }, 3, 3, handOff)).toBe(
      'upgrade default/main 3.5.35 -> 3.6.16',
    );
    expect(describeStep(first)).toBe(
      'restart member main-1 on 3.6.16 (it runs 3.5.35): delete its Pod, keep its claim',
    );
    expect(describeStep(handOff)).toBe(
      'move leadership from main-0 to main-1, which runs 3.6.16, before upgrading main-0',
    );
  });
});

describe('planUpgrade', () => {
  const m = (raftIndex?: string) => ({
    id: '1',
    name: 'main-1',
    ordinal: 1,
    isLearner: false,
    healthy: true,
    ready: true,
    ...(raftIndex !== undefined ? { raftIndex } : {}),
  });
  test('no member to upgrade means no upgrade step', () => {
    expect(
      planUpgrade({ target: '3.6.16', members: [{ ...m('1'), podVersion: '3.6.16', version: '3.6.16' }] }),
    ).toBe(undefined);
  });
});

describe('the Downgrade operation', () => {
  const enable: ActionStep = {
    kind: 'EnableDowngrade',
    from: '3.6.16',
    to: '3.5.35',
    targetVersion: '3.5.0',
  };
  const restart: ActionStep = {
    kind: 'UpgradeMember',
    member: 'main-1',
    id: id(1),
    from: '3.6.16',
    to: '3.5.35',
  };
  const handOff: ActionStep = {
    kind: 'MoveLeader',
    from: { name: 'main-0', id: id(0) },
    to: { name: 'main-1', id: id(1) },
    reason: 'Upgrade',
    upgrade: { from: '3.6.16', to: '3.5.35' },
  };
  test('enabling, restarting on a lower minor and handing leadership over for it are Downgrade steps', () => {
    expect(operationFor(enable, 3)).toBe('Downgrade');
    expect(operationFor(restart, 3)).toBe('Downgrade');
    expect(operationFor(handOff, 3)).toBe('Downgrade');
    expect(continuesOperation('Downgrade', restart, 3)).toBe(true);
    expect(continuesOperation('Downgrade', { kind: 'RecreatePod', member: 'main-1', id: id(1) }, 3)).toBe(
      true,
    );
    expect(continuesOperation('Upgrade', restart, 3)).toBe(false);
  });
  test('its summary reads "downgrade ns/name from -> to" from whichever step starts it', () => {
    for (const step of [enable, restart, handOff]) {
      expect(summarize('Downgrade', { namespace: 'default', name: 'main' }, 3, 3, step)).toBe(
        'downgrade default/main 3.6.16 -> 3.5.35',
      );
    }
    expect(describeStep(enable)).toBe(
      "validate and enable etcd's downgrade to 3.5.0 (members run 3.6.16, spec.version 3.5.35)",
    );
  });
});
