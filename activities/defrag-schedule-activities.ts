// Keeps the Temporal Schedule of spec.maintenance.defrag.schedule: created or updated when the schedule changes, deleted when it goes or the cluster does.
//
// Each firing starts defragDueWorkflow (workflows/defrag-due-workflow.ts), which signals the cluster workflow;
// the schedule itself never touches etcd. Overlap skip: while one firing's run waits (for a worker that is
// down, say), later firings are skipped, so an operator outage costs one late Defrag, not one per firing.
import type { Client, ScheduleOptionsStartWorkflowAction } from '@temporalio/client';
import type { ClusterRef } from '../contracts/cluster-ref';
import { defragScheduleNote, defragScheduleSpec } from '../contracts/defrag-schedule';
import { SearchAttributes, WorkflowTypes } from '../contracts/messages';
import { deleteTemporalSchedule, keepTemporalSchedule } from './temporal-schedules';

export interface DefragScheduleActivityDeps {
  /** The Temporal client whose ScheduleClient keeps the Temporal Schedules. */
  temporal: Pick<Client, 'schedule'>;
}

/** The Temporal Schedule wanted for one cluster's defrag schedule; the id comes from the workflow. */
export interface DefragScheduleInput {
  ref: ClusterRef;
  /** spec.maintenance.defrag.schedule as written. */
  schedule: string;
  scheduleId: string;
  taskQueue: string;
}

export function createDefragScheduleActivities(deps: DefragScheduleActivityDeps) {
  return {
    /** Creates or updates the cluster's defrag Temporal Schedule; one Temporal refuses fails as InvalidSchedule. */
    async applyDefragSchedule(input: DefragScheduleInput): Promise<'created' | 'updated'> {
      const { ref, schedule } = input;
      const action: ScheduleOptionsStartWorkflowAction<never> = {
        type: 'startWorkflow',
        workflowType: WorkflowTypes.defragDue,
        workflowId: `${input.scheduleId}/due`,
        taskQueue: input.taskQueue,
        args: [{ ref }] as never,
        staticSummary: `scheduled defrag of ${ref.namespace}/${ref.name} ("${schedule}" UTC)`,
        typedSearchAttributes: [
          { key: SearchAttributes.clusterNamespace, value: ref.namespace },
          { key: SearchAttributes.clusterName, value: ref.name },
          { key: SearchAttributes.clusterUid, value: ref.uid },
        ],
      };
      return keepTemporalSchedule(deps.temporal, {
        scheduleId: input.scheduleId,
        spec: defragScheduleSpec(schedule),
        action,
        paused: false,
        note: defragScheduleNote(ref, schedule),
        // The memo is set once, at create (an update cannot change it): the cron is in the note, which updates.
        memo: { etcdCluster: `${ref.namespace}/${ref.name}`, uid: ref.uid },
        what: `spec.maintenance.defrag.schedule "${schedule}"`,
      });
    },

    /** Deletes the cluster's defrag Temporal Schedule; one already gone counts as deleted. */
    async deleteDefragSchedule(input: { scheduleId: string }): Promise<'deleted' | 'absent'> {
      return deleteTemporalSchedule(deps.temporal, input.scheduleId);
    },
  };
}

export type DefragScheduleActivities = ReturnType<typeof createDefragScheduleActivities>;
