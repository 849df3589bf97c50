import { stepKind } from './operator-process';

describe('stepKind', () => {
  it.each([
    ['add member ks-3 as a learner', 'add member <m> as a learner'],
    ['member ks-4 added as learner, starting its Pod', 'member <m> added as learner, starting its Pod'],
    ['promote learner ks-4 to voter', 'promote learner <m> to voter'],
    ['remove member ks-4 (scale down)', 'remove member <m> (scale down)'],
    [
      'restart member ks-1 on 3.6.16 (it runs 3.5.35): delete its Pod, keep its claim',
      'restart member <m> on <v> (it runs <v>): delete its Pod, keep its claim',
    ],
    [
      'wait (LearnerCatchingUp): ks-3 is 120 entries behind',
      'wait (LearnerCatchingUp): <m> is N entries behind',
    ],
    // Another cluster's members are not this cluster's: only figures go.
    ['remove member other-2', 'remove member other-N'],
  ])('%s', (step, kind) => {
    expect(stepKind(step, 'ks')).toBe(kind);
  });

  it('gives two members the same kind of step one kind', () => {
    expect(stepKind('add member ks-3 as a learner', 'ks')).toBe(
      stepKind('add member ks-4 as a learner', 'ks'),
    );
  });
});
