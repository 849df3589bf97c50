// What every operation is to the cluster and operation workflows: one OperationModule per OperationType (workflows/operations/registry.ts).
//
// The workflows know this interface and no operation by name. A module says how its operation is summarized,
// which steps it takes on itself, what it observes beyond the cluster, how it undoes a half-done step, and what
// the cluster keeps after it ended; the steps themselves run in workflows/operations/step-executors.ts, shared
// by every operation that takes them.
import type { ClusterRef } from '../../contracts/cluster-ref';
import type { ClusterObservation } from '../../contracts/observation';
import type { EtcdClusterSpec, OperationType } from '../../crds/etcd-cluster';
import type { DefragScheduleState } from '../defrag-schedule';
import type { ActionStep, Observed, StepKind } from '../plan';
import type { RevisionSeen } from '../quorum-loss';
import type { RebuildPlan } from './rebuild';
import type { RecoveryPlan } from './recover';

export interface OperationInput {
  ref: ClusterRef;
  spec: EtcdClusterSpec;
  generation: number;
  type: OperationType;
  summary: string;
  versionKnown: boolean;
  recorded: Observed['recorded'];
  /** Defrag only: started because spec.maintenance.defrag.schedule fired. */
  defragScheduleDue?: boolean;
  /** What a run that continued as new hands to the next (absent on the first run). */
  carried?: OperationCarried;
  /**
   * The cluster workflow's look that chose this operation, taken just before it started it (FIRST_LOOK_PATCH): the
   * first step goes from it instead of a second look of its own, so a replaced Pod is created one round trip sooner.
   */
  firstLook?: ClusterObservation;
  /** Recover only: the survivor to rebuild from and what is given up (workflows/operations/recover.ts). */
  recovery?: RecoveryPlan;
  /** Rebuild only: the backup point to start from, why, and what is given up (workflows/operations/rebuild.ts). */
  rebuild?: RebuildPlan;
}

/** An operation's progress and compensation, carried across continue-as-new so a long wait loses neither. */
export interface OperationCarried {
  steps: number;
  /** The learner this operation added and has not promoted: what compensation removes. */
  pendingLearner?: { member: string; id: string };
  snapshotUri?: string;
  snapshotTaken: boolean;
  authSeenEnabled: boolean;
  /** When the progress deadline passes (epoch ms on the workflow clock). */
  deadlineAt: number;
  /** The wait under way and how many timer looks it has had (its back-off goes on where it was). */
  wait?: { reason: string; since: number; looks: number };
  /** The step line last sent to the cluster workflow. */
  lastDetails?: string;
}

export interface OperationOutcome {
  result: 'Succeeded' | 'DeadlineExceeded';
  message: string;
  steps: number;
  recorded: Observed['recorded'];
  /**
   * The look on which the plan found nothing left to do, when the operation ended so: the cluster workflow writes
   * status from it at once (OPERATION_END_LOOK_PATCH) instead of after a look of its own. Data only: a child that
   * returns it records no other command.
   */
  endLook?: ClusterObservation;
}

/** What a module's own code gets from the operation workflow. */
export interface OperationContext {
  ref: ClusterRef;
  spec: EtcdClusterSpec;
  input: OperationInput;
  /** Tells the step line: the Temporal UI's current details and status.currentOperation.step. */
  details: (line: string) => void;
}

/**
 * How a halted operation (cancelled, or past its progress deadline) makes its own half-done step whole,
 * in a non-cancellable scope. Neither ever removes a voter or data.
 */
export type Compensation =
  /** Remove the learner it added and has not promoted (membership changes). */
  | 'removePendingLearner'
  /** Start again a member whose Pod it stopped to restart it, then say who runs what (rolling restarts). */
  | 'restartStoppedMember'
  /** Replace a Pod started with --force-new-cluster by a plain one (recovery from a permanent quorum loss). */
  | 'unforceMember'
  /** Nothing to undo (a rebuild: the data it replaces was given up by the user's approval). */
  | 'none';

/** The cluster workflow's state a module may keep across its operations (carried across continue-as-new). */
export interface MaintenanceState {
  /** Deprecated path (runs before patch defrag-on-temporal-schedule): the hand cron's next firing. */
  defragSchedule?: DefragScheduleState;
  /** The Temporal Schedule kept for spec.maintenance.defrag.schedule, or Temporal's refusal of it. */
  /**
   * The Temporal Schedule kept for spec.maintenance.defrag.schedule: `refused` by Temporal (until the schedule
   * changes), or `failedAt` (RFC 3339) when keeping it failed for another reason (tried again an hour later).
   */
  defragTemporal?: { schedule: string; scheduleId: string; refused?: string; failedAt?: string };
  /** The Temporal Schedule fired and no Defrag has served it yet. */
  scheduledDefragDue?: boolean;
  /** When the last Defrag ended: the threshold's cooldown counts from it. */
  lastDefragAt?: string;
}

export interface OperationModule {
  readonly type: OperationType;
  /** The operation workflow's static summary (Temporal UI, Events), e.g. `scale default/main 3 -> 5`. */
  summarize(ref: string, from: number, to: number, first?: ActionStep): string;
  /**
   * Steps a running operation of this type takes on itself instead of ending, besides those the planner
   * assigns to it (plan.ts operationFor): e.g. the member an upgrade stopped comes back through RecreatePod.
   */
  readonly alsoContinues: readonly StepKind[];
  readonly compensation: Compensation;
  /** spec.backup asks for a snapshot before the first of these steps (a version change's first touch). */
  readonly snapshotBefore?: readonly StepKind[];
  /** Members restart on another version one by one: status.members follows each step, and a halt says who runs what. */
  readonly changesVersions?: true;
  /** status.paused once it ended (absent: unchanged). */
  readonly pausedAfter?: boolean;
  /** What the planner needs observed besides the cluster (asked right after each observation). */
  observe?(ctx: OperationContext, observation: ClusterObservation): Promise<Partial<Observed>>;
  /** Runs its own loop instead of the shared observe -> plan -> step loop; returns the result message. */
  run?(ctx: OperationContext): Promise<string>;
  /** Fields of the operation's input the cluster workflow adds when it starts one. */
  startInput?(cluster: {
    defragDue: boolean;
    step: ActionStep;
    lastSeenRevision?: RevisionSeen;
  }): Partial<OperationInput>;
  /** The cluster's bookkeeping once the operation ended, whatever its result. */
  ended?(state: MaintenanceState, cluster: { defragDue: boolean; spec: EtcdClusterSpec }): MaintenanceState;
}

/** The state with this defrag schedule, or with none when the spec has none (nothing to remember). */
export function withDefragSchedule(
  state: MaintenanceState,
  defragSchedule: DefragScheduleState | undefined,
): MaintenanceState {
  const { defragSchedule: _previous, ...rest } = state;
  return { ...rest, ...(defragSchedule ? { defragSchedule } : {}) };
}
