// The few kinds of activity call a workflow makes, each with its timeout and retry policy defined once here; a workflow file names a kind instead of spelling options out.
//
// Changing a kind's timeouts or retries keeps recorded histories replayable (replay checks an activity's type,
// not its options), but it changes how fast a running operation notices and recovers from a failure: say why.
import type { ActivityOptions } from '@temporalio/workflow';

export const ActivityKinds = {
  /**
   * One quick Kubernetes or etcd call inside a running operation (add a learner, delete a Pod, take a
   * snapshot's first look). Retried fast, because the operation waits on it and its progress deadline runs.
   */
  operationStep: {
    startToCloseTimeout: '30s',
    retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '10s' },
  },
  /**
   * One quick call of a long-lived entity workflow (observe a cluster, write status, record an Event, keep a
   * Temporal Schedule): retried patiently, since nothing waits on it but the entity's own next look.
   */
  entityCall: {
    startToCloseTimeout: '30s',
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
  },
  /**
   * A call that waits inside itself for something to change (addLearner while etcd refuses a new member,
   * awaitAnswerChange polling for a member's first answer): it heartbeats on every poll, so a worker that died
   * is noticed within the heartbeat timeout rather than at the 30 s start-to-close.
   */
  waitingPoll: {
    startToCloseTimeout: '30s',
    heartbeatTimeout: '10s',
    retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '10s' },
  },
  /**
   * One long etcd step that blocks the member while it runs (defragmenting a member rewrites its whole
   * database). Longer than the activity's own etcd call timeout (DEFRAG_CALL_TIMEOUT_MS, 5 min), so etcd's
   * answer, not Temporal, ends a slow one.
   */
  longStep: {
    startToCloseTimeout: '6m',
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
  },
  /**
   * A long step whose activity heartbeats while it waits on etcd (defragment, compact): a worker that died is
   * noticed within the heartbeat timeout, not at the end of the 6 minutes.
   */
  longStepWithHeartbeat: {
    startToCloseTimeout: '6m',
    heartbeatTimeout: '30s',
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
  },
} as const satisfies Record<string, ActivityOptions>;
