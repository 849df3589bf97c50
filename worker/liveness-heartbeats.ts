// Heartbeats every activity that has a heartbeat timeout while it runs, so a worker that died (SIGKILL, OOM, node lost) is noticed within that timeout instead of the activity's 30 s start-to-close.
//
// Temporal learns that a worker died only from a timeout: the activity task it held stays "started" until its
// heartbeat timeout or start-to-close runs out. Each call cannot be trusted to heartbeat by itself (most are
// one Kubernetes or etcd request), so the worker does it for them on a timer beside the call. A call that hangs
// in a live worker still heartbeats and is ended by its start-to-close, as before.
import type { ActivityInterceptorsFactory } from '@temporalio/worker';

/**
 * How often an activity with this heartbeat timeout heartbeats; undefined when it has none (nothing would
 * notice). A fifth of the timeout, so four beats in a row may be lost to a busy event loop or a slow server
 * before the activity is given up as dead; never more often than every 200 ms, never less than every 3 s.
 */
export function livenessBeatEveryMs(heartbeatTimeoutMs: number | undefined): number | undefined {
  if (heartbeatTimeoutMs === undefined || heartbeatTimeoutMs <= 0) return undefined;
  return Math.min(3000, Math.max(200, Math.floor(heartbeatTimeoutMs / 5)));
}

/**
 * How long the worker may hold a heartbeat before sending it to the server (Worker option
 * `maxHeartbeatThrottleInterval`). The SDK's own default is 80 % of the heartbeat timeout, which for a 5 s
 * timeout would leave 1 s between a sent beat and the deadline; 1 s keeps the server's view within a beat.
 */
export const MAX_HEARTBEAT_THROTTLE_MS = 1000;

/** The interceptor: beats on a timer while the activity runs, stops when it returns or throws. */
export const livenessHeartbeats: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    async execute(input, next) {
      const every = livenessBeatEveryMs(ctx.info.heartbeatTimeoutMs);
      if (every === undefined) return next(input);
      // No beat at the start: a call that ends within the interval (most do) costs the server nothing extra.
      const timer = setInterval(() => ctx.heartbeat(), every);
      try {
        return await next(input);
      } finally {
        clearInterval(timer);
      }
    },
  },
});
