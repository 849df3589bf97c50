// Heartbeats for activities that may run longer than 10 s: a worker that died is noticed within the heartbeat timeout, not the start-to-close.
import { Context } from '@temporalio/activity';

/** How often a long call heartbeats while it runs; inside every heartbeat timeout the workflows set (5-30 s). */
export const HEARTBEAT_EVERY_MS = 3000;

/** Heartbeats when running as an activity; a plain call (a unit test, a tool) has nobody to tell. */
export function heartbeat(): void {
  let context: Context | undefined;
  try {
    context = Context.current();
  } catch {
    context = undefined;
  }
  context?.heartbeat();
}

/** Awaits `work`, heartbeating every HEARTBEAT_EVERY_MS meanwhile (one long etcd call such as Defragment). */
export async function heartbeating<T>(work: Promise<T>): Promise<T> {
  heartbeat();
  const timer = setInterval(heartbeat, HEARTBEAT_EVERY_MS);
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}
