import { countActions, firstStep, type HistoryEventJson } from './temporal-actions';

const at = (second: number, type: string, attempt?: number): HistoryEventJson => ({
  eventType: `EVENT_TYPE_${type}`,
  eventTime: new Date(second * 1000).toISOString(),
  ...(attempt ? { activityTaskStartedEventAttributes: { attempt: String(attempt) } } : {}),
});

describe('countActions', () => {
  test.each([
    ['an empty history costs nothing', [], 0],
    [
      'workflow tasks are not actions',
      [at(10, 'WORKFLOW_TASK_SCHEDULED'), at(10, 'WORKFLOW_TASK_COMPLETED')],
      0,
    ],
    [
      'a drift check is a timer and one observation',
      [
        at(10, 'TIMER_STARTED'),
        at(11, 'ACTIVITY_TASK_SCHEDULED'),
        at(11, 'ACTIVITY_TASK_STARTED', 1),
        at(11, 'ACTIVITY_TASK_COMPLETED'),
      ],
      2,
    ],
    ['an activity that took three attempts is three actions', [at(12, 'ACTIVITY_TASK_STARTED', 3)], 3],
    [
      'signals, child starts and upserts count once each',
      [
        at(10, 'WORKFLOW_EXECUTION_SIGNALED'),
        at(10, 'START_CHILD_WORKFLOW_EXECUTION_INITIATED'),
        at(10, 'UPSERT_WORKFLOW_SEARCH_ATTRIBUTES'),
      ],
      3,
    ],
    [
      'events outside the window are left out',
      [at(5, 'TIMER_STARTED'), at(20, 'TIMER_STARTED'), at(19, 'TIMER_STARTED')],
      1,
    ],
  ])('%s', (_name, events, expected) => {
    expect(countActions(events, 10_000, 20_000)).toBe(expected);
  });
});

describe("firstStep: an operation's first activity that is not a look", () => {
  const scheduled = (second: number, activity: string): HistoryEventJson => ({
    eventType: 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED',
    eventTime: new Date(second * 1000).toISOString(),
    activityTaskScheduledEventAttributes: { activityType: { name: activity } },
  });
  test.each([
    [
      'no activity at all',
      [at(1, 'WORKFLOW_EXECUTION_STARTED'), at(1, 'WORKFLOW_TASK_SCHEDULED')],
      undefined,
    ],
    ['only looks', [scheduled(2, 'observeCluster'), scheduled(3, 'observeAuth')], undefined],
    [
      'a handed look: the first activity is the step',
      [at(1, 'WORKFLOW_EXECUTION_STARTED'), scheduled(2, 'removeMember'), scheduled(3, 'observeCluster')],
      { atMs: 2000, activity: 'removeMember' },
    ],
    [
      'a look of its own first is passed over',
      [scheduled(2, 'observeCluster'), at(3, 'ACTIVITY_TASK_COMPLETED'), scheduled(4, 'addLearner')],
      { atMs: 4000, activity: 'addLearner' },
    ],
  ] as const)('%s', (_what, events, want) => {
    expect(firstStep([...events])).toEqual(want);
  });
});
