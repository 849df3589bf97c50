// Turns a stream of probe outcomes into the probe's result; a result flips only after its threshold of consecutive outcomes.

export type ProbeKind = 'startup' | 'liveness' | 'readiness';
export type ProbeResult = 'unknown' | 'success' | 'failure';

export interface ProbeCounter {
  result: ProbeResult;
  consecutiveSuccesses: number;
  consecutiveFailures: number;
}

export interface ProbeThresholds {
  successThreshold: number;
  failureThreshold: number;
}

/** Before any outcome a readiness probe reads as not ready, a liveness probe as alive, a startup probe as undecided. */
export function initialProbeCounter(kind: ProbeKind): ProbeCounter {
  const result: ProbeResult = kind === 'readiness' ? 'failure' : kind === 'liveness' ? 'success' : 'unknown';
  return { result, consecutiveSuccesses: 0, consecutiveFailures: 0 };
}

export function recordProbeOutcome(
  counter: ProbeCounter,
  succeeded: boolean,
  thresholds: ProbeThresholds,
): ProbeCounter {
  if (succeeded) {
    const consecutiveSuccesses = counter.consecutiveSuccesses + 1;
    const result = consecutiveSuccesses >= thresholds.successThreshold ? 'success' : counter.result;
    return { result, consecutiveSuccesses, consecutiveFailures: 0 };
  }
  const consecutiveFailures = counter.consecutiveFailures + 1;
  const result = consecutiveFailures >= thresholds.failureThreshold ? 'failure' : counter.result;
  return { result, consecutiveSuccesses: 0, consecutiveFailures };
}

/** Probe spec defaults from the Kubernetes API. */
export function probeTimings(probe: {
  initialDelaySeconds?: number;
  periodSeconds?: number;
  timeoutSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
}): ProbeThresholds & { initialDelayMs: number; periodMs: number; timeoutMs: number } {
  return {
    initialDelayMs: (probe.initialDelaySeconds ?? 0) * 1000,
    periodMs: (probe.periodSeconds ?? 10) * 1000,
    timeoutMs: (probe.timeoutSeconds ?? 1) * 1000,
    successThreshold: probe.successThreshold ?? 1,
    failureThreshold: probe.failureThreshold ?? 3,
  };
}
