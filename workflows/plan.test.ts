// Every branch of the planner as a table: learners, leader choice, quorum guards, heal, pause and resume, zombies, orphans.
import {
  answeringMembers,
  awaitsAnAnswer,
  currentSize,
  describeStep,
  nextMemberName,
  operationFor,
  plan,
} from './plan';
import { continuesOperation, summarize } from './operations/registry';
import type { ActionStep, Desired, EtcdMemberView, KubeMemberView, Observed, Step, WaitReason } from './plan';

import { Reasons } from '../crds/conditions';

// ----- fixtures: a member is described by its ordinal and what differs from a healthy voter -----

type PodState = 'live' | 'notReady' | 'none' | 'terminating' | 'failed';
type ClaimState = 'kept' | 'none' | 'lost' | 'terminating';

interface M {
  n: number;
  learner?: boolean;
  started?: boolean;
  reachable?: boolean;
  raft?: string;
  pod?: PodState;
  claim?: ClaimState;
}

// Member ids above 2^53, as etcd hands them out.
const id = (n: number) => `1027665774393297${5400 + n}`;
const name = (n: number) => `main-${n}`;

function etcdMember(m: M): EtcdMemberView {
  return {
    id: id(m.n),
    name: name(m.n),
    isLearner: m.learner ?? false,
    started: m.started ?? true,
    reachable: m.reachable ?? true,
    raftIndex: m.raft ?? '1000',
  };
}

function kubeMember(
  n: number,
  pod: PodState = 'live',
  claim: ClaimState = 'kept',
): KubeMemberView | undefined {
  const k: KubeMemberView = { name: name(n) };
  if (pod !== 'none') {
    k.pod = {
      phase: pod === 'failed' ? 'Failed' : 'Running',
      ready: pod === 'live',
      terminating: pod === 'terminating',
    };
  }
  if (claim !== 'none') k.claim = { terminating: claim === 'terminating', dataLost: claim === 'lost' };
  return k.pod || k.claim ? k : undefined;
}

/** A seed Pod held in its restore init container, whose latest run failed as given. */
function restoring(
  n: number,
  restoreFailure: NonNullable<NonNullable<KubeMemberView['pod']>['restoreFailure']>,
): KubeMemberView {
  return {
    name: name(n),
    pod: { phase: 'Pending', ready: false, terminating: false, restoreFailure },
    claim: { terminating: false, dataLost: false },
  };
}

interface ClusterOptions {
  leader?: number;
  extraKube?: KubeMemberView[];
  recorded?: Partial<Observed['recorded']>;
}

function observed(members: M[], o: ClusterOptions = {}): Observed {
  return {
    etcd: {
      clusterId: '14841639068965178418',
      leaderId: o.leader === undefined ? id(members[0]?.n ?? 0) : id(o.leader),
      members: members.map(etcdMember),
    },
    kube: [...members.flatMap((m) => kubeMember(m.n, m.pod, m.claim) ?? []), ...(o.extraKube ?? [])],
    recorded: {
      clusterId: '14841639068965178418',
      members: members.map((m) => name(m.n)),
      paused: false,
      ...o.recorded,
    },
  };
}

// Without etcd's view: only Kubernetes objects, and what status recorded.
function unanswered(
  kube: (KubeMemberView | undefined)[],
  recorded: Partial<Observed['recorded']> = {},
): Observed {
  return {
    kube: kube.flatMap((k) => k ?? []),
    recorded: { clusterId: '14841639068965178418', members: [], paused: false, ...recorded },
  };
}

const desired = (replicas = 3, over: Partial<Desired> = {}): Desired => ({
  cluster: 'main',
  replicas,
  medium: '',
  versionKnown: true,
  ...over,
});

const three: M[] = [{ n: 0 }, { n: 1 }, { n: 2 }];
const neverCreated = { clusterId: undefined };

type Row = [string, Desired, Observed, Partial<Step> & { kind: Step['kind'] }, string?];

function check(rows: Row[]) {
  // Rest parameters keep Jest from taking a missing optional `by` for its `done` callback.
  test.each(rows)('%s', (...row) => {
    const [, d, o, step, by] = row as Row;
    const decision = plan(d, o);
    // A field given as undefined must be absent from the step (a seed started alone names no members).
    const absent = Object.keys(step).filter((k) => step[k as keyof typeof step] === undefined);
    expect(decision.step).toMatchObject(
      Object.fromEntries(Object.entries(step).filter(([, v]) => v !== undefined)),
    );
    for (const k of absent) expect(decision.step).not.toHaveProperty(k);
    if (by) expect(decision.check).toBe(by);
  });
}

// ----- the plan -----

describe('plan, when no member answers', () => {
  check([
    [
      'an EtcdCluster with nothing yet bootstraps its seed member main-0',
      desired(3),
      unanswered([], neverCreated),
      { kind: 'Bootstrap', member: 'main-0' },
    ],
    [
      'a bootstrap that died after creating the seed claim runs Bootstrap again on that claim',
      desired(3),
      unanswered([kubeMember(0, 'none')], neverCreated),
      { kind: 'Bootstrap', member: 'main-0' },
      'startPodsOnKeptData',
    ],
    [
      'a seed Pod that runs but does not answer yet is waited for',
      desired(3),
      unanswered([kubeMember(0, 'notReady')], neverCreated),
      { kind: 'Wait', reason: 'MemberNotReady' },
    ],
    [
      'a seed whose restore refused its snapshot (ChecksumMismatch) is reported as RestoreFailed and nothing else is started',
      desired(3),
      unanswered(
        [restoring(0, { reason: 'ChecksumMismatch', message: 'sha256 differs', permanent: true })],
        neverCreated,
      ),
      { kind: 'Wait', reason: 'RestoreFailed' },
      'reportRestoreFailure',
    ],
    [
      'a seed whose restore failed in a way a restart may fix (DestinationUnavailable) waits as MemberNotReady',
      desired(3),
      unanswered(
        [restoring(0, { reason: 'DestinationUnavailable', message: 'disk full', permanent: false })],
        neverCreated,
      ),
      { kind: 'Wait', reason: 'MemberNotReady' },
      'reportRestoreFailure',
    ],
    [
      'a cluster with a recorded id and no data left is not silently rebuilt empty',
      desired(3),
      unanswered([]),
      { kind: 'Wait', reason: 'AllMembersLost' },
    ],
    [
      'claims that are all marked data-lost count as no data left',
      desired(3),
      unanswered([kubeMember(0, 'none', 'lost')]),
      { kind: 'Wait', reason: 'AllMembersLost' },
    ],
    [
      'a Memory cluster whose every Pod is gone has lost everything',
      desired(3, { medium: 'Memory' }),
      unanswered([]),
      { kind: 'Wait', reason: 'AllMembersLost' },
    ],
    [
      'with the rebuild gate on, every recorded member gone and no backup: PermanentQuorumLoss says there is nothing to approve',
      desired(3, { recovery: { uid: 'u', approval: 'u', fromBackup: true } }),
      { ...unanswered([], { members: ['main-0', 'main-1', 'main-2'] }), lossFindings: { survivors: [] } },
      {
        kind: 'Wait',
        reason: 'PermanentQuorumLoss',
        message: expect.stringMatching(/no backup of this cluster .*nothing to approve/) as string,
      },
      'permanentQuorumLoss',
    ],
    [
      'with the rebuild gate on, every recorded member gone and a snapshot, unapproved: waits on the approval',
      desired(3, { recovery: { uid: 'u', fromBackup: true } }),
      {
        ...unanswered([kubeMember(0, 'none', 'lost')], { members: ['main-0', 'main-1', 'main-2'] }),
        lossFindings: {
          survivors: [],
          restorable: { snapshot: 's', revision: 9, takenAt: 'T', uri: 's3://b/s' },
        },
      },
      { kind: 'Wait', reason: 'PermanentQuorumLoss' },
      'permanentQuorumLoss',
    ],
    [
      'with the rebuild gate on, every recorded member gone, a snapshot and the approval: rebuild from it',
      desired(3, { recovery: { uid: 'u', approval: 'u', fromBackup: true } }),
      {
        ...unanswered([], { members: ['main-0', 'main-1', 'main-2'] }),
        lossFindings: {
          survivors: [],
          restorable: { snapshot: 's', revision: 9, takenAt: 'T', uri: 's3://b/s' },
        },
      },
      {
        kind: 'Rebuild',
        reason: 'QuorumLoss',
        source: { kind: 'Snapshot', snapshot: 's', revision: 9, takenAt: 'T' },
        gone: ['main-0', 'main-1', 'main-2'],
      },
      'permanentQuorumLoss',
    ],
    [
      'without the rebuild gate (a recorded history) the same loss stays AllMembersLost',
      desired(3, { recovery: { uid: 'u', approval: 'u' } }),
      unanswered([], { members: ['main-0', 'main-1', 'main-2'] }),
      { kind: 'Wait', reason: 'AllMembersLost' },
    ],
    [
      'a paused cluster with only its kept claim stays paused',
      desired(0),
      unanswered([kubeMember(2, 'none')], { paused: true, members: ['main-2'] }),
      { kind: 'None', reason: 'Paused' },
    ],
    [
      'pausing with one member Pod left stops it even if it does not answer',
      desired(0),
      unanswered([kubeMember(0, 'notReady')]),
      { kind: 'Pause', member: 'main-0' },
    ],
    [
      'pausing waits while the last member Pod is stopping',
      desired(0),
      unanswered([kubeMember(0, 'terminating')]),
      { kind: 'Wait', reason: 'WaitingForDeletion' },
    ],
    [
      'pausing with several Pods and no answer waits, since only a one-member cluster can be stopped safely',
      desired(0),
      unanswered([kubeMember(0), kubeMember(1)]),
      { kind: 'Wait', reason: 'MemberNotReady' },
    ],
    [
      'a paused cluster scaled back up resumes the member status recorded, not an orphan claim',
      desired(3),
      unanswered([kubeMember(0, 'none'), kubeMember(2, 'none')], { paused: true, members: ['main-2'] }),
      { kind: 'Resume', member: 'main-2' },
    ],
    [
      'a cluster that was not paused and lost every Pod at once heals the lowest kept member',
      desired(3),
      unanswered([kubeMember(0, 'none'), kubeMember(1, 'none'), kubeMember(2, 'none')], {
        members: ['main-0', 'main-1', 'main-2'],
      }),
      { kind: 'RecreatePod', member: 'main-0' },
    ],
    [
      'with some Pods running and no answer, a kept claim without a Pod gets its Pod back',
      desired(3),
      unanswered([kubeMember(0, 'notReady'), kubeMember(1, 'none'), kubeMember(2, 'failed')]),
      { kind: 'RecreatePod', member: 'main-1' },
    ],
    [
      'with no answer and a Pod being deleted, planning waits for the deletion',
      desired(3),
      unanswered([kubeMember(0, 'notReady'), kubeMember(1, 'terminating')]),
      { kind: 'Wait', reason: 'WaitingForDeletion' },
    ],
    [
      'bootstrap with an etcd version that has no image waits instead of starting a Pod',
      desired(3, { versionKnown: false }),
      unanswered([], neverCreated),
      { kind: 'Wait', reason: 'UnsupportedVersion' },
      'versionHasImage',
    ],
  ]);
});

// A brand-new cluster's initial members, started together (desired.bootstrapTogether, behind a patch in plan-now.ts).
const initial = ['main-0', 'main-1', 'main-2'];

/** A member of a bootstrap that starts its members together: its claim (and Pod) carry the membership. */
function together(n: number, pod: PodState = 'live', claim: ClaimState = 'kept', members = initial) {
  const k = kubeMember(n, pod, claim);
  return k && { ...k, initialMembers: members };
}

const fresh = (replicas = 3, over: Partial<Desired> = {}) =>
  desired(replicas, { bootstrapTogether: true, ...over });

describe('plan, a brand-new cluster starting its initial members together', () => {
  check([
    [
      'a brand-new cluster of three starts all three members together',
      fresh(3),
      unanswered([], neverCreated),
      { kind: 'Bootstrap', member: 'main-0', members: initial },
      'startInitialMembersTogether',
    ],
    [
      'an operator killed after the claims and the first Pod starts the rest with the same membership',
      fresh(3),
      unanswered([together(0, 'notReady'), together(1, 'none'), together(2, 'none')], neverCreated),
      { kind: 'Bootstrap', member: 'main-1', members: initial },
      'startInitialMembersTogether',
    ],
    [
      'an operator killed after the claims alone starts every Pod with the membership the claims carry',
      fresh(3),
      unanswered([together(0, 'none'), together(1, 'none'), together(2, 'none')], neverCreated),
      { kind: 'Bootstrap', member: 'main-0', members: initial },
      'startInitialMembersTogether',
    ],
    [
      'a spec.replicas changed half-way does not change the membership already started (5 asked, 3 started)',
      fresh(5),
      unanswered([together(0, 'notReady'), together(1, 'notReady'), together(2, 'none')], neverCreated),
      { kind: 'Bootstrap', member: 'main-2', members: initial },
      'startInitialMembersTogether',
    ],
    [
      'a spec.replicas lowered to 1 half-way still starts the three that began (it scales down once formed)',
      fresh(1),
      unanswered([together(0, 'notReady'), together(1, 'none'), together(2, 'none')], neverCreated),
      { kind: 'Bootstrap', member: 'main-1', members: initial },
      'startInitialMembersTogether',
    ],
    [
      'with every initial member started, the plan waits for a quorum of them to answer',
      fresh(3),
      unanswered([together(0, 'notReady'), together(1, 'notReady'), together(2, 'notReady')], neverCreated),
      { kind: 'Wait', reason: 'MemberNotReady' },
      'startInitialMembersTogether',
    ],
    [
      'an initial member whose Pod is being deleted is waited for (it starts again once gone)',
      fresh(3),
      unanswered(
        [together(0, 'notReady'), together(1, 'terminating'), together(2, 'notReady')],
        neverCreated,
      ),
      { kind: 'Wait', reason: 'WaitingForDeletion' },
      'startInitialMembersTogether',
    ],
    [
      'an initial member whose Pod never ran and is gone is just started again',
      fresh(3),
      unanswered([together(0, 'notReady'), together(1, 'none'), together(2, 'notReady')], neverCreated),
      { kind: 'Bootstrap', member: 'main-1', members: initial },
      'startInitialMembersTogether',
    ],
    [
      'a restore starts its seed alone and grows from it',
      fresh(3, { restore: true }),
      unanswered([], neverCreated),
      { kind: 'Bootstrap', member: 'main-0', members: undefined },
      'bootstrapWhenNothingExists',
    ],
    [
      'a cluster of one starts its seed as before',
      fresh(1),
      unanswered([], neverCreated),
      { kind: 'Bootstrap', member: 'main-0', members: undefined },
      'bootstrapWhenNothingExists',
    ],
    [
      'a seed started alone before the change (no membership recorded on it) is waited for and grows as before',
      fresh(3),
      unanswered([kubeMember(0, 'notReady')], neverCreated),
      { kind: 'Wait', reason: 'MemberNotReady' },
      'waitForMembersToAnswer',
    ],
    [
      'a claim left without a recorded membership is started as a seed alone, as before',
      fresh(3),
      unanswered([kubeMember(0, 'none')], neverCreated),
      { kind: 'Bootstrap', member: 'main-0', members: undefined },
      'startPodsOnKeptData',
    ],
    [
      'a cluster that once answered is never started together again',
      fresh(3),
      unanswered([together(0, 'none'), together(1, 'none'), together(2, 'none')], { members: initial }),
      { kind: 'RecreatePod', member: 'main-0' },
      'startPodsOnKeptData',
    ],
  ]);
});

describe('plan, initial members started together once etcd answers', () => {
  check([
    [
      'an initial member etcd lists whose Pod was never created is started on its claim as that member',
      desired(3),
      {
        ...observed([{ n: 0 }, { n: 1 }, { n: 2, started: false, reachable: false, pod: 'none' }]),
        recorded: { members: initial, paused: false },
      },
      { kind: 'RecreatePod', member: 'main-2', id: id(2) },
      'recreateMissingPods',
    ],
    [
      'an initial member that has not answered yet is waited for before anything else is done',
      desired(3, { auth: true }),
      observed([{ n: 0 }, { n: 1 }, { n: 2, started: false, reachable: false, pod: 'notReady' }]),
      { kind: 'Wait', reason: 'MemberNotReady' },
      'waitForUnreadyMembers',
    ],
  ]);
});

describe('plan, quorum guards', () => {
  check([
    [
      'a 3-member cluster with two Pods gone restores quorum by recreating a voter Pod first',
      desired(3),
      observed([{ n: 0 }, { n: 1, reachable: false, pod: 'none' }, { n: 2, reachable: false, pod: 'none' }]),
      { kind: 'RecreatePod', member: 'main-1', id: id(1) },
      'restoreQuorumFirst',
    ],
    [
      'without quorum a voter Pod is recreated before a learner Pod',
      desired(3),
      observed([
        { n: 0 },
        { n: 1, reachable: false },
        { n: 2, reachable: false, pod: 'none' },
        { n: 3, learner: true, reachable: false, pod: 'none' },
      ]),
      { kind: 'RecreatePod', member: 'main-2' },
    ],
    [
      'without quorum and no Pod to restart, nothing membership-related is tried',
      desired(1),
      observed([{ n: 0 }, { n: 1, reachable: false }, { n: 2, reachable: false }]),
      { kind: 'Wait', reason: 'QuorumLost' },
    ],
    [
      'without quorum a Pod that is being deleted is waited for',
      desired(3),
      observed([{ n: 0 }, { n: 1, reachable: false, pod: 'terminating' }, { n: 2, reachable: false }]),
      { kind: 'Wait', reason: 'WaitingForDeletion' },
    ],
    [
      'scale 2 -> 1 with the follower not answering cannot commit the removal',
      desired(1),
      observed([{ n: 0 }, { n: 1, reachable: false }]),
      { kind: 'Wait', reason: 'QuorumLost' },
    ],
    [
      'a 2-member cluster whose follower lost its data has no quorum to remove it with',
      desired(2),
      observed([{ n: 0 }, { n: 1, reachable: false, pod: 'none', claim: 'none' }]),
      { kind: 'Wait', reason: 'QuorumLost' },
    ],
    [
      'with the member-list rule, 2 of 4 voters answering their status is slow voters, not QuorumLost: it waits for them',
      desired(4, { quorumByMemberList: true }),
      observed([{ n: 0 }, { n: 1 }, { n: 2, reachable: false }, { n: 3, reachable: false }]),
      {
        kind: 'Wait',
        reason: 'MemberNotReady',
        message:
          "2 of 4 voters answered their status in time, 3 needed; etcd's linearizable member list answered, so a quorum holds; membership changes wait for the others",
      },
      'restoreQuorumFirst',
    ],
    [
      'with the member-list rule, too few voters answering still recreates a missing voter Pod first',
      desired(3, { quorumByMemberList: true }),
      observed([{ n: 0 }, { n: 1, reachable: false }, { n: 2, reachable: false, pod: 'none' }]),
      { kind: 'RecreatePod', member: 'main-2', id: id(2) },
      'restoreQuorumFirst',
    ],
    [
      'with the member-list rule, a scale-down with too few voters answering waits and removes nobody',
      desired(1, { quorumByMemberList: true }),
      observed([{ n: 0 }, { n: 1, reachable: false }, { n: 2, reachable: false }]),
      { kind: 'Wait', reason: 'MemberNotReady' },
      'restoreQuorumFirst',
    ],
    [
      'with the member-list rule and a quorum of voters answering, the rule changes nothing (scale-down proceeds)',
      desired(2, { quorumByMemberList: true }),
      observed([{ n: 0 }, { n: 1 }, { n: 2, reachable: false }]),
      { kind: 'RemoveMember', member: 'main-2', reason: 'ScaleDown' },
      'scaleDown',
    ],
    [
      'without the member-list rule (a history recorded before it), the same slow voters read as QuorumLost',
      desired(4),
      observed([{ n: 0 }, { n: 1 }, { n: 2, reachable: false }, { n: 3, reachable: false }]),
      {
        kind: 'Wait',
        reason: 'QuorumLost',
        message: '2 of 4 voters answer, 3 needed; no membership change can commit',
      },
      'restoreQuorumFirst',
    ],
    [
      'a data-lost member is kept while removing it would leave the rest without quorum',
      desired(3),
      observed([{ n: 0 }, { n: 1, reachable: false, pod: 'notReady' }, { n: 2, claim: 'lost' }]),
      { kind: 'Wait', reason: 'QuorumAtRisk' },
      'removeLostMembers',
    ],
  ]);
});

describe('plan, healing', () => {
  check([
    [
      'a member whose claim vanished is removed before anything else',
      desired(3),
      observed([{ n: 0 }, { n: 1, reachable: false, pod: 'none', claim: 'none' }, { n: 2 }]),
      { kind: 'RemoveMember', member: 'main-1', id: id(1), reason: 'DataLost' },
      'removeLostMembers',
    ],
    [
      'a member whose claim is marked data-lost is removed even while its Pod runs',
      desired(3),
      observed([{ n: 0 }, { n: 1, claim: 'lost' }, { n: 2 }]),
      { kind: 'RemoveMember', member: 'main-1', reason: 'DataLost' },
    ],
    [
      'a data-lost leader hands leadership to the most caught-up healthy voter first',
      desired(3),
      observed(
        [
          { n: 0, claim: 'lost', raft: '900' },
          { n: 1, raft: '880' },
          { n: 2, raft: '899' },
        ],
        { leader: 0 },
      ),
      {
        kind: 'MoveLeader',
        from: { name: 'main-0', id: id(0) },
        to: { name: 'main-2', id: id(2) },
        reason: 'DataLost',
      },
    ],
    [
      'a data-lost leader in a 2-member cluster moves leadership so the removal is a follower removal',
      desired(2),
      observed([{ n: 0, claim: 'lost' }, { n: 1 }], { leader: 0 }),
      { kind: 'MoveLeader', from: { name: 'main-0', id: id(0) }, to: { name: 'main-1', id: id(1) } },
    ],
    [
      'after the data-lost member is removed, its leftover Pod and claim are deleted',
      desired(3),
      observed([{ n: 0 }, { n: 2 }], { extraKube: [kubeMember(1, 'notReady', 'lost') as KubeMemberView] }),
      { kind: 'DeleteOrphan', member: 'main-1' },
      'deleteOrphans',
    ],
    [
      'after its old objects are gone, the lost member is re-added as a learner under its old name',
      desired(3),
      observed([{ n: 0 }, { n: 2 }]),
      { kind: 'AddMember', member: 'main-1' },
    ],
    [
      'a Memory member whose Pod is gone has lost its data and is removed',
      desired(3, { medium: 'Memory' }),
      observed([
        { n: 0, claim: 'none' },
        { n: 1, claim: 'none', pod: 'none', reachable: false },
        { n: 2, claim: 'none' },
      ]),
      { kind: 'RemoveMember', member: 'main-1', reason: 'DataLost' },
    ],
    [
      'a learner etcd knows but nobody created a claim or Pod for is a zombie and is removed',
      desired(4),
      observed([
        ...three,
        { n: 3, learner: true, started: false, reachable: false, pod: 'none', claim: 'none' },
      ]),
      { kind: 'RemoveMember', member: 'main-3', id: id(3), reason: 'Zombie' },
    ],
    [
      'a zombie learner goes before a data-lost voter, since removing it never touches quorum',
      desired(4),
      observed([
        { n: 0 },
        { n: 1, claim: 'lost' },
        { n: 2 },
        { n: 3, learner: true, started: false, reachable: false, pod: 'none', claim: 'none' },
      ]),
      { kind: 'RemoveMember', member: 'main-3', reason: 'Zombie' },
    ],
    [
      'a learner whose claim exists but whose Pod does not gets its Pod, finishing the join',
      desired(4),
      observed([...three, { n: 3, learner: true, started: false, reachable: false, pod: 'none' }]),
      { kind: 'RecreatePod', member: 'main-3', id: id(3) },
      'recreateMissingPods',
    ],
    [
      'a killed member Pod with its claim kept comes back as the same member',
      desired(3),
      observed([{ n: 0 }, { n: 1, reachable: false, pod: 'none' }, { n: 2 }]),
      { kind: 'RecreatePod', member: 'main-1', id: id(1) },
    ],
    [
      'an evicted (Failed) member Pod is replaced on its kept claim',
      desired(3),
      observed([{ n: 0 }, { n: 1, reachable: false, pod: 'failed' }, { n: 2 }]),
      { kind: 'RecreatePod', member: 'main-1' },
    ],
    [
      'a member Pod that is being deleted is waited for before it is recreated',
      desired(3),
      observed([{ n: 0 }, { n: 1, reachable: false, pod: 'terminating' }, { n: 2 }]),
      { kind: 'Wait', reason: 'WaitingForDeletion' },
      'waitForTerminatingPods',
    ],
    [
      'a Pod and claim left behind by a crash right after MemberRemove are deleted',
      desired(2),
      observed([{ n: 0 }, { n: 1 }], { extraKube: [kubeMember(2) as KubeMemberView] }),
      { kind: 'DeleteOrphan', member: 'main-2' },
    ],
    [
      'an orphan already being deleted is left alone and its name is not reused',
      desired(3),
      observed([{ n: 0 }, { n: 1 }], { extraKube: [kubeMember(2, 'none', 'terminating') as KubeMemberView] }),
      { kind: 'AddMember', member: 'main-3' },
    ],
    [
      'recreating a Pod under an etcd version with no image waits',
      desired(3, { versionKnown: false }),
      observed([{ n: 0 }, { n: 1, reachable: false, pod: 'none' }, { n: 2 }]),
      { kind: 'Wait', reason: 'UnsupportedVersion' },
    ],
  ]);
});

/**
 * main-3, a learner etcd lists as started that does not answer while its readiness checks pass: it waits on its own
 * publish (contracts/learner-restart.ts). `restarted`: the member id its claim records; `pod`/`claim`: overrides.
 */
function awaitingPublish(
  more: {
    restarted?: string;
    pod?: Partial<NonNullable<KubeMemberView['pod']>> | 'none';
    claim?: 'none';
  } = {},
): Observed {
  const o = observed([...three, { n: 3, learner: true, reachable: false, pod: 'notReady' }]);
  const learner = o.etcd?.members.find((m) => m.name === name(3));
  if (learner) learner.awaitingOwnPublish = true;
  o.kube = o.kube.map((k) => {
    if (k.name !== name(3)) return k;
    const { pod, claim, ...rest } = k;
    return {
      ...rest,
      ...(more.pod === 'none' || !pod ? {} : { pod: { ...pod, uid: 'uid-main-3', ...more.pod } }),
      ...(more.claim === 'none' || !claim
        ? {}
        : { claim: { ...claim, ...(more.restarted ? { restartedLearner: more.restarted } : {}) } }),
    };
  });
  return o;
}

describe('plan, a learner waiting on its own publish', () => {
  check([
    [
      'is restarted on its claim, its Pod named by uid',
      desired(5),
      awaitingPublish(),
      { kind: 'RestartLearner', member: 'main-3', id: id(3), podUid: 'uid-main-3' },
      'promoteLearner',
    ],
    [
      'is waited for once its claim records a restart of this learner',
      desired(5),
      awaitingPublish({ restarted: id(3) }),
      { kind: 'Wait', reason: 'LearnerCatchingUp' },
    ],
    [
      'is restarted when its claim records the restart of an earlier learner of that name',
      desired(5),
      awaitingPublish({ restarted: id(9) }),
      { kind: 'RestartLearner', member: 'main-3', id: id(3) },
    ],
    [
      'is waited for without a claim (Memory medium: its data would go with its Pod)',
      desired(5, { medium: 'Memory' }),
      awaitingPublish({ claim: 'none' }),
      { kind: 'Wait', reason: 'LearnerCatchingUp' },
    ],
    [
      'is waited for while its Pod is being deleted',
      desired(5),
      awaitingPublish({ pod: { terminating: true } }),
      { kind: 'Wait', reason: 'WaitingForDeletion' },
    ],
  ]);

  it('is restarted by the running ScaleUp, and Heal, Resume and Bootstrap take the step on too', () => {
    const step: ActionStep = { kind: 'RestartLearner', member: 'main-3', id: id(3), podUid: 'u' };
    expect(operationFor(step, 5)).toBe('ScaleUp');
    for (const op of ['ScaleUp', 'Heal', 'Resume', 'Bootstrap'] as const) {
      expect(continuesOperation(op, step, 5)).toBe(true);
    }
    expect(continuesOperation('ScaleDown', step, 3)).toBe(false);
  });

  it('is said in the step line', () => {
    expect(describeStep({ kind: 'RestartLearner', member: 'main-3', id: id(3), podUid: 'u' })).toMatch(
      /^restart learner main-3 on its claim: it applied the leader's snapshot, which already held its own publish/,
    );
  });
});

describe('plan, learners and scale up', () => {
  check([
    [
      'a learner that has caught up is promoted before anything else is added',
      desired(5),
      observed([...three, { n: 3, learner: true, raft: '950' }]),
      { kind: 'PromoteLearner', member: 'main-3', id: id(3) },
      'promoteLearner',
    ],
    [
      'a learner at exactly 90% of the leader is promoted',
      desired(4),
      observed([...three, { n: 3, learner: true, raft: '900' }]),
      { kind: 'PromoteLearner', member: 'main-3' },
    ],
    [
      'a learner behind the leader is waited for, and no second learner is added',
      desired(5),
      observed([...three, { n: 3, learner: true, raft: '899' }]),
      { kind: 'Wait', reason: 'LearnerCatchingUp' },
    ],
    [
      'a learner whose process has not joined yet is waited for',
      desired(4),
      observed([...three, { n: 3, learner: true, started: false, reachable: false, pod: 'notReady' }]),
      { kind: 'Wait', reason: 'LearnerCatchingUp' },
    ],
    [
      'a learner is not promoted when the leader is unknown',
      desired(4),
      observed([...three, { n: 3, learner: true }], { leader: 9 }),
      { kind: 'Wait', reason: 'LearnerCatchingUp' },
    ],
    [
      'scale up adds the lowest free ordinal as a learner',
      desired(5),
      observed(three),
      { kind: 'AddMember', member: 'main-3' },
      'scaleUp',
    ],
    [
      'scale up fills a gap in the ordinals',
      desired(3),
      observed([{ n: 0 }, { n: 2 }]),
      { kind: 'AddMember', member: 'main-1' },
    ],
    [
      'scale up waits while a member does not answer',
      desired(5),
      observed([{ n: 0 }, { n: 1, reachable: false, pod: 'notReady' }, { n: 2 }]),
      { kind: 'Wait', reason: 'MemberNotReady' },
      'waitForUnreadyMembers',
    ],
    [
      'scale up under an etcd version with no image waits',
      desired(5, { versionKnown: false }),
      observed(three),
      { kind: 'Wait', reason: 'UnsupportedVersion' },
    ],
  ]);
});

describe('plan, scale down and pause', () => {
  check([
    [
      'scale down removes the newest healthy member',
      desired(3),
      observed([...three, { n: 3 }, { n: 4 }]),
      { kind: 'RemoveMember', member: 'main-4', reason: 'ScaleDown' },
      'scaleDown',
    ],
    [
      'scale down prefers a member that does not answer over the newest',
      desired(3),
      observed([{ n: 0 }, { n: 1, reachable: false, pod: 'notReady' }, { n: 2 }, { n: 3 }]),
      { kind: 'RemoveMember', member: 'main-1', reason: 'ScaleDown' },
    ],
    [
      'scale down prefers a member whose Pod is gone to recreating it',
      desired(2),
      observed([{ n: 0 }, { n: 1, reachable: false, pod: 'none' }, { n: 2 }]),
      { kind: 'RemoveMember', member: 'main-1', reason: 'ScaleDown' },
    ],
    [
      'scale down removes a learner before any voter',
      desired(3),
      observed([...three, { n: 3, learner: true, raft: '10' }]),
      { kind: 'RemoveMember', member: 'main-3', reason: 'ScaleDown' },
    ],
    [
      'scale down never picks the leader while another member can go',
      desired(2),
      observed(three, { leader: 2 }),
      { kind: 'RemoveMember', member: 'main-1', reason: 'ScaleDown' },
    ],
    [
      'scale 2 -> 1 removes the follower, never the leader',
      desired(1),
      observed([{ n: 0 }, { n: 1 }], { leader: 1 }),
      { kind: 'RemoveMember', member: 'main-0', reason: 'ScaleDown' },
    ],
    [
      'pausing a 3-member cluster first removes members down to one',
      desired(0),
      observed(three),
      { kind: 'RemoveMember', member: 'main-2', reason: 'ScaleDown' },
    ],
    [
      'pausing a 1-member cluster stops its Pod and keeps its claim',
      desired(0),
      observed([{ n: 0 }]),
      { kind: 'Pause', member: 'main-0' },
      'pauseLastMember',
    ],
    [
      'pausing does not need the last member to be ready',
      desired(0),
      observed([{ n: 1, pod: 'notReady' }]),
      { kind: 'Pause', member: 'main-1' },
    ],
    [
      'a healthy cluster of the desired size needs nothing',
      desired(3),
      observed(three),
      { kind: 'None', reason: 'Converged' },
      'converged',
    ],
    [
      'a cluster of the desired size with a member not answering waits for it',
      desired(3),
      observed([{ n: 0 }, { n: 1 }, { n: 2, reachable: false, pod: 'notReady' }]),
      { kind: 'Wait', reason: 'MemberNotReady' },
    ],
    [
      'a started member with a name the operator never gave has no data the operator can see and is removed',
      desired(3),
      {
        ...observed(three),
        etcd: {
          clusterId: '1',
          leaderId: id(0),
          members: [...three.map(etcdMember), { ...etcdMember({ n: 9 }), name: 'stranger' }],
        },
      },
      { kind: 'RemoveMember', member: 'stranger', id: id(9), reason: 'DataLost' },
    ],
  ]);
});

// ----- helpers -----

describe('waits that watch for a member to answer', () => {
  const waitFor = (reason: WaitReason): Step => ({ kind: 'Wait', reason, message: '' });
  test.each<[string, Step, Observed, boolean, string[]]>([
    [
      'a learner whose Pod runs but has not joined yet',
      waitFor(Reasons.LearnerCatchingUp),
      observed([{ n: 0 }, { n: 1 }, { n: 2, learner: true, started: false, reachable: false }]),
      true,
      ['main-0', 'main-1'],
    ],
    [
      'a voter whose Pod runs but does not answer',
      waitFor(Reasons.MemberNotReady),
      observed([{ n: 0 }, { n: 1, reachable: false }, { n: 2 }]),
      true,
      ['main-0', 'main-2'],
    ],
    [
      'a seed starting: no etcd view yet, a Pod runs',
      waitFor(Reasons.MemberNotReady),
      unanswered([kubeMember(0)]),
      true,
      [],
    ],
    [
      'a learner that answers and only lags behind sleeps instead',
      waitFor(Reasons.LearnerCatchingUp),
      observed([{ n: 0 }, { n: 1 }, { n: 2, learner: true, raft: '10' }]),
      false,
      ['main-0', 'main-1', 'main-2'],
    ],
    [
      'a member that does not answer and has no Pod waits on the plan, not on an answer',
      waitFor(Reasons.MemberNotReady),
      observed([{ n: 0 }, { n: 1, reachable: false, pod: 'none' }, { n: 2 }]),
      false,
      ['main-0', 'main-2'],
    ],
    [
      'a wait for a deletion is not a wait for an answer',
      waitFor(Reasons.WaitingForDeletion),
      observed([{ n: 0 }, { n: 1, reachable: false }, { n: 2 }]),
      false,
      ['main-0', 'main-2'],
    ],
    [
      'quorum lost is left to the plan loop',
      waitFor(Reasons.QuorumLost),
      unanswered([kubeMember(0), kubeMember(1)]),
      false,
      [],
    ],
    [
      'an action is never a wait',
      { kind: 'AddMember', member: 'main-3' },
      observed(three),
      false,
      ['main-0', 'main-1', 'main-2'],
    ],
  ])('%s', (_name, step, o, awaits, answering) => {
    expect(awaitsAnAnswer(step, o)).toBe(awaits);
    expect(answeringMembers(o)).toEqual(answering);
  });
});

describe('member naming', () => {
  test.each([
    [[], 'main-0'],
    [['main-0', 'main-1'], 'main-2'],
    [['main-0', 'main-2'], 'main-1'],
    [['main-1', 'other-0', 'main-x'], 'main-0'],
  ])('with %j taken the next member is %s', (used, next) => {
    expect(nextMemberName('main', used)).toBe(next);
  });
});

describe('operations', () => {
  const remove = (reason: 'ScaleDown' | 'DataLost' | 'Zombie'): ActionStep => ({
    kind: 'RemoveMember',
    member: 'main-2',
    id: '2',
    reason,
  });
  test.each<[string, ActionStep, number, string]>([
    ['Bootstrap starts Bootstrap', { kind: 'Bootstrap', member: 'main-0' }, 3, 'Bootstrap'],
    ['AddMember starts ScaleUp', { kind: 'AddMember', member: 'main-3' }, 5, 'ScaleUp'],
    ['PromoteLearner starts ScaleUp', { kind: 'PromoteLearner', member: 'main-3', id: '3' }, 5, 'ScaleUp'],
    ['a scale-down removal starts ScaleDown', remove('ScaleDown'), 2, 'ScaleDown'],
    ['a removal toward replicas 0 starts Pause', remove('ScaleDown'), 0, 'Pause'],
    ['a data-lost removal starts Heal', remove('DataLost'), 3, 'Heal'],
    ['a zombie removal starts Heal even while pausing', remove('Zombie'), 0, 'Heal'],
    [
      'moving leadership for a scale down starts ScaleDown',
      { kind: 'MoveLeader', from: { name: 'a', id: '1' }, to: { name: 'b', id: '2' }, reason: 'ScaleDown' },
      1,
      'ScaleDown',
    ],
    ['RecreatePod starts Heal', { kind: 'RecreatePod', member: 'main-1' }, 3, 'Heal'],
    ['DeleteOrphan starts Heal', { kind: 'DeleteOrphan', member: 'main-4' }, 3, 'Heal'],
    ['Pause starts Pause', { kind: 'Pause', member: 'main-0' }, 0, 'Pause'],
    ['Resume starts Resume', { kind: 'Resume', member: 'main-0' }, 3, 'Resume'],
  ])('%s', (_name, step, replicas, operation) => {
    expect(operationFor(step, replicas)).toBe(operation);
  });

  test.each<[string, Parameters<typeof continuesOperation>[0], Step, number, boolean]>([
    ['Bootstrap goes on to add members', 'Bootstrap', { kind: 'AddMember', member: 'main-1' }, 3, true],
    [
      'Heal goes on to re-add the member it removed',
      'Heal',
      { kind: 'AddMember', member: 'main-1' },
      3,
      true,
    ],
    [
      'Resume goes on to grow the cluster',
      'Resume',
      { kind: 'PromoteLearner', member: 'main-1', id: '1' },
      3,
      true,
    ],
    ['ScaleUp ends when a heal is needed', 'ScaleUp', { kind: 'RecreatePod', member: 'main-1' }, 3, false],
    [
      'ScaleDown ends when the spec now asks for more',
      'ScaleDown',
      { kind: 'AddMember', member: 'main-3' },
      5,
      false,
    ],
    ['Pause continues its own removals', 'Pause', remove('ScaleDown'), 0, true],
    [
      'no operation continues with None',
      'ScaleUp',
      { kind: 'None', reason: 'Converged', message: '' },
      3,
      false,
    ],
    [
      'a Wait is not a step an operation takes',
      'ScaleUp',
      { kind: 'Wait', reason: 'LearnerCatchingUp', message: '' },
      3,
      false,
    ],
  ])('%s', (_name, operation, step, replicas, expected) => {
    expect(continuesOperation(operation, step, replicas)).toBe(expected);
  });

  const ref = { namespace: 'default', name: 'main' };
  test.each<[Parameters<typeof summarize>[0], number, number, ActionStep | undefined, string]>([
    ['ScaleUp', 3, 5, undefined, 'scale default/main 3 -> 5'],
    ['ScaleDown', 5, 3, undefined, 'scale default/main 5 -> 3'],
    ['Bootstrap', 0, 3, undefined, 'bootstrap default/main with 3 members'],
    ['Bootstrap', 0, 1, undefined, 'bootstrap default/main with 1 member'],
    ['Pause', 3, 0, undefined, 'pause default/main 3 -> 0'],
    ['Resume', 0, 3, undefined, 'resume default/main 0 -> 3'],
    [
      'Heal',
      3,
      3,
      { kind: 'RecreatePod', member: 'main-1' },
      'heal default/main: recreate the Pod of main-1 on its kept data',
    ],
    ['Heal', 3, 3, undefined, 'heal default/main'],
  ])('the %s summary from %i to %i reads as expected', (operation, from, to, first, text) => {
    expect(summarize(operation, ref, from, to, first)).toBe(text);
  });

  test.each<[Step, string]>([
    [{ kind: 'AddMember', member: 'main-4' }, 'add member main-4 as a learner'],
    [{ kind: 'PromoteLearner', member: 'main-4', id: '4' }, 'promote learner main-4 to voter'],
    [remove('DataLost'), 'remove member main-2 (its data is lost)'],
    [
      {
        kind: 'MoveLeader',
        from: { name: 'main-0', id: '0' },
        to: { name: 'main-1', id: '1' },
        reason: 'ScaleDown',
      },
      'move leadership from main-0 to main-1 before removing main-0',
    ],
    [
      { kind: 'Wait', reason: 'LearnerCatchingUp', message: 'learner main-4 is starting' },
      'wait (LearnerCatchingUp): learner main-4 is starting',
    ],
    [{ kind: 'Pause', member: 'main-0' }, 'stop main-0 and keep its claim'],
    [{ kind: 'Bootstrap', member: 'main-0' }, 'start seed member main-0'],
    [
      { kind: 'Bootstrap', member: 'main-1', members: ['main-0', 'main-1', 'main-2'] },
      'start the 3 initial members together (main-0, main-1, main-2)',
    ],
  ])('step %j reads "%s"', (step, text) => {
    expect(describeStep(step)).toBe(text);
  });

  test('the current size is what etcd lists, or the running Pods when etcd does not answer', () => {
    expect(currentSize(observed([...three, { n: 3, learner: true }]))).toBe(4);
    expect(
      currentSize(unanswered([kubeMember(0), kubeMember(1, 'none'), kubeMember(2, 'terminating')])),
    ).toBe(1);
  });
});

describe('plan, member Pods that cannot run', () => {
  const stuck = (
    n: number,
    reason: KubeMemberView['problem'] extends infer P ? (P extends { reason: infer R } ? R : never) : never,
    over: Partial<NonNullable<KubeMemberView['pod']>> = {},
  ): KubeMemberView => ({
    name: name(n),
    pod: { phase: 'Pending', ready: false, terminating: false, version: '3.6.1', ...over },
    claim: { terminating: false, dataLost: false },
    problem: { reason, message: `Pod ${name(n)}: ${reason}` },
  });
  const seedOnly = (k: KubeMemberView) => unanswered([k], neverCreated);
  const withJoiner = (k: KubeMemberView): Observed => {
    const o = observed([...three, { n: 3, learner: true, started: false, reachable: false }]);
    return { ...o, kube: [...o.kube.filter((x) => x.name !== name(3)), k] };
  };
  check([
    [
      "a seed that cannot pull its image is the wait's reason, in the kubelet's words",
      desired(3, { version: '3.6.1' }),
      seedOnly(stuck(0, 'ImagePullFailed')),
      { kind: 'Wait', reason: Reasons.ImagePullFailed, message: 'Pod main-0: ImagePullFailed' },
      'waitForMembersToAnswer/memberProblem',
    ],
    [
      'a joining learner that crash-loops is the reason the scale up waits',
      desired(4, { version: '3.6.1' }),
      withJoiner(stuck(3, 'MemberCrashLooping', { phase: 'Running' })),
      { kind: 'Wait', reason: Reasons.MemberCrashLooping },
      'promoteLearner/memberProblem',
    ],
    [
      "an unschedulable seed whose spec is unchanged keeps waiting with the scheduler's reason",
      desired(3, { version: '3.6.1' }),
      seedOnly(stuck(0, 'PodUnschedulable')),
      { kind: 'Wait', reason: Reasons.PodUnschedulable },
    ],
    [
      'once spec.version names another release, a seed that could not pull its image is replaced',
      desired(3, { version: '3.6.16' }),
      seedOnly(stuck(0, 'ImagePullFailed')),
      { kind: 'ReplacePod', member: 'main-0' },
      'replaceStuckPods',
    ],
    [
      'a Pod out of date with the spec that cannot be scheduled is replaced (the user fixed its resources)',
      desired(3, { version: '3.6.1' }),
      seedOnly(
        stuck(0, 'PodUnschedulable', {
          template: { upToDate: false, changed: ['resources'], hash: 'h', metadataCurrent: true },
        }),
      ),
      { kind: 'ReplacePod', member: 'main-0' },
    ],
    [
      'a joining member stuck on an old image is replaced before anything else, quorum untouched',
      desired(4, { version: '3.6.16' }),
      withJoiner(stuck(3, 'ImagePullFailed')),
      { kind: 'ReplacePod', member: 'main-3' },
      'replaceStuckPods',
    ],
    [
      'a crash-looping member is never replaced: its etcd ran, and its data and member id matter',
      desired(4, { version: '3.6.16' }),
      withJoiner(stuck(3, 'MemberCrashLooping', { phase: 'Running' })),
      { kind: 'Wait', reason: Reasons.MemberCrashLooping },
    ],
    [
      'the crash-looping seed of a cluster that never answered is replaced once the spec changes',
      desired(3, { version: '3.6.1' }),
      seedOnly(
        stuck(0, 'MemberCrashLooping', {
          phase: 'Running',
          template: { upToDate: false, changed: ['options'], hash: 'h', metadataCurrent: true },
        }),
      ),
      { kind: 'ReplacePod', member: 'main-0' },
    ],
    [
      'nothing is replaced while the new version has no image either',
      desired(3, { version: '3.6.99', versionKnown: false }),
      seedOnly(stuck(0, 'ImagePullFailed')),
      { kind: 'Wait', reason: Reasons.ImagePullFailed },
    ],
    [
      'an unsupported version says which version and what to do',
      desired(3, { version: '3.6.99', versionKnown: false }),
      unanswered([], neverCreated),
      {
        kind: 'Wait',
        reason: Reasons.UnsupportedVersion,
        message:
          'spec.version 3.6.99 names no etcd release this operator has an image for; set it to a supported release (docs/status.md lists them). Until then nothing is started: start seed member main-0 waits',
      },
      'versionHasImage',
    ],
  ]);

  test('a replaced Pod belongs to a Heal, which also starts the seed again', () => {
    const step: ActionStep = { kind: 'ReplacePod', member: 'main-0', why: 'x' };
    expect(operationFor(step, 3)).toBe('Heal');
    expect(continuesOperation('Heal', { kind: 'Bootstrap', member: 'main-0' }, 3)).toBe(true);
    expect(describeStep(step)).toContain('its claim is kept');
  });
});
