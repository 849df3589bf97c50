import type { MembershipSample } from './membership-sampler';
import { longestBlind, membershipFigures, membershipProblems } from './membership-sampler';

const sample = (at: number, members: [string, boolean][], from = 'svc', final = false): MembershipSample => ({
  at,
  from,
  members: members.map(([id, isLearner]) => ({ id, name: `m-${id}`, isLearner })),
  ...(final ? { final } : {}),
});
const voters = (...ids: string[]): [string, boolean][] => ids.map((id) => [id, false]);

describe('membershipFigures', () => {
  test.each([
    {
      case: 'no samples give zeros',
      samples: [],
      want: { samples: 0, mostLearners: 0, fewestVoters: 0, mostVoters: 0, voterIds: [] },
    },
    {
      case: 'a scale-up adds one learner at a time and promotes it',
      samples: [
        sample(1, [
          ['a', false],
          ['b', false],
          ['c', false],
        ]),
        sample(2, [
          ['a', false],
          ['b', false],
          ['c', false],
          ['d', true],
        ]),
        sample(3, [
          ['a', false],
          ['b', false],
          ['c', false],
          ['d', false],
        ]),
      ],
      want: { samples: 3, mostLearners: 1, fewestVoters: 3, mostVoters: 4, voterIds: ['a', 'b', 'c', 'd'] },
    },
    {
      case: 'two learners at once are seen',
      samples: [
        sample(1, [
          ['a', false],
          ['d', true],
          ['e', true],
        ]),
      ],
      want: { samples: 1, mostLearners: 2, fewestVoters: 1, mostVoters: 1, voterIds: ['a'] },
    },
    {
      case: 'a scale-down removes voters one at a time',
      samples: [
        sample(1, [
          ['a', false],
          ['b', false],
          ['c', false],
        ]),
        sample(2, [
          ['a', false],
          ['b', false],
        ]),
      ],
      want: { samples: 2, mostLearners: 0, fewestVoters: 2, mostVoters: 3, voterIds: ['a', 'b', 'c'] },
    },
  ])('$case', ({ samples, want }) => {
    expect(membershipFigures(samples)).toMatchObject(want);
  });

  test('names the sample with the most learners and the one with the fewest voters', () => {
    const two = sample(2, [
      ['a', false],
      ['d', true],
      ['e', true],
    ]);
    const f = membershipFigures([
      sample(1, [
        ['a', false],
        ['b', false],
      ]),
      two,
    ]);
    expect(f.mostLearnersAt).toBe(two);
    expect(f.fewestVotersAt).toBe(two);
  });
});

describe('longestBlind', () => {
  test.each([
    ['no samples over a span: blind throughout', [], { startedAt: 0, stoppedAt: 9000 }, 9000],
    [
      'samples every second: blind a second at most',
      [1000, 2000, 3000],
      { startedAt: 0, stoppedAt: 4000 },
      1000,
    ],
    ['a long silence in the middle counts', [500, 1000, 12_000], { startedAt: 0, stoppedAt: 12_500 }, 11_000],
    [
      'nothing after the first samples counts up to the stop',
      [100, 200],
      { startedAt: 0, stoppedAt: 60_000 },
      59_800,
    ],
    ['without a span only the samples count', [100, 200, 700], undefined, 500],
  ])('%s', (_name, at, span, want) => {
    expect(
      longestBlind(
        at.map((t) => sample(t, voters('a'))),
        span,
      ),
    ).toBe(want);
  });
});

describe('membershipProblems: a sampler that saw nothing, or only stale views, fails', () => {
  const span = { startedAt: 0, stoppedAt: 4000 };
  const every = (to: number, ids: string[], from = 'svc') =>
    Array.from({ length: to / 500 }, (_, i) => sample(i * 500, voters(...ids), from));
  test.each([
    {
      case: 'a scale-down 5 -> 3 seen throughout and at the end passes',
      samples: [
        ...every(2000, ['a', 'b', 'c', 'd', 'e']),
        sample(2500, voters('a', 'b', 'c', 'd')),
        sample(3000, voters('a', 'b', 'c')),
        sample(4000, voters('a', 'b', 'c'), 'svc', true),
      ],
      expectation: { what: 'x', floor: 3, finalVoters: 3 },
      want: [],
    },
    {
      case: 'the finding: voters 5..5 through a 5 -> 3 scale-down (only a stale member answered at the end) fails',
      samples: [
        ...every(4000, ['a', 'b', 'c', 'd', 'e'], 'http://m-4'),
        sample(4000, voters('a', 'b', 'c', 'd', 'e'), 'http://m-4', true),
      ],
      expectation: { what: 'x', floor: 3, finalVoters: 3 },
      want: ['the final view shows 5 voters, 3 expected'],
    },
    {
      case: 'a stale removed member in the final round does not hide a current one (the fewest voters count)',
      samples: [
        ...every(4000, ['a', 'b', 'c']),
        sample(4000, voters('a', 'b', 'c', 'd', 'e'), 'http://m-4', true),
        sample(4000, voters('a', 'b', 'c'), 'svc', true),
      ],
      expectation: { what: 'x', floor: 3, finalVoters: 3 },
      want: [],
    },
    {
      case: 'no sample at all fails, however the rest reads',
      samples: [],
      expectation: { what: 'x', floor: 3 },
      want: ['the sampler saw no member list at all', 'no member answered the final view'],
    },
    {
      case: 'samples at the start and the end but a blind middle longer than the bound fails',
      samples: [sample(0, voters('a', 'b', 'c')), sample(3900, voters('a', 'b', 'c'), 'svc', true)],
      expectation: { what: 'x', floor: 3, blindBoundMs: 2000 },
      want: ['the sampler saw nothing for 3900 ms (bound 2000 ms)'],
    },
    {
      case: 'no answer to the final view fails even with good samples before',
      samples: every(4000, ['a', 'b', 'c']),
      expectation: { what: 'x', floor: 3 },
      want: ['no member answered the final view'],
    },
    {
      case: 'two learners at once and a voter below the floor are both named',
      samples: [
        sample(0, [
          ['a', false],
          ['b', true],
          ['c', true],
        ]),
        ...every(4000, ['a', 'b', 'c']).slice(1),
        sample(4000, voters('a', 'b', 'c'), 'svc', true),
      ],
      expectation: { what: 'x', floor: 3 },
      want: [expect.stringMatching(/^2 learners at once/), expect.stringMatching(/^1 voters, floor 3/)],
    },
    {
      case: 'a fault that brought other members back (other ids) fails on the ids, throughout and at the end',
      samples: [...every(4000, ['a', 'b', 'c']), sample(4000, voters('a', 'b', 'x'), 'svc', true)],
      expectation: { what: 'x', floor: 3, voterIds: ['a', 'b', 'c'] },
      want: ['voter ids a,b,c,x, expected a,b,c', 'final voter ids a,b,x, expected a,b,c'],
    },
  ])('$case', ({ samples, expectation, want }) => {
    expect(membershipProblems(membershipFigures(samples, span), expectation)).toEqual(want);
  });

  test('samples are counted per source, so a sampler that only one endpoint answers shows it', () => {
    const f = membershipFigures([
      sample(0, voters('a'), 'svc'),
      sample(1, voters('a'), 'svc'),
      sample(2, voters('a'), 'http://m-0'),
    ]);
    expect(f.bySource).toEqual({ svc: 2, 'http://m-0': 1 });
  });
});
