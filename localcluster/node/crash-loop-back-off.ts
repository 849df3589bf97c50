// Decides how long a failed container waits before its next start; mirrors the kubelet's per-container back-off.

export interface BackOffConfig {
  initialMs: number;
  maxMs: number;
}

/** The kubelet's defaults: 10 s doubling to 5 min; an entry untouched for 2 × max is forgotten. */
export const KUBELET_BACK_OFF: BackOffConfig = { initialMs: 10_000, maxMs: 300_000 };

export interface BackOffEntry {
  backOffMs: number;
  lastUpdate: number;
}

export interface RestartPlan {
  /** How long to wait before starting again (0: start now). */
  delayMs: number;
  /** The entry to keep once the container has been started again. */
  next: BackOffEntry;
}

/**
 * The first failure restarts at once; while an entry is live, the container waits until `finishedAt + backOff`,
 * and each restart doubles the back-off up to max (the kubelet measures the wait from the exit, not the start).
 */
export function planRestart(
  entry: BackOffEntry | undefined,
  finishedAt: number,
  now: number,
  config: BackOffConfig,
): RestartPlan {
  const live = entry !== undefined && finishedAt - entry.lastUpdate <= 2 * config.maxMs;
  const delayMs = live ? Math.max(0, finishedAt + entry.backOffMs - now) : 0;
  const backOffMs = live ? Math.min(entry.backOffMs * 2, config.maxMs) : config.initialMs;
  return { delayMs, next: { backOffMs, lastUpdate: now + delayMs } };
}
