// The soak's invariants, judged from what each step observed (pure): the spec reached within its bound, nothing
// acknowledged lost or changed, hashkv equal once settled, never more than one learner, never fewer voters than the
// step's floor; and the summary table and timeline the soak prints.

export interface StepObservation {
  index: number;
  action: string;
  startedAt: number;
  endedAt: number;
  boundMs: number;
  /** From the action's start to the spec reached; undefined if not within the bound. */
  convergedMs?: number;
  /** Why it did not converge or could not be checked (the last observation), if so. */
  error?: string;
  writes: {
    acknowledged: number;
    failed: number;
    longestGapMs: number;
    /** Acknowledged keys missing, or stored with another value or revision, on some member (undefined: not read). */
    lost?: number;
    changed?: number;
    unexpected?: number;
  };
  /** undefined when not taken (paused, or not converged). */
  hashesEqual?: boolean;
  membership: {
    samples: number;
    mostLearners: number;
    fewestVoters: number;
    mostVoters: number;
    /** What the sampler's final round saw (membership-sampler.ts); absent when no member answered it. */
    finalVoters?: number;
  };
  floor: number;
  /** The voters the step ends with (its spec's replicas); absent for a pause, which ends with no member answering. */
  expectedVoters?: number;
}

export interface Violation {
  step: number;
  invariant: string;
  detail: string;
}

/** Every invariant the step broke (none: it held). */
export function stepViolations(o: StepObservation): Violation[] {
  const v: Violation[] = [];
  const add = (invariant: string, detail: string) => v.push({ step: o.index, invariant, detail });
  if (o.convergedMs === undefined)
    add('converges to the spec', `not within ${Math.round(o.boundMs / 1000)} s: ${o.error ?? 'no detail'}`);
  if ((o.writes.lost ?? 0) > 0)
    add('nothing acknowledged lost', `${o.writes.lost} acknowledged writes missing on some member`);
  if ((o.writes.changed ?? 0) + (o.writes.unexpected ?? 0) > 0)
    add(
      'nothing changed or invented',
      `${o.writes.changed ?? 0} writes changed, ${o.writes.unexpected ?? 0} keys never written`,
    );
  if (o.hashesEqual === false) add('hashkv equal when settled', 'members disagree at one revision');
  if (o.membership.mostLearners > 1)
    add('at most one learner', `${o.membership.mostLearners} learners in one member list`);
  if (o.membership.samples > 0 && o.membership.fewestVoters < o.floor)
    add('membership never below the floor', `${o.membership.fewestVoters} voters, floor ${o.floor}`);
  // A sampler that saw no member, or only a stale one, at the end could not have vouched for the step either.
  if (
    o.convergedMs !== undefined &&
    o.expectedVoters !== undefined &&
    o.membership.finalVoters !== o.expectedVoters
  )
    add(
      'membership sampled',
      o.membership.finalVoters === undefined
        ? `no member answered the sampler's final view (${o.membership.samples} samples in the step)`
        : `the sampler's final view shows ${o.membership.finalVoters} voters, ${o.expectedVoters} expected`,
    );
  return v;
}

export interface LinearizabilityVerdict {
  result: 'Ok' | 'Illegal' | 'Unknown' | 'BadInput';
  operations: number;
  unknown: number;
  keys: number;
  visualization?: string;
  error?: string;
}

/** Only `Ok` passes: a history porcupine could not decide in its time proves nothing, so it is reported as one. */
export function linearizabilityViolations(v: LinearizabilityVerdict): Violation[] {
  if (v.result === 'Ok') return [];
  const detail =
    v.result === 'Illegal'
      ? `porcupine found no linearization of ${v.operations} calls (${v.unknown} of unknown outcome)${v.visualization ? `; see ${v.visualization}` : ''}`
      : v.result === 'Unknown'
        ? `porcupine did not decide within its time (${v.operations} calls, ${v.unknown} unknown)`
        : `the checker refused the history: ${v.error ?? ''}`;
  return [{ step: -1, invariant: 'linearizable', detail }];
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** The summary as a Markdown table, one row per step. */
export function summaryTable(steps: readonly StepObservation[]): string {
  const header = [
    '#',
    'action',
    'converged (bound)',
    'acknowledged',
    'failed',
    'longest gap',
    'lost',
    'hashkv',
    'learners max',
    'voters min (floor)',
    'result',
  ];
  const rows = steps.map((s) => {
    const bad = stepViolations(s);
    return [
      String(s.index),
      s.action,
      `${s.convergedMs === undefined ? 'NO' : seconds(s.convergedMs)} (${Math.round(s.boundMs / 1000)} s)`,
      String(s.writes.acknowledged),
      String(s.writes.failed),
      `${s.writes.longestGapMs} ms`,
      s.writes.lost === undefined ? '-' : String(s.writes.lost),
      s.hashesEqual === undefined ? '-' : s.hashesEqual ? 'equal' : 'DIFFERENT',
      String(s.membership.mostLearners),
      s.membership.samples === 0 ? `- (${s.floor})` : `${s.membership.fewestVoters} (${s.floor})`,
      bad.length === 0 ? 'ok' : `VIOLATION: ${bad.map((b) => b.invariant).join('; ')}`,
    ];
  });
  return [header, header.map(() => '---'), ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');
}

export interface TimelineEntry {
  at: number;
  text: string;
}

/** The timeline, each line offset from the soak's start, as printed with the seed on a violation. */
export function formatTimeline(startedAt: number, entries: readonly TimelineEntry[]): string {
  return [...entries]
    .sort((a, b) => a.at - b.at)
    .map((e) => `+${((e.at - startedAt) / 1000).toFixed(1).padStart(7)} s  ${e.text}`)
    .join('\n');
}
