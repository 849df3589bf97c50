// Every reason a Kubernetes Event of the operator may carry, on which object and of which type: the one list.
// The event-recording activities accept only these (EventReason), and docs/status.md ("Events") explains each
// one; contracts/event-reasons.test.ts keeps the two in step.
import { OPERATION_TYPES } from '../crds/etcd-cluster';
import type { OperationType } from '../crds/etcd-cluster';

export interface EventReasonInfo {
  object: 'EtcdCluster' | 'EtcdSnapshot' | 'EtcdSnapshotSchedule';
  type: 'Normal' | 'Warning';
}

const cluster = (type: EventReasonInfo['type']): EventReasonInfo => ({ object: 'EtcdCluster', type });
const snapshot = (type: EventReasonInfo['type']): EventReasonInfo => ({ object: 'EtcdSnapshot', type });
const schedule = (type: EventReasonInfo['type']): EventReasonInfo => ({
  object: 'EtcdSnapshotSchedule',
  type,
});

/** An operation started: `ScaleUpStarted`, `UpgradeStarted`, ... one per operation type. */
export type OperationStartedReason = `${OperationType}Started`;

export const EventReasons = {
  // An operation's start and end (workflows/cluster-workflow.ts)
  OperationSucceeded: cluster('Normal'),
  OperationFailed: cluster('Warning'),
  OperationCancelled: cluster('Warning'),
  Stalled: cluster('Warning'),
  // Why nothing runs, said once per message (the Progressing reason of the same name)
  UpgradePathRefused: cluster('Warning'),
  StorageExpansionRefused: cluster('Warning'),
  AuthSecretInvalid: cluster('Warning'),
  AuthFailed: cluster('Warning'),
  TLSTrustBroken: cluster('Warning'),
  RestoreFailed: cluster('Warning'),
  // A quorum lost for good (workflows/quorum-loss.ts): told once per loss; an approval that does not name the
  // cluster's uid, once per value; the recovery's end with the window of writes given up (operations/recover.ts)
  PermanentQuorumLoss: cluster('Warning'),
  RecoveryRefused: cluster('Warning'),
  RollbackRefused: cluster('Warning'),
  QuorumRecovered: cluster('Warning'),
  ClusterRebuilt: cluster('Warning'),
  // An object the operator would create exists under its name and belongs to someone else (never adopted)
  ObjectNotOwned: cluster('Warning'),
  // A member Pod that cannot run, and a version no image exists for: told once per reason and subject
  ImagePullFailed: cluster('Warning'),
  MemberCrashLooping: cluster('Warning'),
  PodUnschedulable: cluster('Warning'),
  ClaimPending: cluster('Warning'),
  UnsupportedVersion: cluster('Warning'),
  // A new spec generation replaced an operation that waited on a member Pod that cannot run
  OperationSuperseded: cluster('Normal'),
  // Moving cert-manager's TLS changes into the operator's copies that members mount (activities/issued-tls.ts)
  IssuedTLSCopied: cluster('Normal'),
  CATrustExtended: cluster('Normal'),
  CertificatesReissued: cluster('Normal'),
  OldCADropped: cluster('Normal'),
  // spec.tls.mode Auto: the operator made or renewed its CA and certificates (activities/auto-tls.ts)
  // spec.backup.continuous (workflows/continuous-backup-status.ts): the archiver started or was replaced, a gap, behind
  ArchiverDeployed: cluster('Normal'),
  BackupGapRecorded: cluster('Warning'),
  BackupBehind: cluster('Warning'),
  BackupStoreUnreadable: cluster('Warning'),
  AutoTLSIssued: cluster('Normal'),
  AutoTLSRenewed: cluster('Normal'),
  // A learner restarted because etcd kept it waiting on its own publish (contracts/learner-restart.ts)
  LearnerRestarted: cluster('Normal'),
  // Upgrade and downgrade steps
  PreUpgradeSnapshotTaken: cluster('Normal'),
  PreUpgradeSnapshotFailed: cluster('Warning'),
  DowngradeEnabled: cluster('Normal'),
  DowngradeRefused: cluster('Warning'),
  // Defrag steps
  Compacted: cluster('Normal'),
  MemberDefragmented: cluster('Normal'),
  NoSpaceCleared: cluster('Normal'),
  DefragScheduleRefused: cluster('Warning'),
  DefragScheduleFailed: cluster('Warning'),
  // EtcdSnapshot (workflows/snapshot-workflow.ts)
  SnapshotStarted: snapshot('Normal'),
  SnapshotRetrying: snapshot('Warning'),
  SnapshotSucceeded: snapshot('Normal'),
  SnapshotFailed: snapshot('Warning'),
  SnapshotVerified: snapshot('Normal'),
  SnapshotVerificationFailed: snapshot('Warning'),
  // EtcdSnapshotSchedule (workflows/snapshot-schedule-workflow.ts, snapshot-schedule-run-workflow.ts)
  SnapshotPruned: schedule('Normal'),
  InvalidSchedule: schedule('Warning'),
} as const satisfies Record<string, EventReasonInfo>;

/** Every Event reason, the per-operation `<Type>Started` ones included. */
export type EventReason = keyof typeof EventReasons | OperationStartedReason;

/** The whole catalog as a list, for the docs check and for anyone who wants to enumerate it. */
export function allEventReasons(): { reason: EventReason; info: EventReasonInfo }[] {
  return [
    ...OPERATION_TYPES.map((t) => ({ reason: `${t}Started` as const, info: cluster('Normal') })),
    ...(Object.entries(EventReasons) as [keyof typeof EventReasons, EventReasonInfo][]).map(
      ([reason, info]) => ({
        reason,
        info,
      }),
    ),
  ];
}
