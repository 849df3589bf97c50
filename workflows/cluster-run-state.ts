// What one run of the cluster workflow keeps in memory, and what of it survives continue-as-new.
//
// The cluster workflow's pieces (cluster-signals.ts, cluster-status.ts, cluster-operation-run.ts and the loop
// in cluster-workflow.ts) share this one mutable record instead of closing over twenty local variables.
import type { CancellationScope } from '@temporalio/workflow';
import { proxyActivities } from '@temporalio/workflow';
import type { AutoTLSResult } from '../activities/auto-tls';
import type { ClusterActivities } from '../activities/cluster-activities';
import type { ClusterChange, ClusterWorkflowInput } from '../contracts/messages';
import type { ClusterObservation } from '../contracts/observation';
import type { LossFindings } from '../contracts/quorum-loss';
import type {
  CurrentOperation,
  EtcdClusterStatus,
  LastOperation,
  OperationResult,
} from '../crds/etcd-cluster';
import type { BackupOutcome } from './continuous-backup-status';
import type { DefragScheduleState } from './defrag-schedule';
import type { MaintenanceState } from './operations/operation-module';
import type { Observed } from './plan';
import type { RevisionSeen } from './quorum-loss';
import { ActivityKinds } from './activity-kinds';

/** The cluster workflow's own activity calls: observe, write status, record an Event, stage TLS copies. */
export const clusterActs = proxyActivities<ClusterActivities>(ActivityKinds.entityCall);

/** What survives continue-as-new besides the newest change. */
export interface CarriedState {
  recorded: Observed['recorded'];
  status?: EtcdClusterStatus;
  halted?: Halt;
  lastOperation?: LastOperation;
  seq: number;
  /** spec.maintenance.defrag.schedule and its next firing (workflows/defrag-schedule.ts). */
  defragSchedule?: DefragScheduleState;
  /** The Temporal Schedule kept for the defrag schedule (workflows/defrag-schedule-keeper.ts). */
  defragTemporal?: MaintenanceState['defragTemporal'];
  /** A firing of it not yet served by a Defrag. */
  scheduledDefragDue?: boolean;
  /** When the last Defrag operation ended: the threshold's cooldown counts from it (workflows/defrag-plan.ts). */
  lastDefragAt?: string;
  /** The refusal last told as an Event (upgrade path, auth, TLS trust): told once, also across continue-as-new. */
  refusalReported?: string;
  /** Likewise the storage growth last refused. */
  storageRefusalReported?: string;
  /** Notices already told as an Event (member problems, an unsupported version): told once, across runs too. */
  told?: string[];
  /** The newest revision the operator saw the cluster at, and when: what a recovery's lost window is counted to. */
  lastSeenRevision?: RevisionSeen;
}

/** An operation that did not succeed holds the cluster back for its spec generation and retry token. */
export interface Halt {
  generation: number;
  retryToken: string;
  result: OperationResult;
}

export type ClusterWorkflowArgs = ClusterWorkflowInput & { carried?: CarriedState };

export interface ClusterRunState {
  readonly ref: ClusterWorkflowInput['ref'];
  /** The newest change the watcher sent for this run's object. */
  desired: ClusterChange;
  deleted: boolean;
  /** Something changed since the last look: look again at once. */
  dirty: boolean;
  recorded: Observed['recorded'];
  status: EtcdClusterStatus | undefined;
  halted: Halt | undefined;
  lastOperation: LastOperation | undefined;
  seq: number;
  /** What operation modules keep between their operations (the defrag schedule and cooldown). */
  maintenance: MaintenanceState;
  /** This run applied (or had refused) the defrag Temporal Schedule at least once. */
  defragScheduleApplied: boolean;
  told: string[];
  current: CurrentOperation | undefined;
  /** What the running operation waits on, when it waits (it tells its step as data). */
  currentWaitReason: string | undefined;
  /** Consecutive looks at a wait of the same reason: the pause before the next look grows with it. */
  waitStreak: number;
  /** Looks in a row that could not read auth while etcd answered (authNeedsAnotherLook): the recheck backs off by it. */
  authUnknownStreak: number;
  lastWaitReason: string;
  /** A member change arrived while an operation runs: the operation hears of it (STEP_MIRROR_PATCH). */
  membersChangedDuringOperation: boolean;
  /** The spec generation that superseded the running operation, when one did. */
  supersededBy: number | undefined;
  stepChanged: boolean;
  /** The look the running operation planned its newest step on, when it sent one (operation-step-teller.ts). */
  stepLook: ClusterObservation | undefined;
  lastDecision: string;
  /** The refused upgrade path last told as an Event, so each refusal is one Event, not one per observation. */
  refusalReported: string;
  /** Likewise the storage growth last refused (workflows/rollout-plan.ts). */
  storageRefusalReported: string;
  /**
   * A new EtcdCluster of the same namespace and name: this run's object is gone (uids never return), and once
   * this run has ended (its operation cancelled, compensation skipped) the new object gets a run of its own.
   */
  successor: ClusterChange | undefined;
  /** The running operation's scope: deleting the EtcdCluster cancels it (its own compensation still runs). */
  operationScope: CancellationScope | undefined;
  /**
   * spec.tls.mode Auto: what the last issueAutoTLS said (dates only) and the spec.tls.auto it ran with; asked
   * again when the renewal time comes or spec.tls.auto changes, and once per run (it is not carried).
   */
  autoTLS: (AutoTLSResult & { lifetimes: string }) | undefined;
  /** The newest revision the operator saw the cluster at (quorum-loss.ts lostWindow), carried across runs. */
  lastSeenRevision: RevisionSeen | undefined;
  /**
   * spec.backup.continuous: when this run first saw the archiver deployed (its start grace counts from then) and the
   * last look's outcome, which every status write of this run carries. Not carried: status.backup is, and the
   * next run's first look reads the store again.
   */
  backup: { deployedAt?: number; outcome?: BackupOutcome } | undefined;
  /** The last look's findings on a permanent quorum loss (cluster-quorum-loss.ts); not carried across runs. */
  lossFindings: LossFindings | undefined;
}

export function initialRunState(input: ClusterWorkflowArgs): ClusterRunState {
  const { carried } = input;
  return {
    ref: input.ref,
    desired: input.change,
    deleted: Boolean(input.change.deleted),
    dirty: true,
    recorded: carried?.recorded ?? { members: [], paused: false },
    status: carried?.status,
    halted: carried?.halted,
    lastOperation: carried?.lastOperation,
    seq: carried?.seq ?? 0,
    maintenance: {
      ...(carried?.defragSchedule ? { defragSchedule: carried.defragSchedule } : {}),
      ...(carried?.lastDefragAt ? { lastDefragAt: carried.lastDefragAt } : {}),
      ...(carried?.defragTemporal ? { defragTemporal: carried.defragTemporal } : {}),
      ...(carried?.scheduledDefragDue ? { scheduledDefragDue: true } : {}),
    },
    defragScheduleApplied: false,
    told: carried?.told ?? [],
    current: undefined,
    currentWaitReason: undefined,
    waitStreak: 0,
    authUnknownStreak: 0,
    lastWaitReason: '',
    membersChangedDuringOperation: false,
    supersededBy: undefined,
    stepChanged: false,
    stepLook: undefined,
    lastDecision: '',
    refusalReported: carried?.refusalReported ?? '',
    storageRefusalReported: carried?.storageRefusalReported ?? '',
    successor: undefined,
    operationScope: undefined,
    autoTLS: undefined,
    lastSeenRevision: carried?.lastSeenRevision,
    backup: undefined,
    lossFindings: undefined,
  };
}

/** What the next run starts from when this one continues as new. */
export function carriedOf(s: ClusterRunState): CarriedState {
  return {
    recorded: s.recorded,
    ...(s.status ? { status: s.status } : {}),
    ...(s.halted ? { halted: s.halted } : {}),
    ...(s.lastOperation ? { lastOperation: s.lastOperation } : {}),
    seq: s.seq,
    ...(s.maintenance.defragSchedule ? { defragSchedule: s.maintenance.defragSchedule } : {}),
    ...(s.maintenance.lastDefragAt ? { lastDefragAt: s.maintenance.lastDefragAt } : {}),
    ...(s.maintenance.defragTemporal ? { defragTemporal: s.maintenance.defragTemporal } : {}),
    ...(s.maintenance.scheduledDefragDue ? { scheduledDefragDue: true } : {}),
    ...(s.refusalReported ? { refusalReported: s.refusalReported } : {}),
    ...(s.storageRefusalReported ? { storageRefusalReported: s.storageRefusalReported } : {}),
    ...(s.told.length > 0 ? { told: s.told } : {}),
    ...(s.lastSeenRevision ? { lastSeenRevision: s.lastSeenRevision } : {}),
  };
}

/** A halt recorded for an older generation or retry token no longer holds the cluster back. */
export function isHalted(s: ClusterRunState): boolean {
  return (
    s.halted !== undefined &&
    s.halted.generation === s.desired.generation &&
    s.halted.retryToken === (s.desired.retryToken ?? '')
  );
}
