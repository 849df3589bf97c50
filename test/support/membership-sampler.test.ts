import type { MembershipSample } from './membership-sampler';
import { membershipFigures } from './membership-sampler';

const sample = (at: number, members: [string, boolean][]): MembershipSample => ({
  at,
  from: 'svc',
  members: members.map(([id, isLearner]) => ({ id, name: `m-${id}`, isLearner })),
});

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
