// Config rollout planning as tables: metadata in place, followers by ordinal, the leader last, the upgrade's gates, storage growth and its refusal; and its place in plan()'s chain.
import { Reasons } from '../crds/conditions';
import type { Desired, KubeMemberView, Observed } from './plan';
import { describeStep, operationFor, plan } from './plan';
import { continuesOperation, summarize } from './operations/registry';
import type { ClaimStorageObservation, PodTemplateObservation, RolloutMemberView } from './rollout-plan';
import { planRollout, planStorageGrowth } from './rollout-plan';

const id = (n: number) => `1027665774393297${5400 + n}`;
const name = (n: number) => `main-${n}`;
const current: PodTemplateObservation = { upToDate: true, changed: [], hash: 'h2', metadataCurrent: true };
const stale: PodTemplateObservation = {
  upToDate: false,
  changed: ['options'],
  hash: 'h2',
  metadataCurrent: true,
};
const staleMeta: PodTemplateObservation = { ...current, metadataCurrent: false };

interface M {
  n: number;
  template?: PodTemplateObservation | 'none';
  healthy?: boolean;
  ready?: boolean;
  raft?: string;
  learner?: boolean;
}

const member = (m: M): RolloutMemberView => ({
  id: id(m.n),
  name: name(m.n),
  ordinal: m.n,
  isLearner: m.learner ?? false,
  healthy: m.healthy ?? true,
  ready: m.ready ?? true,
  raftIndex: m.raft ?? '5000',
  ...(m.template === 'none' ? {} : { template: m.template ?? stale }),
});

describe('planRollout', () => {
  const cases: [string, M[], number, string | undefined][] = [
    [
      'every Pod matches the spec: nothing to do',
      [
        { n: 0, template: current },
        { n: 1, template: current },
      ],
      0,
      undefined,
    ],
    [
      'Pods not compared with a spec are never rolled',
      [
        { n: 0, template: 'none' },
        { n: 1, template: 'none' },
      ],
      0,
      undefined,
    ],
    ['followers first, lowest ordinal first', [{ n: 0 }, { n: 1 }, { n: 2 }], 0, 'RolloutMember main-1'],
    [
      'the next follower once the restarted one is back and caught up',
      [{ n: 0 }, { n: 1, template: current }, { n: 2 }],
      0,
      'RolloutMember main-2',
    ],
    [
      'the leader last, after moving leadership to a restarted voter',
      [{ n: 0 }, { n: 1, template: current }, { n: 2, template: current, raft: '5001' }],
      0,
      'MoveLeader main-0 -> main-2',
    ],
    [
      'a follower left over after the leader moved is restarted',
      [{ n: 0 }, { n: 1, template: current }, { n: 2, template: current }],
      1,
      'RolloutMember main-0',
    ],
    ['a one-member cluster restarts its only member', [{ n: 0 }], 0, 'RolloutMember main-0'],
    [
      'waits while the restarted member is not Ready',
      [{ n: 0 }, { n: 1, template: current, ready: false }, { n: 2 }],
      0,
      'Wait member main-1 restarted with the new spec, starting',
    ],
    [
      'waits while the restarted member is far behind the leader',
      [
        { n: 0, raft: '9000' },
        { n: 1, template: current, raft: '10' },
        { n: 2, raft: '9000' },
      ],
      0,
      'Wait member main-1 restarted with the new spec, catching up (raft index 10 of 9000)',
    ],
    [
      'takes no member down while another is unready',
      [{ n: 0 }, { n: 1 }, { n: 2, healthy: false }],
      0,
      'Wait main-2 is not ready; the rollout takes no member down until every member is',
    ],
    [
      'metadata is patched before anything restarts',
      [{ n: 0 }, { n: 1, template: staleMeta }],
      0,
      'UpdateMemberMetadata main-1',
    ],
    [
      'metadata is patched even while another member is unready',
      [
        { n: 0, template: staleMeta },
        { n: 1, template: current, healthy: false },
      ],
      0,
      'UpdateMemberMetadata main-0',
    ],
  ];
  test.each(cases)('%s', (_title, ms, leader, expected) => {
    const d = planRollout({ leaderId: id(leader), members: ms.map(member) });
    const text =
      d === undefined
        ? undefined
        : d.kind === 'Wait'
          ? `Wait ${d.message}`
          : d.kind === 'MoveLeader'
            ? `MoveLeader ${d.from.name} -> ${d.to.name}`
            : `${d.kind} ${d.member}`;
    expect(text).toBe(expected);
  });

  it('restarts nothing while the cluster is below its size, but still patches metadata', () => {
    expect(
      planRollout({ leaderId: id(0), belowSize: true, members: [member({ n: 0 }), member({ n: 1 })] }),
    ).toBeUndefined();
    expect(
      planRollout({
        leaderId: id(0),
        belowSize: true,
        members: [member({ n: 0, template: staleMeta }), member({ n: 1 })],
      }),
    ).toEqual({ kind: 'UpdateMemberMetadata', member: 'main-0' });
  });

  it('the restart step carries the wanted hash and what changed', () => {
    expect(planRollout({ leaderId: id(0), members: [member({ n: 0 }), member({ n: 1 })] })).toEqual({
      kind: 'RolloutMember',
      member: 'main-1',
      id: id(1),
      hash: 'h2',
      changed: ['options'],
    });
  });
});

describe('planStorageGrowth', () => {
  const claim = (n: number, requested: string, expansion: ClaimStorageObservation['expansion']) => ({
    member: name(n),
    ordinal: n,
    storage: {
      requested,
      expansion,
      ...(expansion === 'NoStorageClass' ? {} : { storageClassName: 'fast' }),
    },
  });
  it('grows the lowest ordinal claim that is smaller than the spec, by value not by spelling', () => {
    expect(
      planStorageGrowth({
        size: '2Gi',
        claims: [claim(0, '2048Mi', 'Allowed'), claim(1, '1Gi', 'Allowed'), claim(2, '1Gi', 'Allowed')],
      }),
    ).toEqual({ kind: 'ExpandClaim', member: 'main-1', from: '1Gi', to: '2Gi' });
  });
  it('nothing when every claim is big enough (a claim grown by hand beyond the spec is left alone)', () => {
    expect(
      planStorageGrowth({
        size: '1Gi',
        claims: [claim(0, '1Gi', 'NoStorageClass'), claim(1, '5Gi', 'Allowed')],
      }),
    ).toBeUndefined();
  });
  it('claims without an observation are not judged', () => {
    expect(planStorageGrowth({ size: '2Gi', claims: [{ member: 'main-0', ordinal: 0 }] })).toBeUndefined();
  });
  it('refuses clearly, naming each claim and why, when no claim that needs growing can grow', () => {
    const d = planStorageGrowth({
      size: '2Gi',
      claims: [claim(0, '1Gi', 'NoStorageClass'), claim(1, '1Gi', 'ClassForbids')],
    });
    expect(d).toEqual({
      kind: 'None',
      reason: Reasons.StorageExpansionRefused,
      message:
        'spec.storage.size 2Gi is not applied: data-main-0 (1Gi) has no StorageClass; data-main-1 (1Gi) has a StorageClass without allowVolumeExpansion (fast); Kubernetes grows only claims whose StorageClass allows volume expansion',
    });
  });
});

// ----- plan(): where the rollout sits in the chain -----

function observedOf(
  templates: (PodTemplateObservation | undefined)[],
  opts: { podVersions?: string[]; storage?: ClaimStorageObservation } = {},
): Observed {
  const kube: KubeMemberView[] = templates.map((t, n) => ({
    name: name(n),
    pod: {
      phase: 'Running',
      ready: true,
      terminating: false,
      version: opts.podVersions?.[n] ?? '3.6.16',
      ...(t ? { template: t } : {}),
    },
    claim: { terminating: false, dataLost: false, ...(opts.storage ? { storage: opts.storage } : {}) },
  }));
  return {
    etcd: {
      clusterId: '1',
      leaderId: id(0),
      members: templates.map((_t, n) => ({
        id: id(n),
        name: name(n),
        isLearner: false,
        started: true,
        reachable: true,
        raftIndex: '5000',
        version: opts.podVersions?.[n] ?? '3.6.16',
      })),
    },
    kube,
    recorded: { members: templates.map((_t, n) => name(n)), paused: false },
  };
}

const desired: Desired = {
  cluster: 'main',
  replicas: 3,
  medium: '',
  versionKnown: true,
  version: '3.6.16',
  storageSize: '1Gi',
};

describe('plan with rollouts', () => {
  it('an out-of-date member is restarted by a Rollout operation', () => {
    const d = plan(desired, observedOf([stale, stale, stale]));
    expect(d.check).toBe('rolloutMembers');
    expect(d.step.kind).toBe('RolloutMember');
    if (d.step.kind === 'Wait' || d.step.kind === 'None') throw new Error('expected an action');
    expect(operationFor(d.step, 3)).toBe('Rollout');
    expect(summarize('Rollout', { namespace: 'db', name: 'main' }, 3, 3, d.step)).toBe(
      'roll out db/main: options changed',
    );
    expect(describeStep(d.step)).toBe(
      'restart member main-1 with the new spec (options changed): delete its Pod, keep its claim',
    );
  });
  it('a version change is rolled by the upgrade, not a second time by the rollout', () => {
    const d = plan({ ...desired, version: '3.6.17' }, observedOf([stale, stale, stale]));
    expect(d.check).toBe('upgradeMembers');
    expect(d.step.kind).toBe('UpgradeMember');
  });
  it('the Rollout operation brings back the member it stopped and takes its own leader hand-off', () => {
    expect(continuesOperation('Rollout', { kind: 'RecreatePod', member: 'main-1', id: id(1) }, 3)).toBe(true);
    expect(
      continuesOperation(
        'Rollout',
        {
          kind: 'MoveLeader',
          from: { name: 'main-0', id: id(0) },
          to: { name: 'main-1', id: id(1) },
          reason: 'Rollout',
          changed: ['resources'],
        },
        3,
      ),
    ).toBe(true);
    expect(continuesOperation('Rollout', { kind: 'AddMember', member: 'main-3' }, 3)).toBe(false);
  });
  it('without an image for spec.version nothing is taken down', () => {
    const d = plan({ ...desired, versionKnown: false }, observedOf([stale, stale, stale]));
    expect(d.step.kind).not.toBe('RolloutMember');
  });
  it('an observation without templates (recorded before rollouts) converges as before', () => {
    expect(plan(desired, observedOf([undefined, undefined, undefined])).check).toBe('converged');
  });
  it('storage growth is planned once everything else is done', () => {
    const d = plan(
      { ...desired, storageSize: '2Gi' },
      observedOf([current, current, current], {
        storage: { requested: '1Gi', expansion: 'Allowed', storageClassName: 'fast' },
      }),
    );
    expect(d).toEqual({
      check: 'growStorage',
      step: { kind: 'ExpandClaim', member: 'main-0', from: '1Gi', to: '2Gi' },
    });
  });
  it('a refused storage growth holds nothing back: a scale up still happens first', () => {
    const observed = observedOf([current, current], {
      storage: { requested: '1Gi', expansion: 'NoStorageClass' },
    });
    expect(plan({ ...desired, storageSize: '2Gi' }, observed).step.kind).toBe('AddMember');
    const done = plan({ ...desired, replicas: 2, storageSize: '2Gi' }, observed);
    expect(done.check).toBe('growStorage');
    expect(done.step).toMatchObject({ kind: 'None', reason: Reasons.StorageExpansionRefused });
  });
  it('a member short of the spec is added before any restart (a Memory member a restart lost is replaced first)', () => {
    const d = plan({ ...desired, medium: 'Memory' }, observedOf([stale, stale]));
    expect(d.step.kind).toBe('AddMember');
  });
  it('a Memory cluster has no claims to grow', () => {
    const observed = observedOf([current], { storage: { requested: '1Gi', expansion: 'Allowed' } });
    expect(plan({ ...desired, replicas: 1, medium: 'Memory', storageSize: '2Gi' }, observed).check).toBe(
      'converged',
    );
  });
});
