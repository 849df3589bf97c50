// Condition types, reason constants and failure types: the one list of words status and failures may use.

export const ConditionTypes = {
  /** The cluster serves linearizable requests: a quorum of voters answers. */
  Available: 'Available',
  /** An operation is running (True), or why none is (False). */
  Progressing: 'Progressing',
  /** Some member that exists is not healthy (True), whatever the operator is doing about it. */
  Degraded: 'Degraded',
} as const;
export type ConditionType = (typeof ConditionTypes)[keyof typeof ConditionTypes];

/** Every reason a condition may carry; docs/status.md explains each one and what to do next. */
export const Reasons = {
  // Available
  ClusterAvailable: 'ClusterAvailable',
  QuorumLost: 'QuorumLost',
  Bootstrapping: 'Bootstrapping',
  Paused: 'Paused',
  AllMembersLost: 'AllMembersLost',
  /**
   * Available=False, Degraded=True, Progressing=False: a majority of members' data is gone for good; nothing is
   * done until the user approves a recovery (workflows/quorum-loss.ts, docs/operations.md).
   */
  PermanentQuorumLoss: 'PermanentQuorumLoss',
  // Progressing=True: the running operation
  ScalingUp: 'ScalingUp',
  ScalingDown: 'ScalingDown',
  Healing: 'Healing',
  Pausing: 'Pausing',
  Resuming: 'Resuming',
  Upgrading: 'Upgrading',
  EnablingAuth: 'EnablingAuth',
  /** A Recover operation rebuilds the cluster from its surviving member after an approved permanent quorum loss. */
  Recovering: 'Recovering',
  /** A Rebuild operation replaces every member's data with a backup point the user approved (no survivor, or a rollback). */
  Rebuilding: 'Rebuilding',
  // Progressing=False: why nothing runs
  Converged: 'Converged',
  /** The last operation made no progress within spec.progressDeadlineSeconds: it undid its half-done step and stopped. */
  Stalled: 'Stalled',
  /** What `Stalled` was called before; kept so status written by an older operator still reads. */
  ProgressDeadlineExceeded: 'ProgressDeadlineExceeded',
  OperationCancelled: 'OperationCancelled',
  OperationFailed: 'OperationFailed',
  // spec.version names no release this operator has an image for (told once; nothing is retried until the spec changes)
  UnsupportedVersion: 'UnsupportedVersion',
  LearnerCatchingUp: 'LearnerCatchingUp',
  MemberNotReady: 'MemberNotReady',
  QuorumAtRisk: 'QuorumAtRisk',
  WaitingForDeletion: 'WaitingForDeletion',
  // Progressing=False: spec.version cannot be reached from the versions members run (workflows/upgrade-path.ts)
  UpgradePathRefused: 'UpgradePathRefused',
  // Degraded (and the wait behind it): the seed's restore refused its snapshot
  RestoreFailed: 'RestoreFailed',
  // Progressing=False: spec.auth's Secret is missing or unusable, or etcd refuses its credentials (workflows/auth-plan.ts)
  AuthSecretInvalid: 'AuthSecretInvalid',
  AuthFailed: 'AuthFailed',
  // Progressing=False: spec.auth is set and etcd did not say whether auth is on (a call that timed out); looked at again soon
  AuthUnknown: 'AuthUnknown',
  // Degraded
  MembersHealthy: 'MembersHealthy',
  MemberDataLost: 'MemberDataLost',
  // Progressing=True: a Downgrade operation runs (workflows/downgrade-plan.ts)
  Downgrading: 'Downgrading',
  // Progressing=False: a downgrade waits for etcd to move its cluster or storage version to the target minor
  WaitingForClusterVersion: 'WaitingForClusterVersion',
  // Progressing=True: a config rollout (workflows/rollout-plan.ts)
  RollingOut: 'RollingOut',
  // Progressing=False: spec.storage.size grew but the claims' StorageClass does not allow volume expansion
  StorageExpansionRefused: 'StorageExpansionRefused',
  // Degraded: etcd raised its NOSPACE alarm (the database reached quota-backend-bytes); writes are refused
  NoSpace: 'NoSpace',
  // Progressing=True: a Defrag operation runs (threshold, schedule, or clearing NOSPACE)
  Defragmenting: 'Defragmenting',
  // Progressing=True: a RotateAuth operation applies a changed root password (workflows/auth-plan.ts)
  RotatingAuth: 'RotatingAuth',
  // Progressing=False and Degraded=True: a member Pod cannot run, in the kubelet's or scheduler's words
  // (activities/member-problems.ts); an Event names the Pod once per reason
  ImagePullFailed: 'ImagePullFailed',
  MemberCrashLooping: 'MemberCrashLooping',
  PodUnschedulable: 'PodUnschedulable',
  ClaimPending: 'ClaimPending',
  // Event: a new spec generation replaced an operation that was waiting (the fix supersedes the wait)
  OperationSuperseded: 'OperationSuperseded',
  // Progressing=False: a rollout would restart members on a ca.crt that does not trust the cluster's certificates (activities/tls-trust.ts)
  TLSTrustBroken: 'TLSTrustBroken',
  // Event (and the failed operation's message): an object the operator would create exists and is not the cluster's
  ObjectNotOwned: 'ObjectNotOwned',
} as const;
export type Reason = (typeof Reasons)[keyof typeof Reasons];

/**
 * Types of `ApplicationFailure.nonRetryable`: failures no retry can fix. Anything else is thrown as a plain
 * Error and retried by the activity's retry policy.
 */
export const FailureTypes = {
  /** The spec cannot be carried out as written (should have been caught by CEL). */
  InvalidSpec: 'InvalidSpec',
  /** No image is known for spec.version. */
  UnknownVersion: 'UnknownVersion',
  /** The EtcdCluster was deleted while an operation ran. */
  ClusterDeleted: 'ClusterDeleted',
  /** The planned step would cost quorum; refused rather than retried. */
  QuorumGuard: 'QuorumGuard',
  /** An etcd member id or name the step names is not the one etcd now reports. */
  MemberMismatch: 'MemberMismatch',
  /** A snapshot's cluster does not exist or is not Available. */
  ClusterNotAvailable: 'ClusterNotAvailable',
  /** A snapshot's destination claim does not exist. */
  DestinationNotFound: 'DestinationNotFound',
  /** A snapshot's credentials Secret is missing or lacks a key. */
  CredentialsNotFound: 'CredentialsNotFound',
  /** A restore that cannot succeed as specified: its EtcdSnapshot failed, or the agent refused the source. */
  RestoreFailed: 'RestoreFailed',
  /** The snapshot an upgrade takes first (spec.backup) failed: the upgrade does not start. */
  UpgradeSnapshotFailed: 'UpgradeSnapshotFailed',
  /** etcd refused to validate or enable the downgrade (its message says why): nothing was restarted. */
  DowngradeRefused: 'DowngradeRefused',
  /** spec.tls asks for a cert-manager issuer, but the cert-manager CRDs are not installed. */
  CertManagerMissing: 'CertManagerMissing',
  /** NOSPACE stays after compaction and defragmentation: the live data exceeds quota-backend-bytes. */
  NoSpacePersists: 'NoSpacePersists',
  /** An object the operator would create exists and is not the cluster's (no owner reference to it): not adopted. */
  ObjectNotOwned: 'ObjectNotOwned',
} as const;
export type FailureType = (typeof FailureTypes)[keyof typeof FailureTypes];

/**
 * The EtcdCluster condition of spec.backup.continuous: whether the store holds every change within the lag it promises.
 * Kept apart from ConditionTypes (the three every cluster has, each with a metric); present only while the backup is on.
 */
export const BACKUP_CONDITION = 'ContinuousBackup';

/** Every reason the ContinuousBackup condition may carry; docs/status.md explains each one. */
export const BackupReasons = {
  // Unknown: the archiver was just deployed and has not written its first state yet
  BackupStarting: 'BackupStarting',
  // True: the store held everything etcd had, as of a moment within the lag and the archiver's report interval
  BackupCurrent: 'BackupCurrent',
  // False: the store's newest state is older than that (the store refuses writes, the archiver cannot run or reach etcd)
  BackupBehind: 'BackupBehind',
  // Unknown: the operator cannot read the store (credentials, bucket), so it cannot tell what is stored
  BackupStoreUnreadable: 'BackupStoreUnreadable',
} as const;
export type BackupReason = (typeof BackupReasons)[keyof typeof BackupReasons];

/** Every reason an EtcdSnapshot's Ready condition may carry; docs/status.md explains each one. */
export const SnapshotReasons = {
  // Ready=False while it works (before the workflow's first write there is no status at all)
  SnapshotRunning: 'SnapshotRunning',
  // Ready=True
  SnapshotSucceeded: 'SnapshotSucceeded',
  // Ready=False, phase Failed: checked before any Job runs
  ClusterNotAvailable: 'ClusterNotAvailable',
  DestinationNotFound: 'DestinationNotFound',
  CredentialsNotFound: 'CredentialsNotFound',
  // Ready=False, phase Failed: the agent's reasons (contracts/agent-result.ts AgentFailureReasons)
  InvalidCredentials: 'InvalidCredentials',
  BucketNotFound: 'BucketNotFound',
  DestinationUnavailable: 'DestinationUnavailable',
  EtcdUnavailable: 'EtcdUnavailable',
  InvalidArguments: 'InvalidArguments',
  // Ready=False, phase Failed: what the workflow saw
  JobFailed: 'JobFailed',
  SnapshotCancelled: 'SnapshotCancelled',
} as const;
export type SnapshotReason = (typeof SnapshotReasons)[keyof typeof SnapshotReasons];

/** Every reason an EtcdSnapshot's Verified condition may carry; docs/status.md explains each one. */
export const VerificationReasons = {
  // Verified=Unknown while the Job runs
  VerificationRunning: 'VerificationRunning',
  // Verified=True
  SnapshotVerified: 'SnapshotVerified',
  // Verified=False: what the stored object is
  ObjectMissing: 'ObjectMissing',
  ObjectAltered: 'ObjectAltered',
  SnapshotCorrupt: 'SnapshotCorrupt',
  HashMismatch: 'HashMismatch',
  RevisionMismatch: 'RevisionMismatch',
  // Verified=False: the check itself could not run to its end
  DestinationUnreadable: 'DestinationUnreadable',
  VerificationJobFailed: 'VerificationJobFailed',
  VerificationCancelled: 'VerificationCancelled',
} as const;
export type VerificationReason = (typeof VerificationReasons)[keyof typeof VerificationReasons];

/** Every reason an EtcdSnapshotSchedule's Ready condition may carry; docs/status.md explains each one. */
export const ScheduleReasons = {
  ScheduleActive: 'ScheduleActive',
  ScheduleSuspended: 'ScheduleSuspended',
  InvalidSchedule: 'InvalidSchedule',
} as const;
export type ScheduleReason = (typeof ScheduleReasons)[keyof typeof ScheduleReasons];
