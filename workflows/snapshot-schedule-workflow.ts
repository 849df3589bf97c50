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

export async function etcdSnapshotScheduleWorkflow(
  input: ScheduleWorkflowInput & { readyCondition?: Condition },
): Promise<void> {
  let ref = input.schedule;
  let desired: ScheduleChange = input.change;
  let deleted = Boolean(desired.deleted);
  let dirty = true;
  let ready = input.readyCondition;
  const scheduleId = temporalScheduleId(ref.namespace, ref.name);

  setHandler(scheduleChangedSignal, (change) => {
    if (change.deleted) {
      if (change.uid === ref.uid) deleted = true;
    } else if (change.uid !== ref.uid) {
      // Deleted and created again under the same name before this run saw the deletion: serve the new one.
      ref = { ...ref, uid: change.uid };
      desired = change;
      deleted = false;
    } else if (change.generation > desired.generation) {
      desired = change;
    }
    dirty = true;
  });

  while (!deleted) {
    if (workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof etcdSnapshotScheduleWorkflow>({
        schedule: ref,
        change: desired,
        ...(ready ? { readyCondition: ready } : {}),
      });
    }
    dirty = false;
    const { spec, generation } = desired;
    let reason: string;
    let message: string;
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
      reason = spec.suspend ? ScheduleReasons.ScheduleSuspended : ScheduleReasons.ScheduleActive;
      message = spec.suspend
        ? `Temporal Schedule ${scheduleId} is paused (spec.suspend)`
        : `Temporal Schedule ${scheduleId} runs "${spec.schedule}" (${outcome})`;
    } catch (err) {
      if (!(
        err instanceof ActivityFailure &&
        err.cause instanceof ApplicationFailure &&
        err.cause.nonRetryable
      )) {
        throw err;
      }
      reason = ScheduleReasons.InvalidSchedule;
      message = err.cause.message;
    }
    const status = reason === ScheduleReasons.ScheduleActive ? 'True' : 'False';
    const now = new Date().toISOString();
    ready = {
      type: ScheduleConditionTypes.Ready,
      status,
      reason,
      message,
      lastTransitionTime: ready && ready.status === status ? ready.lastTransitionTime : now,
      observedGeneration: generation,
    };
    await acts.writeScheduleStatus({
      schedule: ref,
      status: { observedGeneration: generation, scheduleId, conditions: [ready] },
    });
    if (reason === ScheduleReasons.InvalidSchedule) {
      await acts.recordScheduleEvent({ schedule: ref, type: 'Warning', reason, message });
    }
    setCurrentDetails(`**${ref.namespace}/${ref.name}**: ${reason}: ${message}\n\ngeneration ${generation}`);
    await condition(() => dirty || deleted);
  }
  await acts.deleteTemporalSchedule({ scheduleId });
  setCurrentDetails(`**${ref.namespace}/${ref.name}** deleted; Temporal Schedule ${scheduleId} removed`);
}
