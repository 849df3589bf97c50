// How long a workflow waits before it looks again at a world that has not changed: fast at first, then backing off, so waiting costs little history.
//
// Pure and sandbox-safe. A wait that lasts is cheap: after its first five minutes a workflow waiting on an
// unchanging world looks at most once per MAX_WAIT_MS (about eleven history events each), far under the
// budget of 120 events an hour; a signal from the watcher (a Pod or claim changed) ends any wait early.

/** The longest pause between two looks at an unchanged world. */
export const MAX_WAIT_MS = 10 * 60_000;

/**
 * The pause before look number `streak` (0 for the first) at a wait that has not changed: `firstMs`, doubled
 * per look, at most MAX_WAIT_MS.
 */
export function waitBackoffMs(streak: number, firstMs: number): number {
  if (streak <= 0) return Math.min(firstMs, MAX_WAIT_MS);
  // 2^20 already exceeds any cap; bounding the exponent keeps the arithmetic exact.
  return Math.min(firstMs * 2 ** Math.min(streak, 20), MAX_WAIT_MS);
}

/**
 * How many looks at an unchanging world a wait costs in the hour after its first `afterMs` (what the
 * workflow tests hold the history to): the looks whose time falls in [afterMs, afterMs + 1 h).
 */
export function looksInHourAfter(afterMs: number, firstMs: number): number {
  let t = 0;
  let looks = 0;
  for (let streak = 0; t < afterMs + 3_600_000; streak++) {
    t += waitBackoffMs(streak, firstMs);
    if (t >= afterMs && t < afterMs + 3_600_000) looks++;
  }
  return looks;
}
