import { initialProbeCounter, probeTimings, recordProbeOutcome } from './probe-state';
import type { ProbeKind, ProbeResult } from './probe-state';

function run(
  kind: ProbeKind,
  outcomes: boolean[],
  successThreshold: number,
  failureThreshold: number,
): ProbeResult {
  return outcomes.reduce(
    (c, ok) => recordProbeOutcome(c, ok, { successThreshold, failureThreshold }),
    initialProbeCounter(kind),
  ).result;
}

describe('probe results', () => {
  const cases: Array<[string, ProbeKind, boolean[], number, number, ProbeResult]> = [
    ['a readiness probe is not ready before its first outcome', 'readiness', [], 1, 3, 'failure'],
    ['a liveness probe is alive before its first outcome', 'liveness', [], 1, 3, 'success'],
    ['a startup probe is undecided before its first outcome', 'startup', [], 1, 3, 'unknown'],
    ['one success makes a readiness probe ready with threshold 1', 'readiness', [true], 1, 3, 'success'],
    [
      'a readiness probe needs successThreshold consecutive successes',
      'readiness',
      [true, false, true],
      2,
      3,
      'failure',
    ],
    ['two consecutive successes reach a threshold of 2', 'readiness', [false, true, true], 2, 3, 'success'],
    ['liveness stays alive below the failure threshold', 'liveness', [false, false], 1, 3, 'success'],
    [
      'liveness fails after failureThreshold consecutive failures',
      'liveness',
      [false, false, false],
      1,
      3,
      'failure',
    ],
    [
      'a success in between resets the failure count',
      'liveness',
      [false, false, true, false, false],
      1,
      3,
      'success',
    ],
    [
      'a ready probe turns not ready only at the failure threshold',
      'readiness',
      [true, false],
      1,
      2,
      'success',
    ],
    ['a startup probe fails after its threshold', 'startup', [false, false], 1, 2, 'failure'],
  ];
  it.each(cases)('%s', (_name, kind, outcomes, st, ft, expected) => {
    expect(run(kind, outcomes, st, ft)).toBe(expected);
  });

  it('applies the API defaults when a probe sets no timings', () => {
    expect(probeTimings({})).toEqual({
      initialDelayMs: 0,
      periodMs: 10_000,
      timeoutMs: 1000,
      successThreshold: 1,
      failureThreshold: 3,
    });
  });
});
