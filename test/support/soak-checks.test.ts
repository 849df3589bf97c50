import type { StepObservation } from './soak-checks';
import { formatTimeline, linearizabilityViolations, stepViolations, summaryTable } from './soak-checks';

const healthy: StepObservation = {
  index: 4,
  action: 'scale to 5',
  startedAt: 1000,
  endedAt: 61_000,
  boundMs: 300_000,
  convergedMs: 42_000,
  writes: { acknowledged: 800, failed: 0, longestGapMs: 120, lost: 0, changed: 0, unexpected: 0 },
  hashesEqual: true,
  membership: { samples: 200, mostLearners: 1, fewestVoters: 3, mostVoters: 5 },
  floor: 3,
};

describe('stepViolations', () => {
  it.each<[string, Partial<StepObservation>, string[]]>([
    ['a step that converged with everything kept breaks nothing', {}, []],
    [
      'no convergence within the bound',
      { convergedMs: undefined, error: 'timed out' },
      ['converges to the spec'],
    ],
    [
      'an acknowledged write missing',
      { writes: { ...healthy.writes, lost: 1 } },
      ['nothing acknowledged lost'],
    ],
    [
      'a write stored with another value',
      { writes: { ...healthy.writes, changed: 1 } },
      ['nothing changed or invented'],
    ],
    ['a key nobody wrote', { writes: { ...healthy.writes, unexpected: 2 } }, ['nothing changed or invented']],
    ['members that disagree on hashkv', { hashesEqual: false }, ['hashkv equal when settled']],
    ['hashkv not taken (paused) is not a violation', { hashesEqual: undefined }, []],
    [
      'two learners at once',
      { membership: { ...healthy.membership, mostLearners: 2 } },
      ['at most one learner'],
    ],
    [
      'voters below the floor',
      { membership: { ...healthy.membership, fewestVoters: 2 } },
      ['membership never below the floor'],
    ],
    [
      'a step that ends with members whose final view shows them passes',
      { membership: { ...healthy.membership, finalVoters: 5 }, expectedVoters: 5 },
      [],
    ],
    [
      'a step that ends with members but whose sampler saw none at the end is a violation',
      { membership: { samples: 0, mostLearners: 0, fewestVoters: 0, mostVoters: 0 }, expectedVoters: 5 },
      ['membership sampled'],
    ],
    [
      'a final view from a stale member (voters 5..5 through 5 -> 3) is a violation',
      {
        membership: { samples: 90, mostLearners: 0, fewestVoters: 5, mostVoters: 5, finalVoters: 5 },
        expectedVoters: 3,
      },
      ['membership sampled'],
    ],
    [
      'a step that did not converge is judged by convergence, not by its final view',
      { convergedMs: undefined, membership: { ...healthy.membership }, expectedVoters: 5 },
      ['converges to the spec'],
    ],
    [
      'no sample at all (paused) says nothing about voters',
      { membership: { samples: 0, mostLearners: 0, fewestVoters: 0, mostVoters: 0 } },
      [],
    ],
    [
      'several at once, each named',
      { hashesEqual: false, writes: { ...healthy.writes, lost: 3 } },
      ['nothing acknowledged lost', 'hashkv equal when settled'],
    ],
  ])('%s', (_, change, invariants) => {
    const v = stepViolations({ ...healthy, ...change });
    expect(v.map((x) => x.invariant)).toEqual(invariants);
    expect(v.every((x) => x.step === 4)).toBe(true);
  });
});

describe('linearizabilityViolations', () => {
  it.each([
    ['Ok', 0],
    ['Illegal', 1],
    ['Unknown', 1],
    ['BadInput', 1],
  ] as const)('%s gives %i violations', (result, n) => {
    expect(linearizabilityViolations({ result, operations: 10, unknown: 1, keys: 2 })).toHaveLength(n);
  });
});

describe('summaryTable', () => {
  it('prints one Markdown row per step, with its figures and what it broke', () => {
    const table = summaryTable([
      healthy,
      { ...healthy, index: 5, hashesEqual: false, convergedMs: undefined },
    ]);
    const lines = table.split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toContain('| # | action | converged (bound) |');
    expect(lines[2]).toBe(
      '| 4 | scale to 5 | 42.0 s (300 s) | 800 | 0 | 120 ms | 0 | equal | 1 | 3 (3) | ok |',
    );
    expect(lines[3]).toContain('NO (300 s)');
    expect(lines[3]).toContain('VIOLATION: converges to the spec; hashkv equal when settled');
  });
});

describe('formatTimeline', () => {
  it('orders entries by time and offsets them from the start', () => {
    expect(
      formatTimeline(10_000, [
        { at: 12_500, text: 'scale to 5' },
        { at: 10_000, text: 'created' },
      ]),
    ).toBe('+    0.0 s  created\n+    2.5 s  scale to 5');
  });
});
