// The member views and safety rules every planner shares, as tables: where a member stands, who votes now,
// quorum, which removal keeps it, catch-up, who serves, who leads next.
import {
  canRemove,
  caughtUp,
  clusterMembers,
  dataKept,
  isServing,
  leaderSuccessor,
  learnerCaughtUp,
  memberState,
  ordinalFor,
  quorum,
  quorumEvidence,
  servingView,
  votesNow,
} from './cluster-state';
import type { KubeMemberView } from './plan-types';

type Pod = NonNullable<KubeMemberView['pod']>;
const pod = (over: Partial<Pod> = {}): Pod => ({
  phase: 'Running',
  ready: true,
  terminating: false,
  ...over,
});
const claim = (over: Partial<NonNullable<KubeMemberView['claim']>> = {}) => ({
  terminating: false,
  dataLost: false,
  ...over,
});
const kube = (over: Partial<KubeMemberView> = {}): KubeMemberView => ({ name: 'c-0', ...over });
const etcdMember = (started: boolean, reachable = started) => ({
  id: '1',
  name: 'c-0',
  isLearner: false,
  started,
  reachable,
});

describe('member views', () => {
  test.each([
    [
      'a live Pod on a kept claim runs',
      etcdMember(true),
      kube({ pod: pod(), claim: claim() }),
      '',
      'running',
    ],
    [
      'a kept claim without a Pod misses its Pod',
      etcdMember(true),
      kube({ claim: claim() }),
      '',
      'podMissing',
    ],
    [
      'a Pod being deleted on a kept claim is terminating',
      etcdMember(true),
      kube({ pod: pod({ terminating: true }), claim: claim() }),
      '',
      'terminating',
    ],
    ['a started member whose claim is gone is lost', etcdMember(true), kube({ pod: pod() }), '', 'lost'],
    [
      'a started member on a claim marked data-lost is lost',
      etcdMember(true),
      kube({ pod: pod(), claim: claim({ dataLost: true }) }),
      '',
      'lost',
    ],
    ['a started Memory member without a live Pod is lost', etcdMember(true), kube(), 'Memory', 'lost'],
    ['a Memory member with a live Pod runs', etcdMember(true), kube({ pod: pod() }), 'Memory', 'running'],
    ['a member that never started and has nothing is a zombie', etcdMember(false), undefined, '', 'zombie'],
    [
      'a member that never started, with a Pod that failed, on its claim misses its Pod',
      etcdMember(false),
      kube({ pod: pod({ phase: 'Failed' }), claim: claim() }),
      '',
      'podMissing',
    ],
  ] as const)('%s', (_, m, k, medium, state) => {
    expect(memberState(m, k, medium)).toBe(state);
  });

  test.each([
    ['started, answering, live Pod', etcdMember(true), kube({ pod: pod() }), true],
    [
      'started, answering, Pod not Ready yet (still votes)',
      etcdMember(true),
      kube({ pod: pod({ ready: false }) }),
      true,
    ],
    ['started but not answering', etcdMember(true, false), kube({ pod: pod() }), false],
    ['never started', etcdMember(false, true), kube({ pod: pod() }), false],
    [
      'answering, but its Pod is being deleted',
      etcdMember(true),
      kube({ pod: pod({ terminating: true }) }),
      false,
    ],
    [
      'answering, but its Pod has Succeeded',
      etcdMember(true),
      kube({ pod: pod({ phase: 'Succeeded' }) }),
      false,
    ],
    ['answering, no Pod at all', etcdMember(true), undefined, false],
  ])('votes now: %s -> %s', (_, m, k, votes) => {
    expect(votesNow(m, k)).toBe(votes);
  });

  test.each([
    ['Disk (""): a kept claim', kube({ claim: claim() }), '', true],
    ['Disk (""): a claim being deleted', kube({ claim: claim({ terminating: true }) }), '', false],
    ['Disk (""): no claim, a live Pod', kube({ pod: pod() }), '', false],
    ['Memory: a live Pod', kube({ pod: pod() }), 'Memory', true],
    ['Memory: a kept claim, no Pod', kube({ claim: claim() }), 'Memory', false],
  ] as const)('data kept: %s -> %s', (_, k, medium, kept) => {
    expect(dataKept(k, medium)).toBe(kept);
  });

  test('ordinals: names the operator did not give sort last', () => {
    expect(ordinalFor('c', 'c-3')).toBe(3);
    expect(ordinalFor('c', 'someone-else')).toBe(Number.MAX_SAFE_INTEGER);
  });

  test('clusterMembers joins etcd and Kubernetes views by name; servingView is what rolling planners read', () => {
    const members = clusterMembers(
      {
        clusterId: '99',
        members: [
          { id: '10', name: 'c-1', isLearner: false, started: true, reachable: true, raftIndex: '7' },
          { id: '11', name: 'c-0', isLearner: true, started: true, reachable: true },
        ],
      },
      [
        kube({ name: 'c-0', pod: pod({ ready: false }), claim: claim() }),
        kube({ name: 'c-1', claim: claim() }),
      ],
      'c',
      '',
    );
    expect(members.map((m) => [m.name, m.state, m.healthy, m.ordinal])).toEqual([
      ['c-1', 'podMissing', false, 1],
      ['c-0', 'running', true, 0],
    ]);
    expect(members.map((m, i) => servingView(m, i === 1 ? { ready: false } : undefined))).toEqual([
      { id: '10', name: 'c-1', ordinal: 1, isLearner: false, healthy: false, ready: false },
      { id: '11', name: 'c-0', ordinal: 0, isLearner: true, healthy: true, ready: false },
    ]);
  });
});

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

describe('quorumEvidence: what shows that a quorum holds, the one rule for the planner and for Available', () => {
  type V = {
    n: number;
    learner?: boolean;
    started?: boolean;
    reachable?: boolean;
    pod?: 'live' | 'none' | 'gone';
  };
  const view = (members: V[]) => ({
    etcd: {
      clusterId: '1',
      leaderId: '0',
      members: members.map((m) => ({
        id: String(m.n),
        name: `c-${m.n}`,
        isLearner: m.learner ?? false,
        started: m.started ?? true,
        reachable: m.reachable ?? true,
      })),
    },
    kube: members.flatMap((m): KubeMemberView[] =>
      m.pod === 'none' ? [] : [{ name: `c-${m.n}`, pod: pod(m.pod === 'gone' ? { terminating: true } : {}) }],
    ),
  });
  const slow = { reachable: false };
  test.each([
    ['no answer from etcd: quorum cannot be shown', undefined, [false, 'none', 0, 0, 0]],
    ['every voter votes: by votes', view([{ n: 0 }, { n: 1 }, { n: 2 }]), [true, 'votes', 3, 3, 2]],
    [
      'exactly a quorum votes: by votes',
      view([{ n: 0 }, { n: 1 }, { n: 2, ...slow }]),
      [true, 'votes', 3, 2, 2],
    ],
    [
      '2 of 4 voters answer their status (the soak finding): the linearizable member list shows quorum',
      view([{ n: 0 }, { n: 1 }, { n: 2, ...slow }, { n: 3, ...slow }]),
      [true, 'memberList', 4, 2, 3],
    ],
    [
      'learners neither vote nor count toward what is needed',
      view([
        { n: 0 },
        { n: 1, ...slow },
        { n: 2, ...slow },
        { n: 3, learner: true },
        { n: 4, learner: true },
      ]),
      [true, 'memberList', 3, 1, 2],
    ],
    [
      'a voter whose Pod is gone does not vote, even if its status answered a moment ago',
      view([{ n: 0 }, { n: 1, pod: 'none' }, { n: 2, pod: 'gone' }]),
      [true, 'memberList', 3, 1, 2],
    ],
    [
      'a voter etcd lists as not started does not vote',
      view([{ n: 0 }, { n: 1, started: false }, { n: 2, started: false }]),
      [true, 'memberList', 3, 1, 2],
    ],
    ['a single voter that answers is a quorum', view([{ n: 0 }]), [true, 'votes', 1, 1, 1]],
  ])('%s', (_name, observedView, [holds, proof, voters, voting, needed]) => {
    const q = quorumEvidence(observedView?.etcd, observedView?.kube ?? []);
    expect(q).toEqual({ holds, proof, voters, voting, needed });
  });
});
