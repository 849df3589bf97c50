// The cluster workflow's side of the defrag schedule on a Temporal Schedule: keep the schedule as the spec says, and
// say whether a firing waits to be served.
//
// One Temporal Schedule per EtcdCluster object (contracts/defrag-schedule.ts); its firings start
// defragDueWorkflow, which signals `defragDue` (cluster-signals.ts sets maintenance.scheduledDefragDue). A
// Defrag that ran while a firing was due serves it (operations/defrag.ts). The schedule is applied when the spec's
// schedule changes and once per run (so one deleted by hand comes back after continue-as-new), deleted when the
// spec drops it and when the EtcdCluster is deleted.
//
// Behind patch DEFRAG_SCHEDULE_PATCH: runs whose histories predate it judged the schedule with the hand cron of
// workflows/defrag-schedule.ts. Such a run keeps doing so while it replays; once it runs new code past the
// marker it switches here and drops its hand-cron state.
import {
  ActivityFailure,
  ApplicationFailure,
  patched,
  proxyActivities,
  workflowInfo,
} from '@temporalio/workflow';
import type { DefragScheduleActivities } from '../activities/defrag-schedule-activities';
import { defragScheduleId } from '../contracts/defrag-schedule';
import { ScheduleReasons } from '../crds/conditions';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { ActivityKinds } from './activity-kinds';
import type { ClusterRunState } from './cluster-run-state';
import { clusterActs } from './cluster-run-state';
import type { MaintenanceState } from './operations/operation-module';

export const DEFRAG_SCHEDULE_PATCH = 'defrag-on-temporal-schedule';
/** How long after a failure (not a refusal) keeping the schedule is tried again. */
export const FAILED_SCHEDULE_RETRY_MS = 60 * 60 * 1000;

const acts = proxyActivities<DefragScheduleActivities>(ActivityKinds.entityCall);
// Applying can fail for good (a Temporal that refuses schedules for want of permission): a few attempts, then the
// failure is told and the look goes on, instead of holding every operation of the cluster for its defrag schedule.
const applyActs = proxyActivities<DefragScheduleActivities>(ActivityKinds.entityCallBounded);

const scheduleOf = (spec: EtcdClusterSpec): string | undefined => spec.maintenance?.defrag?.schedule;

/**
 * Whether this run keeps the defrag schedule on a Temporal Schedule. Asked only when there is a schedule to keep
 * or one to delete, so histories of clusters without one never see the marker.
 */
export function defragOnTemporalSchedule(s: ClusterRunState, spec: EtcdClusterSpec): boolean {
  if (scheduleOf(spec) === undefined && s.maintenance.defragTemporal === undefined) return false;
  return patched(DEFRAG_SCHEDULE_PATCH);
}

/** Whether a firing of the Temporal Schedule waits to be served by a Defrag. */
export function temporalDefragDue(s: ClusterRunState, spec: EtcdClusterSpec): boolean {
  return s.maintenance.scheduledDefragDue === true && scheduleOf(spec) !== undefined;
}

/** The state without the schedule's firing pending (a Defrag served it, or the schedule went). */
export function withoutDefragDue(state: MaintenanceState): MaintenanceState {
  const { scheduledDefragDue: _served, ...rest } = state;
  return rest;
}

/** Makes the cluster's Temporal Schedule what spec.maintenance.defrag.schedule says. */
export async function keepDefragSchedule(s: ClusterRunState, spec: EtcdClusterSpec): Promise<void> {
  if (!defragOnTemporalSchedule(s, spec)) return;
  // The hand cron's state is the deprecated path's; this run no longer judges the schedule itself.
  const { defragSchedule: _handCron, ...maintenance } = s.maintenance;
  s.maintenance = maintenance;
  const schedule = scheduleOf(spec);
  const kept = s.maintenance.defragTemporal;
  if (schedule === undefined) {
    if (kept) await deleteKept(s);
    return;
  }
  const retryDue =
    kept?.failedAt !== undefined && Date.now() - Date.parse(kept.failedAt) >= FAILED_SCHEDULE_RETRY_MS;
  if (kept?.schedule === schedule && (s.defragScheduleApplied || kept.refused !== undefined) && !retryDue)
    return;
  const scheduleId = defragScheduleId(s.ref);
  try {
    await applyActs.applyDefragSchedule({
      ref: s.ref,
      schedule,
      scheduleId,
      taskQueue: workflowInfo().taskQueue,
    });
    s.maintenance = { ...s.maintenance, defragTemporal: { schedule, scheduleId } };
  } catch (err) {
    const refused = refusalOf(err);
    if (refused === undefined) {
      // Kept as if applied (a later delete is idempotent), and tried again an hour later; a changed schedule is
      // tried at once.
      const failedAt = new Date(Date.now()).toISOString();
      s.maintenance = { ...s.maintenance, defragTemporal: { schedule, scheduleId, failedAt } };
      await clusterActs.recordEvent({
        ref: s.ref,
        type: 'Warning',
        reason: 'DefragScheduleFailed',
        message: `could not keep the Temporal Schedule for spec.maintenance.defrag.schedule "${schedule}": ${failureText(err)}; scheduled Defrags do not run until it is tried again, in an hour or when the schedule changes`,
      });
      s.defragScheduleApplied = true;
      return;
    }
    s.maintenance = { ...s.maintenance, defragTemporal: { schedule, scheduleId, refused } };
    await clusterActs.recordEvent({
      ref: s.ref,
      type: 'Warning',
      reason: 'DefragScheduleRefused',
      message: `${refused}; no scheduled Defrag runs until spec.maintenance.defrag.schedule is fixed`,
    });
  }
  s.defragScheduleApplied = true;
}

/** Deletes the Temporal Schedule this run kept, if any: the spec dropped it, or the EtcdCluster is gone. */
export async function deleteKept(s: ClusterRunState): Promise<void> {
  const kept = s.maintenance.defragTemporal;
  if (!kept) return;
  await acts.deleteDefragSchedule({ scheduleId: kept.scheduleId });
  const { defragTemporal: _deleted, ...rest } = withoutDefragDue(s.maintenance);
  s.maintenance = rest;
}

/** The innermost message of an activity failure (the activity's own error, not "Activity task failed"). */
function failureText(err: unknown): string {
  let e: unknown = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  return e instanceof Error ? e.message : String(e);
}

/** Temporal's refusal of the schedule (InvalidSchedule), or undefined for any other failure. */
function refusalOf(err: unknown): string | undefined {
  if (!(err instanceof ActivityFailure)) return undefined;
  const cause = err.cause;
  if (cause instanceof ApplicationFailure && cause.type === ScheduleReasons.InvalidSchedule)
    return cause.message;
  return undefined;
}
