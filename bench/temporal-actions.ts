// Counts Temporal "actions" (what Temporal Cloud bills) in workflow histories within a time window: starts,
// signals, timers, activity attempts, markers and search-attribute upserts. Workflow tasks are not actions.
// Histories are in the JSON form `temporal workflow show -o json` prints.

/** Event types that are one action each (activity attempts are counted from their started events). */
const ONE_ACTION: ReadonlySet<string> = new Set([
  'EVENT_TYPE_WORKFLOW_EXECUTION_STARTED',
  'EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED',
  'EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED',
  'EVENT_TYPE_TIMER_STARTED',
  'EVENT_TYPE_MARKER_RECORDED',
  'EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES',
  'EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED',
  'EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED',
]);

export interface HistoryEventJson {
  eventType: string;
  eventTime: string;
  /** The CLI prints int64 numbers as strings. */
  activityTaskStartedEventAttributes?: { attempt?: number | string };
  activityTaskScheduledEventAttributes?: { activityType?: { name?: string } };
}

/** Activities an operation runs to look at its cluster, not to change it. */
export const LOOK_ACTIVITIES: ReadonlySet<string> = new Set(['observeCluster', 'observeAuth']);

/**
 * An operation's first step: the first activity it scheduled that is not a look (its first look is usually handed to
 * it by the cluster workflow), with when it was scheduled; undefined if it scheduled none.
 */
export function firstStep(events: HistoryEventJson[]): { atMs: number; activity: string } | undefined {
  for (const e of events) {
    if (e.eventType !== 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED') continue;
    const activity = e.activityTaskScheduledEventAttributes?.activityType?.name ?? '';
    if (!LOOK_ACTIVITIES.has(activity)) return { atMs: Date.parse(e.eventTime), activity };
  }
  return undefined;
}

/** Actions recorded in `events` with fromMs <= time < toMs. */
export function countActions(events: HistoryEventJson[], fromMs: number, toMs: number): number {
  let n = 0;
  for (const e of events) {
    const t = Date.parse(e.eventTime);
    if (!(t >= fromMs && t < toMs)) continue;
    if (ONE_ACTION.has(e.eventType)) n += 1;
    // Every attempt of an activity is an action; the started event carries how many there were.
    if (e.eventType === 'EVENT_TYPE_ACTIVITY_TASK_STARTED')
      n += Number(e.activityTaskStartedEventAttributes?.attempt ?? 1);
  }
  return n;
}
