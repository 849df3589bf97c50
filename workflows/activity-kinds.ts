// The few kinds of activity call a workflow makes, each with its timeout and retry policy defined once here; a workflow file names a kind instead of spelling options out.
//
// Changing a kind's timeouts or retries keeps recorded histories replayable (replay checks an activity's type,
// not its options), but it changes how fast a running operation notices and recovers from a failure: say why.
//
// A worker that dies (SIGKILL, OOM, its node lost) is only noticed by a timeout: the activity it held stays
// started until its heartbeat timeout, or without one its start-to-close, runs out. The worker heartbeats every
// activity that has a heartbeat timeout on a timer while it runs (worker/liveness-heartbeats.ts), so the quick
// kinds carry a short one (QUICK_HEARTBEAT_TIMEOUT) and a killed worker's step is retried within ~5 s, while
// start-to-close still ends a call that hangs in a live worker.
import type { ActivityOptions } from '@temporalio/workflow';

/**
 * The heartbeat timeout of the quick kinds: how long after a worker dies its activity is retried elsewhere.
 * The worker beats every second (a fifth of it), so only a stall of ~4 s in a live worker could end a call
 * early, and then the call, idempotent like every activity, is only repeated.
 */
export const QUICK_HEARTBEAT_TIMEOUT = '5s';

export const ActivityKinds = {
  /**
   * One quick Kubernetes or etcd call inside a running operation (add a learner, delete a Pod, take a
   * snapshot's first look). Retried fast, because the operation waits on it and its progress deadline runs.
   */
  operationStep: {
    startToCloseTimeout: '30s',
    heartbeatTimeout: QUICK_HEARTBEAT_TIMEOUT,
    retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '10s' },
  },
  /**
   * One quick call of a long-lived entity workflow (observe a cluster, write status, record an Event, keep a
   * Temporal Schedule): retried patiently, since nothing waits on it but the entity's own next look.
   */
  entityCall: {
    startToCloseTimeout: '30s',
    heartbeatTimeout: QUICK_HEARTBEAT_TIMEOUT,
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
  },
  /**
   * One call of a long-lived entity workflow whose failure must not hold the entity's look for ever (keep the
   * cluster's defrag Temporal Schedule): a few attempts, about a quarter of a minute, then the caller reports the
   * failure and goes on, and tries again later. An endless retry there would stop every operation of the cluster
   * for the sake of its defrag schedule (a Temporal that refuses schedules for want of permission, say).
   */
  entityCallBounded: {
    startToCloseTimeout: '30s',
    heartbeatTimeout: QUICK_HEARTBEAT_TIMEOUT,
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10s', maximumAttempts: 5 },
  },
  /**
   * A call that waits inside itself for something to change (addLearner while etcd refuses a new member,
   * awaitAnswerChange polling for a member's first answer): it heartbeats on every poll and the worker beats
   * for it between polls, so the quick kinds' short heartbeat timeout fits it too.
   */
  waitingPoll: {
    startToCloseTimeout: '30s',
    heartbeatTimeout: QUICK_HEARTBEAT_TIMEOUT,
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
