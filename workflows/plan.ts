// Decides the next step for one EtcdCluster from desired and observed state: one membership change per step, never one that costs quorum.
//
// Pure and sandbox-safe: no I/O, no clock, no randomness, so the workflow may call it at any point and a
// replay makes the same decision. The decision is an ordered chain of named checks (after cert-manager's
// certificate policy chain): the first check with an opinion wins, and its name travels with the step so
// the Temporal history says why each step was taken.
import type { EtcdMemberObservation, EtcdObservation, PodPhase } from '../contracts/observation';
import type { MemberProblem } from '../contracts/member-problems';
import { Reasons } from '../crds/conditions';
import type { OperationType, StorageMedium } from '../crds/etcd-cluster';
import { memberName, memberOrdinal } from '../crds/labels';
import type { DefragConfig, DefragStep } from './defrag-plan';
import { defragTrigger } from './defrag-plan';
import type { UpgradeLeaderStep, UpgradeMemberStep } from './upgrade-plan';
import { planUpgrade } from './upgrade-plan';
import { upgradePath } from './upgrade-path';
import type { DowngradeObservation, EnableDowngradeStep } from './downgrade-plan';
import { lowersMinor, planDowngradeGate } from './downgrade-plan';
import type {
  ClaimStorageObservation,
  ExpandClaimStep,
  PodTemplateObservation,
  RolloutLeaderStep,
  RolloutMemberStep,
  UpdateMemberMetadataStep,
} from './rollout-plan';
import { describeRolloutStep, planRollout, planStorageGrowth } from './rollout-plan';
import type { AuthWaitReason, EnableAuthStep, RotateAuthStep } from './auth-plan';
import { authBlocked, planAuth, planAuthRotation } from './auth-plan';
import type { AuthObservation } from '../contracts/auth';
import { canRemove, leaderSuccessor, learnerCaughtUp, quorum } from './cluster-state';

// ---------------------------------------------------------------------------------------------------
// Inputs

/** What the spec asks for, reduced to what planning needs. */
export interface Desired {
  /** The EtcdCluster's name; members are `<cluster>-<ordinal>`. */
  cluster: string;
  /** spec.replicas; 0 means paused (the last member's claim is kept, its Pod stopped). */
  replicas: number;
  /** spec.storage.medium: with Memory, a member's data lives exactly as long as its Pod. */
  medium: StorageMedium;
  /** Whether an image exists for spec.version; without one no Pod is started. */
  versionKnown: boolean;
  /** spec.version; members whose Pod runs another version are upgraded (absent: no upgrade planning). */
  version?: string;
  /** spec.storage.size; claims smaller than it are grown where their class allows (absent: no growth planning). */
  storageSize?: string;
  /** spec.auth is set: root must exist with the Secret's password and auth be on (workflows/auth-plan.ts). */
  auth?: boolean;
  /** spec.maintenance.defrag with the schedule's due state (absent: only a NOSPACE alarm starts a Defrag). */
  defrag?: DefragConfig;
}

/** One member as etcd's member list and its own status describe it (the observer's type, see contracts/observation.ts). */
export type EtcdMemberView = EtcdMemberObservation;

/** etcd's view of the cluster: present only when a linearizable member list succeeded (so quorum existed). */
export type EtcdView = EtcdObservation;

export type { PodPhase };

/** What Kubernetes holds for one member name: the Pod and claim labelled with it, either possibly absent. */
export interface KubeMemberView {
  name: string;
  /** What keeps this member from running that the user must act on (image, crash loop, scheduling, claim). */
  problem?: MemberProblem;
  /** restoreFailure: the seed's restore init container failed on its latest run; permanent when no restart can fix it. */
  pod?: {
    phase: PodPhase;
    ready: boolean;
    terminating: boolean;
    restoreFailure?: { reason: string; message: string; permanent: boolean };
    /** The etcd version of the Pod's image (from its tag), when it has one. */
    version?: string;
    /** Whether the Pod runs the spec's template (workflows/rollout-plan.ts); absent when not compared. */
    template?: PodTemplateObservation;
  };
  /**
   * `dataLost` is the observer's verdict that the claim cannot hold the member's data: the claim carries
   * the etcd.conductor.dev/data-lost annotation, or it is not the claim the member started on.
   */
  claim?: { terminating: boolean; dataLost: boolean; storage?: ClaimStorageObservation };
}

export interface Observed {
  /** Absent when no member answered a member list: nothing runs yet, the cluster is paused, or quorum is gone. */
  etcd?: EtcdView;
  /** Every member name that has a Pod or a claim of this cluster. */
  kube: KubeMemberView[];
  /**
   * What status remembers: the cluster id once etcd reported one, and the names of the members it last
   * listed, and whether it showed the cluster paused (Available=False, reason Paused). Lets planning
   * tell "never created" from "all data gone", resume the member that really was the last one, and call
   * restarting a stopped cluster Resume only when the user paused it.
   */
  recorded: { clusterId?: string; members: string[]; paused: boolean };
  /** etcd's cluster/storage versions and downgrade state; read only by a Downgrade operation (workflows/downgrade-plan.ts). */
  downgrade?: DowngradeObservation;
  /** Every member refused the TLS handshake with the operator (contracts/observation.ts): members run, but say nothing. */
  etcdRefused?: string;
  /** What etcd says about its auth; observed only for a cluster whose spec has auth. */
  auth?: AuthObservation;
}

// ---------------------------------------------------------------------------------------------------
// Outputs

export type RemoveReason = 'ScaleDown' | 'DataLost' | 'Zombie';

export interface MemberRef {
  name: string;
  id: string;
}

/** Waits on a member Pod that cannot run until something outside the operator changes (activities/member-problems.ts). */
export type MemberProblemWaitReason =
  | typeof Reasons.ImagePullFailed
  | typeof Reasons.MemberCrashLooping
  | typeof Reasons.PodUnschedulable
  | typeof Reasons.ClaimPending;

export const MEMBER_PROBLEM_REASONS: readonly string[] = [
  Reasons.ImagePullFailed,
  Reasons.MemberCrashLooping,
  Reasons.PodUnschedulable,
  Reasons.ClaimPending,
];

/** The reasons a plan may wait for; each is also a Progressing reason (see docs/status.md). */
export type WaitReason =
  | typeof Reasons.LearnerCatchingUp
  | typeof Reasons.MemberNotReady
  | typeof Reasons.QuorumLost
  | typeof Reasons.QuorumAtRisk
  | typeof Reasons.WaitingForDeletion
  | typeof Reasons.UnsupportedVersion
  | MemberProblemWaitReason
  | typeof Reasons.AllMembersLost
  | typeof Reasons.RestoreFailed
  | typeof Reasons.UpgradePathRefused
  | typeof Reasons.WaitingForClusterVersion
  | AuthWaitReason
  | typeof Reasons.TLSTrustBroken;

export type Step =
  /** Create the seed member's claim and Pod with `--initial-cluster-state new`; on a kept data dir etcd ignores that flag, so this is retry-safe. */
  | { kind: 'Bootstrap'; member: string }
  /** Create claim and Pod for `member` and MemberAddAsLearner it; the next plan promotes it once caught up. */
  | { kind: 'AddMember'; member: string }
  | { kind: 'PromoteLearner'; member: string; id: string }
  /** MemberRemove, then delete the Pod and claim (a crash in between leaves an orphan, which a later plan deletes). */
  | { kind: 'RemoveMember'; member: string; id: string; reason: RemoveReason }
  /** Hand leadership from a member that is about to be removed (for `reason`) to a healthy voter. */
  | { kind: 'MoveLeader'; from: MemberRef; to: MemberRef; reason: RemoveReason }
  /** Start a new Pod on the member's kept claim: the same member comes back with its data. */
  | { kind: 'RecreatePod'; member: string; id?: string }
  /** Delete the Pod and claim of a name etcd does not list. */
  | { kind: 'DeleteOrphan'; member: string }
  /**
   * Delete a Pod that never ran etcd (no image, never scheduled) and that the spec no longer describes; the
   * claim stays, and RecreatePod or Bootstrap starts it again from the spec. `why` is the problem it had.
   */
  | { kind: 'ReplacePod'; member: string; why: string }
  /** Stop the last member's Pod and keep its claim. */
  | { kind: 'Pause'; member: string }
  /** Start the kept member's Pod again; it comes back with the same cluster id and data. */
  | { kind: 'Resume'; member: string }
  /** Restart a member on spec.version: delete its Pod; RecreatePod brings it back on its claim and member id. */
  | UpgradeMemberStep
  /** Hand leadership to an upgraded voter before the leader itself is upgraded (last). */
  | UpgradeLeaderStep
  /** Validate and enable etcd's downgrade to spec.version's minor before any member restarts on it. */
  | EnableDowngradeStep
  /** Config rollout (workflows/rollout-plan.ts): restart an out-of-date member, hand leadership away first, patch metadata, grow a claim. */
  | RolloutMemberStep
  | RolloutLeaderStep
  | UpdateMemberMetadataStep
  | ExpandClaimStep
  /** Make sure etcd's root user has the Secret's password and the root role, and auth is on. */
  | EnableAuthStep
  /** Defragment members one at a time (workflows/defrag-plan.ts), clearing NOSPACE first when it is raised. */
  | DefragStep
  /** Apply the Secret's changed root password to etcd with the applied copy's (workflows/auth-plan.ts). */
  | RotateAuthStep
  | { kind: 'Wait'; reason: WaitReason; message: string }
  | {
      kind: 'None';
      reason: typeof Reasons.Converged | typeof Reasons.Paused | typeof Reasons.StorageExpansionRefused;
      message: string;
    };

export type StepKind = Step['kind'];
export type ActionStep = Exclude<Step, { kind: 'Wait' | 'None' }>;

/** A step and the name of the check that chose it. */
export interface Decision {
  check: string;
  step: Step;
}

// ---------------------------------------------------------------------------------------------------
// Classification

/**
 * Where one etcd member stands once its Kubernetes objects are taken into account:
 * - running:     its Pod exists (healthy or not yet);
 * - podMissing:  its data survives (claim kept) but no live Pod runs it: recreate the Pod, same member;
 * - terminating: its Pod is being deleted: wait for it to go before starting another;
 * - lost:        it has started once but its data is gone (claim missing or marked, or a Memory Pod gone):
 *                it must be removed and a fresh member added, never restarted on empty data under its id;
 * - zombie:      it never started and nothing can run it (no Pod, no claim), e.g. MemberAddAsLearner
 *                succeeded and the claim and Pod were never created: remove it, a later AddMember redoes it.
 */
export type MemberState = 'running' | 'podMissing' | 'terminating' | 'lost' | 'zombie';

interface Member extends EtcdMemberView {
  state: MemberState;
  healthy: boolean;
  ordinal: number;
}

export function podLive(k: KubeMemberView | undefined): boolean {
  const pod = k?.pod;
  return pod !== undefined && !pod.terminating && pod.phase !== 'Failed' && pod.phase !== 'Succeeded';
}

export function dataKept(k: KubeMemberView | undefined, medium: StorageMedium): boolean {
  if (medium === 'Memory') return podLive(k);
  return k?.claim !== undefined && !k.claim.terminating && !k.claim.dataLost;
}

export function memberState(
  m: EtcdMemberView,
  k: KubeMemberView | undefined,
  medium: StorageMedium,
): MemberState {
  const kept = dataKept(k, medium);
  if (m.started && !kept) return 'lost';
  if (podLive(k)) return 'running';
  if (k?.pod?.terminating) return 'terminating';
  if (kept) return 'podMissing';
  return 'zombie';
}

// Names the operator did not give sort last, so they are never preferred as "lowest" and go first as "newest".
function ordinalFor(cluster: string, name: string): number {
  return memberOrdinal(cluster, name) ?? Number.MAX_SAFE_INTEGER;
}

const byOrdinal = <T extends { ordinal: number }>(a: T, b: T) => a.ordinal - b.ordinal;
const newestFirst = <T extends { ordinal: number }>(a: T, b: T) => b.ordinal - a.ordinal;

/**
 * The lowest ordinal no etcd member and no Pod or claim uses. Lowest-free keeps names dense like a
 * StatefulSet's, so "newest" is "highest ordinal" and a replaced member gets its old name back once the
 * old objects are gone; names still being deleted count as used, so a new member never inherits them.
 */
export function nextMemberName(cluster: string, used: Iterable<string>): string {
  const taken = new Set<number>();
  for (const name of used) {
    const ordinal = memberOrdinal(cluster, name);
    if (ordinal !== undefined) taken.add(ordinal);
  }
  let ordinal = 0;
  while (taken.has(ordinal)) ordinal++;
  return memberName(cluster, ordinal);
}

/** Members the cluster has now: etcd's count when it answers, else the member Pods that run. */
export function currentSize(observed: Observed): number {
  if (observed.etcd) return observed.etcd.members.length;
  return observed.kube.filter((k) => podLive(k)).length;
}

// ---------------------------------------------------------------------------------------------------
// The chain

interface WithEtcd {
  desired: Desired;
  observed: Observed;
  etcd: EtcdView;
  /** Membership target: replicas, but at least one, since pausing shrinks to one member and then stops it. */
  target: number;
  members: Member[];
  voters: Member[];
  learners: Member[];
  leader: Member | undefined;
  hasQuorum: boolean;
}

type Check<C> = { name: string; run: (c: C) => Step | undefined };

const wait = (reason: WaitReason, message: string): Step => ({ kind: 'Wait', reason, message });

function removeOrMoveLeader(c: WithEtcd, candidates: Member[], reason: RemoveReason): Step | undefined {
  const removable = candidates.filter((m) => canRemove(c.members, m.id));
  const nonLeader = removable.find((m) => m.id !== c.etcd.leaderId);
  if (nonLeader) return { kind: 'RemoveMember', member: nonLeader.name, id: nonLeader.id, reason };
  const leader = removable.find((m) => m.id === c.etcd.leaderId);
  if (leader) {
    // Removing the leader forces an election and, in a 2-member cluster, may strand the follower;
    // MoveLeader first so the removal is an ordinary follower removal.
    const to = leaderSuccessor(
      c.voters.filter((m) => m.healthy),
      leader,
    );
    if (to) {
      return {
        kind: 'MoveLeader',
        from: { name: leader.name, id: leader.id },
        to: { name: to.name, id: to.id },
        reason,
      };
    }
  }
  return undefined;
}

/**
 * A Pod that never ran etcd (its image cannot be pulled, or it was never scheduled) while the spec now asks
 * for another image or template: the user fixed the spec, so the stuck Pod goes and is started again from it.
 * Deleting it costs nothing: its etcd never started in it, and its claim (the member's data) is kept.
 */
function replaceStuckPod(
  desired: Desired,
  kube: readonly KubeMemberView[],
  neverAnswered = false,
): Step | undefined {
  if (!desired.versionKnown) return undefined;
  // A crash-looping etcd did run: only the seed of a cluster that never answered may go (it formed nothing).
  const replaceable = (reason: string | undefined) =>
    reason === Reasons.ImagePullFailed ||
    reason === Reasons.PodUnschedulable ||
    (neverAnswered && reason === Reasons.MemberCrashLooping);
  const stuck = kube
    .filter((k) => podLive(k) && replaceable(k.problem?.reason))
    .filter(
      (k) =>
        k.pod?.template?.upToDate === false ||
        (desired.version !== undefined && k.pod?.version !== undefined && k.pod.version !== desired.version),
    )
    .sort((a, b) => ordinalFor(desired.cluster, a.name) - ordinalFor(desired.cluster, b.name))[0];
  return stuck && { kind: 'ReplacePod', member: stuck.name, why: stuck.problem?.message ?? 'it cannot run' };
}

const withEtcdChain: Check<WithEtcd>[] = [
  {
    // First: deleting a Pod whose etcd never started changes no vote, and its fresh Pod may be what quorum needs.
    name: 'replaceStuckPods',
    run: (c) => replaceStuckPod(c.desired, c.observed.kube),
  },
  {
    // Without quorum no membership change can commit; the only safe help is to run Pods whose data survives.
    name: 'restoreQuorumFirst',
    run: (c) => {
      if (c.hasQuorum) return undefined;
      const missing = c.members.filter((m) => m.state === 'podMissing').sort(byOrdinal);
      const voter = missing.find((m) => !m.isLearner) ?? missing[0];
      if (voter) return { kind: 'RecreatePod', member: voter.name, id: voter.id };
      if (c.members.some((m) => m.state === 'terminating')) {
        return wait(Reasons.WaitingForDeletion, 'a member Pod is being deleted; quorum needs it back');
      }
      const healthy = c.voters.filter((m) => m.healthy).length;
      return wait(
        Reasons.QuorumLost,
        `${healthy} of ${c.voters.length} voters answer, ${quorum(c.voters.length)} needed; no membership change can commit`,
      );
    },
  },
  {
    // Remove-before-add when replacing: a fresh member under the old id would claim raft state it lacks.
    // Learners first (removing one never touches quorum), then zombies, then members whose data is lost.
    name: 'removeLostMembers',
    run: (c) => {
      const rank = (m: Member) => (m.isLearner ? 0 : m.state === 'zombie' ? 1 : 2);
      const gone = c.members
        .filter((m) => m.state === 'lost' || m.state === 'zombie')
        .sort((a, b) => rank(a) - rank(b) || a.ordinal - b.ordinal);
      const first = gone[0];
      if (!first) return undefined;
      const reason: RemoveReason = first.state === 'lost' ? 'DataLost' : 'Zombie';
      return (
        removeOrMoveLeader(c, [first], reason) ??
        wait(Reasons.QuorumAtRisk, `${first.name} must be removed, but removing it now would cost quorum`)
      );
    },
  },
  {
    // Scale down prefers what costs least: a learner, then a member that is not healthy, then the newest.
    name: 'scaleDown',
    run: (c) => {
      if (c.members.length <= c.target) return undefined;
      const rank = (m: Member) => (m.isLearner ? 0 : m.healthy ? 2 : 1);
      const candidates = [...c.members].sort((a, b) => rank(a) - rank(b) || newestFirst(a, b));
      return (
        removeOrMoveLeader(c, candidates, 'ScaleDown') ??
        wait(
          Reasons.QuorumAtRisk,
          `no member can be removed without costing quorum (${c.members.length} -> ${c.target})`,
        )
      );
    },
  },
  {
    name: 'recreateMissingPods',
    run: (c) => {
      const m = c.members.filter((x) => x.state === 'podMissing').sort(byOrdinal)[0];
      return m && { kind: 'RecreatePod', member: m.name, id: m.id };
    },
  },
  {
    name: 'waitForTerminatingPods',
    run: (c) => {
      const m = c.members.find((x) => x.state === 'terminating');
      return m && wait(Reasons.WaitingForDeletion, `the Pod of ${m.name} is being deleted`);
    },
  },
  {
    // Only with quorum is the member list linearizable, so a name missing from it really is not a member
    // (a lagging member's view could miss a learner added a moment ago). Objects already being deleted
    // are left alone; their names stay taken until they are gone.
    name: 'deleteOrphans',
    run: (c) => {
      const names = new Set(c.members.map((m) => m.name));
      const orphan = c.observed.kube
        .filter((k) => !names.has(k.name))
        .filter((k) => (k.pod && !k.pod.terminating) || (k.claim && !k.claim.terminating))
        .sort((a, b) => ordinalFor(c.desired.cluster, a.name) - ordinalFor(c.desired.cluster, b.name))[0];
      return orphan && { kind: 'DeleteOrphan', member: orphan.name };
    },
  },
  {
    // A learner is promoted before anything else is added; etcd allows one learner and so do we.
    name: 'promoteLearner',
    run: (c) => {
      const learner = [...c.learners].sort(byOrdinal)[0];
      if (!learner) return undefined;
      if (learner.healthy && learnerCaughtUp(learner.raftIndex, c.leader?.raftIndex)) {
        return { kind: 'PromoteLearner', member: learner.name, id: learner.id };
      }
      return wait(
        Reasons.LearnerCatchingUp,
        !learner.started
          ? `learner ${learner.name} is starting`
          : learner.reachable
            ? `learner ${learner.name} at raft index ${learner.raftIndex ?? '?'} of ${c.leader?.raftIndex ?? '?'}`
            : // No index to show, and the leader's own grows: a message that changed with it would rewrite status.
              `learner ${learner.name} does not answer`,
      );
    },
  },
  {
    // Pausing stops the one member left; its claim keeps the data and the cluster id for Resume.
    name: 'pauseLastMember',
    run: (c) => {
      if (c.desired.replicas !== 0 || c.members.length !== 1) return undefined;
      const last = c.members[0];
      return last && { kind: 'Pause', member: last.name };
    },
  },
  {
    // A downgrade below the cluster version restarts nothing until etcd's downgrade is enabled and etcd
    // has moved its cluster and storage versions; then upgradeMembers rolls (workflows/downgrade-plan.ts).
    name: 'downgradeGate',
    run: (c) => {
      if (c.desired.version === undefined) return undefined;
      return planDowngradeGate({
        target: c.desired.version,
        members: upgradeViews(c),
        ...(c.observed.downgrade ? { observation: c.observed.downgrade } : {}),
      });
    },
  },
  {
    // Before scale up, so members added later start on the new version; after learners and pause, which
    // must finish first. Its own waits say which member is restarting (workflows/upgrade-plan.ts).
    name: 'upgradeMembers',
    run: (c) => {
      if (c.desired.version === undefined) return undefined;
      return planUpgrade({
        target: c.desired.version,
        ...(c.etcd.leaderId !== undefined ? { leaderId: c.etcd.leaderId } : {}),
        members: upgradeViews(c),
      });
    },
  },
  {
    // After upgradeMembers: a version change also changes the image and so every Pod's template; the upgrade
    // alone rolls it (its Pods come back on the new template), so nothing is restarted twice. Its own waits
    // say which member is restarting (workflows/rollout-plan.ts).
    name: 'rolloutMembers',
    run: (c) => {
      // A Pod deleted now could not come back: no image, or the path rules refuse the version (plan() holds starts).
      if (!c.desired.versionKnown || upgradeRefusal(c.desired, c.observed) !== undefined) return undefined;
      const kube = new Map(c.observed.kube.map((k) => [k.name, k]));
      return planRollout({
        ...(c.etcd.leaderId !== undefined ? { leaderId: c.etcd.leaderId } : {}),
        belowSize: c.members.length < c.target,
        members: c.members.map((m) => {
          const pod = kube.get(m.name)?.pod;
          return {
            id: m.id,
            name: m.name,
            ordinal: m.ordinal,
            isLearner: m.isLearner,
            healthy: m.healthy,
            ready: pod?.ready === true,
            ...(m.raftIndex !== undefined ? { raftIndex: m.raftIndex } : {}),
            ...(pod?.template ? { template: pod.template } : {}),
          };
        }),
      });
    },
  },
  {
    // "Add a single member, verify it starts correctly, and only then add the next" (etcd runtime reconfiguration guide).
    name: 'waitForUnreadyMembers',
    run: (c) => {
      const m = c.members.filter((x) => !x.healthy).sort(byOrdinal)[0];
      return m && wait(Reasons.MemberNotReady, `${m.name} does not answer yet`);
    },
  },
  {
    // Once every member answers and before any is added: a bootstrapping cluster turns auth on while it is
    // one seed, so members join a cluster that already has it.
    name: 'enableAuth',
    run: (c) => planAuth(c.desired.auth === true, c.observed.auth),
  },
  {
    name: 'scaleUp',
    run: (c) => {
      if (c.members.length >= c.target) return undefined;
      const used = [...c.members.map((m) => m.name), ...c.observed.kube.map((k) => k.name)];
      return { kind: 'AddMember', member: nextMemberName(c.desired.cluster, used) };
    },
  },
  {
    // Once membership is settled: a changed root password waits for a running upgrade or rollout, and meanwhile
    // the operator keeps using the applied copy, which etcd still accepts.
    name: 'rotateAuth',
    run: (c) => planAuthRotation(c.desired.auth === true, c.observed.auth),
  },
  {
    // Last before converged: a claim that cannot grow must not hold anything else back, and its refusal
    // (a None with its own reason) is what status shows once everything else is done.
    name: 'growStorage',
    run: (c) => {
      if (c.desired.storageSize === undefined || c.desired.medium === 'Memory') return undefined;
      const kube = new Map(c.observed.kube.map((k) => [k.name, k]));
      return planStorageGrowth({
        size: c.desired.storageSize,
        claims: c.members.map((m) => {
          const storage = kube.get(m.name)?.claim?.storage;
          return { member: m.name, ordinal: m.ordinal, ...(storage ? { storage } : {}) };
        }),
      });
    },
  },
  {
    // Last before converged: only a cluster whose membership and versions are settled and whose members
    // all answer is defragmented (workflows/defrag-plan.ts).
    name: 'maintenance',
    run: (c) => {
      const kube = new Map(c.observed.kube.map((k) => [k.name, k]));
      return defragTrigger({
        alarms: c.etcd.alarms ?? [],
        config: c.desired.defrag,
        members: c.members.map((m) => ({
          id: m.id,
          name: m.name,
          ordinal: m.ordinal,
          isLearner: m.isLearner,
          healthy: m.healthy,
          ready: kube.get(m.name)?.pod?.ready === true,
          ...(m.dbSize !== undefined ? { dbSize: m.dbSize } : {}),
          ...(m.dbSizeInUse !== undefined ? { dbSizeInUse: m.dbSizeInUse } : {}),
        })),
      });
    },
  },
  {
    name: 'converged',
    run: (c) => ({
      kind: 'None',
      reason: Reasons.Converged,
      message: `${c.voters.length} of ${c.desired.replicas} members healthy`,
    }),
  },
];

/** Each member as the upgrade and downgrade planners see it. */
function upgradeViews(c: WithEtcd) {
  const kube = new Map(c.observed.kube.map((k) => [k.name, k]));
  return c.members.map((m) => {
    const pod = kube.get(m.name)?.pod;
    return {
      id: m.id,
      name: m.name,
      ordinal: m.ordinal,
      isLearner: m.isLearner,
      healthy: m.healthy,
      ready: pod?.ready === true,
      ...(m.version !== undefined ? { version: m.version } : {}),
      ...(pod?.version !== undefined ? { podVersion: pod.version } : {}),
      ...(m.raftIndex !== undefined ? { raftIndex: m.raftIndex } : {}),
    };
  });
}

interface WithoutEtcd {
  desired: Desired;
  observed: Observed;
}

// The member the cluster last listed comes first, so Resume never starts an orphan left by a crash
// between MemberRemove and the claim's deletion.
function preferRecorded(c: WithoutEtcd, names: string[]): string | undefined {
  const recorded = new Set(c.observed.recorded.members);
  const ord = (n: string) => ordinalFor(c.desired.cluster, n);
  return [...names].sort((a, b) => Number(recorded.has(b)) - Number(recorded.has(a)) || ord(a) - ord(b))[0];
}

// Without etcd's member list the only trustworthy facts are the Kubernetes objects; every step here only
// starts or stops Pods on kept data, never changes membership.
const withoutEtcdChain: Check<WithoutEtcd>[] = [
  {
    name: 'replaceStuckPods',
    run: (c) => replaceStuckPod(c.desired, c.observed.kube, c.observed.recorded.clusterId === undefined),
  },
  {
    // Members that refuse the operator's certificate run and may well have quorum: nothing is started or
    // stopped on a guess, and status says what is wrong instead of QuorumLost.
    name: 'operatorTrusted',
    run: (c) =>
      c.observed.etcdRefused !== undefined && c.observed.kube.some((k) => podLive(k))
        ? wait(
            Reasons.TLSTrustBroken,
            `every member refuses the TLS handshake with the operator, so it cannot tell whether quorum holds (${c.observed.etcdRefused}); members trust the CA bundle (ca.crt) they started with: the operator's client certificate must be signed by a CA in it, and its ca.crt must hold the CA of the members' serving certificate (docs/operations.md, Rotating the CA)`,
          )
        : undefined,
  },
  {
    name: 'stayPaused',
    run: (c) => {
      if (c.desired.replicas !== 0) return undefined;
      const live = c.observed.kube.filter((k) => podLive(k));
      const stopping = c.observed.kube.filter((k) => k.pod?.terminating);
      if (live.length === 0 && stopping.length === 0) {
        return { kind: 'None', reason: Reasons.Paused, message: 'paused; the data is kept on its claim' };
      }
      if (live.length === 0) return wait(Reasons.WaitingForDeletion, 'the last member Pod is stopping');
      const only = live[0];
      if (live.length === 1 && only) return { kind: 'Pause', member: only.name };
      return wait(Reasons.MemberNotReady, 'no member answers; pausing needs one member left first');
    },
  },
  {
    // A recorded cluster id means the cluster existed; starting an empty one under the same name would
    // make clients see revisions go backwards, so that is left to a person.
    name: 'bootstrapWhenNothingExists',
    run: (c) => {
      const anyData = c.observed.kube.some((k) => dataKept(k, c.desired.medium) || podLive(k));
      if (anyData) return undefined;
      if (c.observed.recorded.clusterId !== undefined) {
        return wait(
          Reasons.AllMembersLost,
          `every member's data is gone (cluster ${c.observed.recorded.clusterId})`,
        );
      }
      return { kind: 'Bootstrap', member: memberName(c.desired.cluster, 0) };
    },
  },
  {
    name: 'startPodsOnKeptData',
    run: (c) => {
      const idle = c.observed.kube.filter(
        (k) => dataKept(k, c.desired.medium) && !podLive(k) && !k.pod?.terminating,
      );
      const member = preferRecorded(
        c,
        idle.map((k) => k.name),
      );
      if (member === undefined) return undefined;
      if (c.observed.kube.some((k) => podLive(k))) return { kind: 'RecreatePod', member };
      // Nothing runs. A bootstrap that never reported a cluster id runs again (its seed is started with
      // `new`, which etcd ignores on a data dir that already has data); a paused cluster resumes; any
      // other cluster lost all its Pods at once and heals.
      if (c.observed.recorded.clusterId === undefined) return { kind: 'Bootstrap', member };
      return c.observed.recorded.paused ? { kind: 'Resume', member } : { kind: 'RecreatePod', member };
    },
  },
  {
    // A seed whose restore failed holds everything else back (no member can join a cluster that never
    // started). A refusal no restart can fix (wrong bytes, missing object, bad credentials) is reported as
    // such; anything else is left to the kubelet, which restarts the init container.
    name: 'reportRestoreFailure',
    run: (c) => {
      const seed = c.observed.kube.find((k) => podLive(k) && k.pod?.restoreFailure);
      const failure = seed?.pod?.restoreFailure;
      if (!seed || !failure) return undefined;
      const text = `restore of ${seed.name} failed: ${failure.reason}: ${failure.message}`;
      return failure.permanent
        ? wait(Reasons.RestoreFailed, text)
        : wait(Reasons.MemberNotReady, `${text}; its init container is retried`);
    },
  },
  {
    name: 'waitForMembersToAnswer',
    run: (c) =>
      c.observed.kube.some((k) => k.pod?.terminating)
        ? wait(Reasons.WaitingForDeletion, 'a member Pod is being deleted')
        : wait(Reasons.MemberNotReady, 'member Pods run but no member answers yet'),
  },
];

function runChain<C>(chain: Check<C>[], context: C): Decision {
  for (const check of chain) {
    const step = check.run(context);
    if (step) return { check: check.name, step };
  }
  throw new Error('plan: the last check of a chain always decides');
}

/** Whether the step starts an etcd process, which needs an image for spec.version. */
export function startsPod(step: Step): boolean {
  return ['Bootstrap', 'AddMember', 'RecreatePod', 'Resume'].includes(step.kind);
}

/**
 * The next step for this cluster. Call it after every observation; it assumes nothing about earlier
 * steps, so a crash between any two effects is recovered by observing and planning again.
 */
export function plan(desired: Desired, observed: Observed): Decision {
  const blocked = authBlocked(desired.auth === true, observed.auth);
  if (blocked) return { check: 'authAccepted', step: blocked };
  const decision = observed.etcd
    ? runChain(withEtcdChain, withEtcdContext(desired, observed, observed.etcd))
    : runChain(withoutEtcdChain, { desired, observed });
  const refusal = upgradeRefusal(desired, observed);
  const restarts = ['UpgradeMember', 'EnableDowngrade'].includes(decision.step.kind);
  if (refusal !== undefined && (startsPod(decision.step) || restarts)) {
    // A Pod started now would run a version the path rules refuse: nothing is touched until the spec changes.
    return { check: 'upgradePathAllowed', step: wait(Reasons.UpgradePathRefused, refusal) };
  }
  if (!desired.versionKnown && (startsPod(decision.step) || restarts)) {
    return {
      check: 'versionHasImage',
      step: wait(
        Reasons.UnsupportedVersion,
        `spec.version${desired.version ? ` ${desired.version}` : ''} names no etcd release this operator has an image for; set it to a supported release (docs/status.md lists them). Until then nothing is started: ${describeStep(decision.step)} waits`,
      ),
    };
  }
  return explainWait(decision, observed, desired.cluster);
}

/** Waits that a member Pod which cannot run may be behind: the Pod's own reason is what the user needs. */
const EXPLAINABLE_WAITS: readonly string[] = [
  Reasons.MemberNotReady,
  Reasons.LearnerCatchingUp,
  Reasons.QuorumLost,
];

/**
 * A wait on members that do not answer, said in the kubelet's or scheduler's words when a member's Pod
 * cannot run (no image, crash loop, unschedulable, claim pending): the reason a user can act on.
 */
export function explainWait(decision: Decision, observed: Observed, cluster: string): Decision {
  const step = decision.step;
  if (step.kind !== 'Wait' || !EXPLAINABLE_WAITS.includes(step.reason)) return decision;
  const blocked = observed.kube
    .filter((k) => k.problem !== undefined && !k.pod?.terminating)
    .sort((a, b) => ordinalFor(cluster, a.name) - ordinalFor(cluster, b.name))[0];
  const problem = blocked?.problem;
  if (!problem) return decision;
  return { check: `${decision.check}/memberProblem`, step: wait(problem.reason, problem.message) };
}

/** The path rules' refusal of spec.version given what members run and their Pods' images, if they refuse it. */
export function upgradeRefusal(desired: Desired, observed: Observed): string | undefined {
  if (desired.version === undefined) return undefined;
  const running = [
    ...(observed.etcd?.members ?? []).map((m) => m.version),
    ...observed.kube.filter((k) => podLive(k)).map((k) => k.pod?.version),
  ];
  const path = upgradePath(running, desired.version);
  return path.kind === 'refused' ? path.message : undefined;
}

function withEtcdContext(desired: Desired, observed: Observed, etcd: EtcdView): WithEtcd {
  const kube = new Map(observed.kube.map((k) => [k.name, k]));
  // Healthy means "votes now": a member marked data-lost still votes until it is removed, so it counts
  // for quorum even though it is about to go.
  const members: Member[] = etcd.members.map((m) => ({
    ...m,
    state: memberState(m, kube.get(m.name), desired.medium),
    healthy: m.started && m.reachable && podLive(kube.get(m.name)),
    ordinal: ordinalFor(desired.cluster, m.name),
  }));
  const voters = members.filter((m) => !m.isLearner);
  return {
    desired,
    observed,
    etcd,
    target: Math.max(desired.replicas, 1),
    members,
    voters,
    learners: members.filter((m) => m.isLearner),
    leader: members.find((m) => m.id === etcd.leaderId),
    hasQuorum: voters.filter((m) => m.healthy).length >= quorum(voters.length),
  };
}

// ---------------------------------------------------------------------------------------------------
// Operations and readable text

/**
 * The operation a step starts when no operation runs. Removals toward replicas 0 belong to Pause, so
 * `pause` is what a person sees in the Temporal UI from the first removal on.
 */
export function operationFor(step: ActionStep, desiredReplicas: number): OperationType {
  switch (step.kind) {
    case 'Bootstrap':
      return 'Bootstrap';
    case 'Resume':
      return 'Resume';
    case 'Pause':
      return 'Pause';
    case 'AddMember':
    case 'PromoteLearner':
      return 'ScaleUp';
    case 'UpgradeMember':
      return lowersMinor(step.from, step.to) ? 'Downgrade' : 'Upgrade';
    case 'EnableDowngrade':
      return 'Downgrade';
    case 'RolloutMember':
    case 'UpdateMemberMetadata':
    case 'ExpandClaim':
      return 'Rollout';
    case 'RemoveMember':
    case 'MoveLeader':
      if (step.reason === 'Upgrade')
        return lowersMinor(step.upgrade.from, step.upgrade.to) ? 'Downgrade' : 'Upgrade';
      if (step.reason === 'Rollout') return 'Rollout';
      if (step.reason !== 'ScaleDown') return 'Heal';
      return desiredReplicas === 0 ? 'Pause' : 'ScaleDown';
    case 'RecreatePod':
    case 'DeleteOrphan':
    case 'ReplacePod':
      return 'Heal';
    case 'EnableAuth':
      return 'EnableAuth';
    case 'Defrag':
      return 'Defrag';
    case 'RotateAuth':
      return 'RotateAuth';
  }
}

const removeWhy: Record<RemoveReason, string> = {
  ScaleDown: 'scale down',
  DataLost: 'its data is lost',
  Zombie: 'it never started and nothing runs it',
};

/** One line for the Temporal UI's current details and status.currentOperation.step. */
/**
 * Members etcd lists as started whose status answers: what an operation waiting for a member to come up
 * watches change. Empty without an etcd view.
 */
export function answeringMembers(observed: Observed): string[] {
  return (observed.etcd?.members ?? [])
    .filter((m) => m.started && m.reachable)
    .map((m) => m.name)
    .sort();
}

/**
 * Whether a wait is for a member that does not answer yet (a seed or learner starting, a restarted member
 * coming back), so the operation can watch for its first answer instead of sleeping a fixed interval:
 * such waits end within a second or two, and a timer (whose resolution on a Temporal server is coarse)
 * would overshoot each of them. A learner that answers and only lags behind is not such a wait.
 */
export function awaitsAnAnswer(step: Step, observed: Observed): boolean {
  if (step.kind !== 'Wait') return false;
  if (step.reason !== Reasons.MemberNotReady && step.reason !== Reasons.LearnerCatchingUp) return false;
  const pods = new Map(observed.kube.map((k) => [k.name, k]));
  if (!observed.etcd) return observed.kube.some((k) => podLive(k));
  return observed.etcd.members.some((m) => !(m.started && m.reachable) && podLive(pods.get(m.name)));
}

export function describeStep(step: Step): string {
  switch (step.kind) {
    case 'Bootstrap':
      return `start seed member ${step.member}`;
    case 'AddMember':
      return `add member ${step.member} as a learner`;
    case 'PromoteLearner':
      return `promote learner ${step.member} to voter`;
    case 'RemoveMember':
      return `remove member ${step.member} (${removeWhy[step.reason]})`;
    case 'MoveLeader':
      if (step.reason === 'Upgrade') {
        return `move leadership from ${step.from.name} to ${step.to.name}, which runs ${step.upgrade.to}, before upgrading ${step.from.name}`;
      }
      if (step.reason === 'Rollout') return describeRolloutStep(step);
      return `move leadership from ${step.from.name} to ${step.to.name} before removing ${step.from.name}`;
    case 'UpgradeMember':
      return `restart member ${step.member} on ${step.to} (it runs ${step.from}): delete its Pod, keep its claim`;
    case 'EnableDowngrade':
      return `validate and enable etcd's downgrade to ${step.targetVersion} (members run ${step.from}, spec.version ${step.to})`;
    case 'RolloutMember':
    case 'UpdateMemberMetadata':
    case 'ExpandClaim':
      return describeRolloutStep(step);
    case 'RecreatePod':
      return `recreate the Pod of ${step.member} on its kept data`;
    case 'DeleteOrphan':
      return `delete the Pod and claim of ${step.member}, which etcd does not list`;
    case 'ReplacePod':
      return `delete the Pod of ${step.member}, which never ran and which the spec no longer describes (${step.why}); its claim is kept and it starts again from the spec`;
    case 'Pause':
      return `stop ${step.member} and keep its claim`;
    case 'Resume':
      return `start ${step.member} again from its kept claim`;
    case 'EnableAuth':
      return "make sure the root user has the Secret's password and the root role, and enable auth";
    case 'Defrag':
      return step.message;
    case 'RotateAuth':
      return "apply the Secret's changed root password to etcd";
    case 'Wait':
      return `wait (${step.reason}): ${step.message}`;
    case 'None':
      return step.message;
  }
}
