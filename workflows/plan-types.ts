// What the planner reads and what it decides: the desired spec reduced to what planning needs, the observed
// state (etcd's view and Kubernetes' view of each member), and the steps a plan may choose.
//
// Types only, besides MEMBER_PROBLEM_REASONS: the planner's pieces (plan.ts, plan-with-etcd.ts,
// plan-without-etcd.ts, cluster-state.ts) and its callers share them.
import type { AuthObservation } from '../contracts/auth';
import type { MemberProblem } from '../contracts/member-problems';
import type { EtcdMemberObservation, EtcdObservation, PodPhase } from '../contracts/observation';
import { Reasons } from '../crds/conditions';
import type { StorageMedium } from '../crds/etcd-cluster';
import type { AuthWaitReason, EnableAuthStep, RotateAuthStep } from './auth-plan';
import type { DefragConfig, DefragStep } from './defrag-plan';
import type { DowngradeObservation, EnableDowngradeStep } from './downgrade-plan';
import type {
  ClaimStorageObservation,
  ExpandClaimStep,
  PodTemplateObservation,
  RolloutLeaderStep,
  RolloutMemberStep,
  UpdateMemberMetadataStep,
} from './rollout-plan';
import type { LossFindings } from '../contracts/quorum-loss';
import type { RebuildReason, RebuildSource } from './rebuild-point';
import type { UpgradeLeaderStep, UpgradeMemberStep } from './upgrade-plan';

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
  /**
   * Quorum shown only by etcd's linearizable member list is waited on as slow voters (MemberNotReady), not called
   * QuorumLost (cluster-state.ts quorumEvidence). Set by the workflows behind a patch (plan-now.ts): a recorded
   * history decided the older way.
   */
  quorumByMemberList?: boolean;
  /**
   * A quorum lost for good is judged and gated (workflows/quorum-loss.ts): the EtcdCluster's uid and the value of its
   * approve-recovery annotation. Set by the workflows behind a patch (plan-now.ts): a recorded history waited on
   * such a loss as QuorumLost.
   */
  recovery?: { uid: string; approval?: string; fromBackup?: boolean };
  /** spec.bootstrap.restore is set: the cluster starts from a snapshot on one seed and grows from it. */
  restore?: boolean;
  /**
   * A brand-new cluster starts its initial members together (plan-without-etcd.ts startInitialMembersTogether). Set by
   * the workflows behind a patch (plan-now.ts): a recorded history bootstrapped a seed and grew it one learner at a time.
   */
  bootstrapTogether?: boolean;
  /**
   * spec.auth is wanted and etcd answered its member list but not its auth status: the plan waits (AuthUnknown) rather
   * than calling the cluster converged while auth may still be off. Set by the workflows behind a patch (plan-now.ts):
   * a recorded history planned nothing there.
   */
  authUnknownWaits?: boolean;
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
  /** The initial members its claim or Pod was started with, when they started together (contracts/observation.ts). */
  initialMembers?: string[];
  /** restoreFailure: the seed's restore init container failed on its latest run; permanent when no restart can fix it. */
  pod?: {
    phase: PodPhase;
    ready: boolean;
    terminating: boolean;
    /** The Pod's uid: a step that deletes it names this one, never a newer Pod of the same name. */
    uid?: string;
    restoreFailure?: { reason: string; message: string; permanent: boolean };
    /** The seed's restore init container succeeded: the revision (and time) it reached (status.restore). */
    restored?: { revision?: number; time?: string; leasesGranted?: number; keysWithoutLease?: number };
    /** The etcd version of the Pod's image (from its tag), when it has one. */
    version?: string;
    /** Whether the Pod runs the spec's template (workflows/rollout-plan.ts); absent when not compared. */
    template?: PodTemplateObservation;
  };
  /**
   * `dataLost` is the observer's verdict that the claim cannot hold the member's data: the claim carries
   * the etcd.conductor.dev/data-lost annotation, or it is not the claim the member started on.
   */
  claim?: {
    terminating: boolean;
    dataLost: boolean;
    storage?: ClaimStorageObservation;
    /** The learner (member id) restarted once on this claim (contracts/learner-restart.ts). */
    restartedLearner?: string;
  };
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
  /** On a quorum lost for good: what the surviving members say of themselves and the newest backup (quorum-loss.ts). */
  lossFindings?: LossFindings;
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
  | typeof Reasons.TLSTrustBroken
  | typeof Reasons.PermanentQuorumLoss;

export type Step =
  /**
   * Create the seed member's claim and Pod with `--initial-cluster-state new`; on a kept data dir etcd ignores that
   * flag, so this is retry-safe. With `members` (a brand-new cluster's initial members, `member` the first without a
   * Pod), every one of them gets its claim and Pod with `--initial-cluster` naming them all; those that exist are kept.
   */
  | { kind: 'Bootstrap'; member: string; members?: string[] }
  /** Create claim and Pod for `member` and MemberAddAsLearner it; the next plan promotes it once caught up. */
  | { kind: 'AddMember'; member: string }
  | { kind: 'PromoteLearner'; member: string; id: string }
  /**
   * Restart a learner that etcd keeps waiting on its own publish (contracts/learner-restart.ts): record its member id on
   * its claim, delete its Pod (`podUid`, so never a newer one) and start it again on its claim. Once per learner.
   */
  | { kind: 'RestartLearner'; member: string; id: string; podUid: string }
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
  /**
   * Approved recovery from a quorum lost for good: restart `member` (the survivor with the newest data, at
   * `revision`) with etcd's --force-new-cluster, then without it; fresh members are added back afterwards.
   */
  | { kind: 'RecoverQuorum'; member: string; id: string; revision: string; gone: string[] }
  /**
   * Approved rebuild in place from a backup point (workflows/rebuild-point.ts): every member's Pod and claim go, one
   * member starts from `source` through the restore init container, and the cluster grows back to spec.replicas.
   */
  | { kind: 'Rebuild'; reason: RebuildReason; source: RebuildSource; gone: string[] }
  | { kind: 'Wait'; reason: WaitReason; message: string }
  | {
      kind: 'None';
      reason: typeof Reasons.Converged | typeof Reasons.Paused | typeof Reasons.StorageExpansionRefused;
      message: string;
      /**
       * On a StorageExpansionRefused: the cluster's state said without the refusal, which is what an operation
       * other than a Rollout ends with (workflows/operation-result.ts): its result is not about storage.
       */
      converged?: string;
    };

export type StepKind = Step['kind'];
export type ActionStep = Exclude<Step, { kind: 'Wait' | 'None' }>;

/** A step and the name of the check that chose it. */
export interface Decision {
  check: string;
  step: Step;
}
