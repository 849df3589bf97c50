// One workflow per EtcdSnapshotSchedule: keeps its Temporal Schedule as the spec says (cron, paused by suspend), deletes it with the object.
//
// Invariant: the Temporal Schedule exists exactly while the EtcdSnapshotSchedule does; each run
// (snapshotScheduleRunWorkflow) reads the newest spec itself, so this workflow only reacts to changes.
import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { ScheduleActivities } from '../activities/snapshot-schedule-activities';
import { ScheduleReasons } from '../crds/conditions';
import type { Condition } from '../crds/etcd-cluster';
import { ScheduleConditionTypes } from '../crds/etcd-snapshot-schedule';
import type { ScheduleChange, ScheduleWorkflowInput } from '../contracts/messages';
import {
  scheduleChangedSignal,
  SearchAttributes,
  SNAPSHOT_OPERATION_TYPE,
  temporalScheduleId,
  WorkflowTypes,
} from '../contracts/messages';
import { ActivityKinds } from './activity-kinds';

const acts = proxyActivities<ScheduleActivities>(ActivityKinds.entityCall);

/** What the schedule's workflow keeps: the object it serves, the newest change, its Ready condition. */
interface ScheduleRun {
  ref: ScheduleWorkflowInput['schedule'];
  desired: ScheduleChange;
  deleted: boolean;
  /** A change arrived since the last apply: apply again. */
  dirty: boolean;
  ready: Condition | undefined;
  readonly scheduleId: string;
}

export async function etcdSnapshotScheduleWorkflow(
  input: ScheduleWorkflowInput & { readyCondition?: Condition },
): Promise<void> {
  const s: ScheduleRun = {
    ref: input.schedule,
    desired: input.change,
    deleted: Boolean(input.change.deleted),
    dirty: true,
    ready: input.readyCondition,
    scheduleId: temporalScheduleId(input.schedule.namespace, input.schedule.name),
  };
  setHandler(scheduleChangedSignal, (change) => onScheduleChanged(s, change));

  while (!s.deleted) {
    if (workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof etcdSnapshotScheduleWorkflow>({
        schedule: s.ref,
        change: s.desired,
        ...(s.ready ? { readyCondition: s.ready } : {}),
      });
    }
    s.dirty = false;
    await applyDesired(s);
    await condition(() => s.dirty || s.deleted);
  }
  await acts.deleteTemporalSchedule({ scheduleId: s.scheduleId });
  setCurrentDetails(
    `**${s.ref.namespace}/${s.ref.name}** deleted; Temporal Schedule ${s.scheduleId} removed`,
  );
}

function onScheduleChanged(s: ScheduleRun, change: ScheduleChange): void {
  if (change.deleted) {
    if (change.uid === s.ref.uid) s.deleted = true;
  } else if (change.uid !== s.ref.uid) {
    // Deleted and created again under the same name before this run saw the deletion: serve the new one.
    s.ref = { ...s.ref, uid: change.uid };
    s.desired = change;
    s.deleted = false;
  } else if (change.generation > s.desired.generation) {
    s.desired = change;
  }
  s.dirty = true;
}

/** Makes the Temporal Schedule what the newest spec says, then tells how that went in status (and an Event if refused). */
async function applyDesired(s: ScheduleRun): Promise<void> {
  const { generation } = s.desired;
  const { reason, message } = await applySchedule(s);
  const status = reason === ScheduleReasons.ScheduleActive ? 'True' : 'False';
  const now = new Date().toISOString();
  s.ready = {
    type: ScheduleConditionTypes.Ready,
    status,
    reason,
    message,
    lastTransitionTime: s.ready && s.ready.status === status ? s.ready.lastTransitionTime : now,
    observedGeneration: generation,
  };
  await acts.writeScheduleStatus({
    schedule: s.ref,
    status: { observedGeneration: generation, scheduleId: s.scheduleId, conditions: [s.ready] },
  });
  if (reason === ScheduleReasons.InvalidSchedule) {
    await acts.recordScheduleEvent({ schedule: s.ref, type: 'Warning', reason, message });
  }
  setCurrentDetails(
    `**${s.ref.namespace}/${s.ref.name}**: ${reason}: ${message}\n\ngeneration ${generation}`,
  );
}

/** Creates or updates the Temporal Schedule; a spec Temporal refuses (a bad cron) reads as InvalidSchedule. */
async function applySchedule(s: ScheduleRun): Promise<{ reason: string; message: string }> {
  const { ref, scheduleId } = s;
  const { spec } = s.desired;
  try {
    const outcome = await acts.applyTemporalSchedule({
      schedule: ref,
      spec,
      scheduleId,
      taskQueue: workflowInfo().taskQueue,
      runWorkflowType: WorkflowTypes.scheduleRun,
      runWorkflowId: `${scheduleId}/run`,
      searchAttributes: [
        { key: SearchAttributes.clusterNamespace, value: ref.namespace },
        { key: SearchAttributes.clusterName, value: spec.clusterRef.name },
        { key: SearchAttributes.operationType, value: SNAPSHOT_OPERATION_TYPE },
      ],
    });
    return spec.suspend
      ? {
          reason: ScheduleReasons.ScheduleSuspended,
          message: `Temporal Schedule ${scheduleId} is paused (spec.suspend)`,
        }
      : {
          reason: ScheduleReasons.ScheduleActive,
          message: `Temporal Schedule ${scheduleId} runs "${spec.schedule}" (${outcome})`,
        };
  } catch (err) {
    if (!(
      err instanceof ActivityFailure &&
      err.cause instanceof ApplicationFailure &&
      err.cause.nonRetryable
    )) {
      throw err;
    }
    return { reason: ScheduleReasons.InvalidSchedule, message: err.cause.message };
  }
}
