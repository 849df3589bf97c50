// The safety rules every planner shares, as tables: quorum, which removal keeps it, catch-up, who serves, who leads next.
import { canRemove, caughtUp, isServing, leaderSuccessor, learnerCaughtUp, quorum } from './cluster-state';

describe('quorum arithmetic', () => {
  test.each([
    [1, 1],
    [2, 2],
    [3, 2],
    [4, 3],
    [5, 3],
    [9, 5],
  ])('a cluster of %i voters needs %i', (voters, needed) => {
    expect(quorum(voters)).toBe(needed);
  });

  const v = (n: number, healthy = true, isLearner = false) => ({ id: String(n), isLearner, healthy });
  test.each([
    ['a healthy follower of a healthy 2-member cluster can go', [v(0), v(1)], '1', true],
    ['nothing can go from a 2-member cluster with one member down', [v(0), v(1, false)], '1', false],
    ['the last voter never goes', [v(0)], '0', false],
    ['a down member of 3 can go when the other two are healthy', [v(0), v(1), v(2, false)], '2', true],
    ['a healthy member of 3 cannot go while another is down', [v(0), v(1), v(2, false)], '1', false],
    [
      'a learner can go whenever the voters have quorum',
      [v(0), v(1), v(2, false), v(3, false, true)],
      '3',
      true,
    ],
    [
      'a learner cannot go when the voters have no quorum',
      [v(0), v(1, false), v(2, false), v(3, true, true)],
      '3',
      false,
    ],
    ['an unknown member cannot go', [v(0), v(1)], '7', false],
    ['a healthy member of 5 with one down can go', [v(0), v(1), v(2), v(3), v(4, false)], '3', true],
  ])('%s', (_name, members, target, expected) => {
    expect(canRemove(members, target)).toBe(expected);
  });
});

describe('learner catch-up', () => {
  test.each([
    ['900', '1000', true],
    ['899', '1000', false],
    ['18446744073709551000', '18446744073709551615', true],
    [undefined, '1000', false],
    ['1000', undefined, false],
  ])('a learner at %s with the leader at %s is caught up: %s', (learner, leader, expected) => {
    expect(learnerCaughtUp(learner, leader)).toBe(expected);
  });
});

describe('caughtUp', () => {
  const m = (raftIndex?: string) => ({
    id: '1',
    name: 'main-1',
    ordinal: 1,
    isLearner: false,
    healthy: true,
    ready: true,
    ...(raftIndex !== undefined ? { raftIndex } : {}),
  });
  test.each([
    ['level with the leader', '5000', '5000', true],
    ['1000 entries behind', '4000', '5000', true],
    ['1001 entries behind', '3999', '5000', false],
    ['no index reported', undefined, '5000', false],
  ])('a member %s: %s', (_what, member, leader, want) => {
    expect(caughtUp(m(member), m(leader))).toBe(want);
  });
});

describe('isServing', () => {
  test.each([
    ['a healthy Ready voter serves', { healthy: true, ready: true, isLearner: false }, true],
    ['a voter whose Pod is not Ready does not', { healthy: true, ready: false, isLearner: false }, false],
    ['a voter that does not answer does not', { healthy: false, ready: true, isLearner: false }, false],
    ['a learner that answers serves, Ready or not', { healthy: true, ready: false, isLearner: true }, true],
    ['a learner that does not answer does not', { healthy: false, ready: true, isLearner: true }, false],
  ])('%s', (_name, member, expected) => {
    expect(isServing(member)).toBe(expected);
  });
});

describe('leaderSuccessor', () => {
  const v = (ordinal: number, raftIndex?: string, isLearner = false) => ({
    id: String(ordinal),
    ordinal,
    isLearner,
    ...(raftIndex !== undefined ? { raftIndex } : {}),
  });
  test.each([
    ['the most caught-up voter takes over', [v(0, '10'), v(1, '8'), v(2, '9')], '0', '2'],
    ['equal progress goes to the lowest ordinal', [v(0, '10'), v(1, '9'), v(2, '9')], '0', '1'],
    ['raft indexes compare as 64-bit numbers, not strings', [v(0), v(1, '9'), v(2, '10')], '0', '2'],
    ['a learner never takes over', [v(0, '5'), v(1, '4'), v(2, '99', true)], '0', '1'],
    ['a member without a reported index ranks last', [v(0, '5'), v(1), v(2, '1')], '0', '2'],
    ['the leader itself is no successor', [v(0, '99'), v(1, '1')], '0', '1'],
    ['a single voter has no successor', [v(0, '5'), v(1, '9', true)], '0', undefined],
  ])('%s', (_name, candidates, from, expected) => {
    expect(leaderSuccessor(candidates, { id: from })?.id).toBe(expected);
  });
});
