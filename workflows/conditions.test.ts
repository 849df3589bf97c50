// Status from observation: condition verdicts as tables, transition times that move only on a flip, and no-op writes detected.
import { Reasons } from '../crds/conditions';
import type { EtcdClusterStatus } from '../crds/etcd-cluster';
import {
  computeStatus,
  hexMemberId,
  equalStatus,
  memberError,
  roundedLag,
  findCondition,
  memberReady,
  setCondition,
  statusChanged,
  DB_SIZE_NEWS_BYTES,
  withoutSmallSizeMoves,
} from './conditions';
import type { StatusInput } from './conditions';
import { plan } from './plan';
import type { Desired, EtcdMemberView, KubeMemberView, Observed } from './plan';

const T0 = '2025-01-01T00:00:00Z';
const T1 = '2025-01-01T00:05:00Z';

const voter = (n: number, over: Partial<EtcdMemberView> = {}): EtcdMemberView => ({
  id: `1000000000000000000${n}`,
  name: `main-${n}`,
  isLearner: false,
  started: true,
  reachable: true,
  raftIndex: '100',
  version: '3.6.16',
  ...over,
});
const kube = (n: number, ready = true, over: Partial<KubeMemberView> = {}): KubeMemberView => ({
  name: `main-${n}`,
  pod: { phase: 'Running', ready, terminating: false },
  claim: { terminating: false, dataLost: false },
  ...over,
});

const desired = (replicas = 3): Desired => ({ cluster: 'main', replicas, medium: '', versionKnown: true });

function input(observed: Observed, over: Partial<StatusInput> = {}): StatusInput {
  const d = over.desired ?? desired();
  return {
    generation: 4,
    desired: d,
    observed,
    decision: plan(d, observed),
    halted: false,
    selector: 'etcd.conductor.dev/cluster=main',
    clientEndpoint: 'http://main-client.default.svc:2379',
    now: T0,
    ...over,
  };
}

const REFUSED =
  "every member refuses the TLS handshake with the operator, so it cannot tell whether quorum holds (SSL alert number 42); members trust the CA bundle (ca.crt) they started with: the operator's client certificate must be signed by a CA in it, and its ca.crt must hold the CA of the members' serving certificate (docs/operations.md, Rotating the CA)";
const recorded = { clusterId: '77', members: ['main-0', 'main-1', 'main-2'], paused: false };
const healthy: Observed = {
  etcd: { clusterId: '77', leaderId: voter(0).id, members: [voter(0), voter(1), voter(2)] },
  kube: [kube(0), kube(1), kube(2)],
  recorded,
};
const withMember = (
  n: number,
  m: Partial<EtcdMemberView>,
  k: Partial<KubeMemberView>,
  base = healthy,
): Observed => ({
  ...base,
  etcd: {
    clusterId: '77',
    leaderId: voter(0).id,
    members: (base.etcd?.members ?? []).map((x) => (x.name === `main-${n}` ? { ...x, ...m } : x)),
  },
  kube: base.kube.map((x) => (x.name === `main-${n}` ? { ...x, ...k } : x)),
});

type Expect = [string, string, string];

describe('conditions', () => {
  test.each<[string, StatusInput, Expect, Expect, Expect]>([
    [
      'a healthy converged cluster is available, idle and not degraded',
      input(healthy),
      ['True', Reasons.ClusterAvailable, '3 of 3 voters answer; 2 needed'],
      ['False', Reasons.Converged, '3 of 3 members healthy'],
      ['False', Reasons.MembersHealthy, '3 members healthy'],
    ],
    [
      'a running scale up is progressing with its current step',
      input(healthy, {
        desired: desired(5),
        currentOperation: {
          type: 'ScaleUp',
          workflowId: 'w',
          startedAt: T0,
          step: 'add member main-3 as a learner',
        },
      }),
      ['True', Reasons.ClusterAvailable, '3 of 3 voters answer; 2 needed'],
      ['True', Reasons.ScalingUp, 'add member main-3 as a learner'],
      ['False', Reasons.MembersHealthy, '3 members healthy'],
    ],
    [
      'a planned step whose operation has not started yet already counts as progressing',
      input(healthy, { desired: desired(5) }),
      ['True', Reasons.ClusterAvailable, '3 of 3 voters answer; 2 needed'],
      ['True', Reasons.ScalingUp, 'starting'],
      ['False', Reasons.MembersHealthy, '3 members healthy'],
    ],
    [
      'a member whose Pod is not Ready degrades the cluster but keeps it available',
      input(withMember(2, {}, { pod: { phase: 'Running', ready: false, terminating: false } })),
      ['True', Reasons.ClusterAvailable, '3 of 3 voters answer; 2 needed'],
      // Membership needs no change (the member answers), so nothing progresses; Degraded carries the news.
      ['False', Reasons.Converged, '3 of 3 members healthy'],
      ['True', Reasons.MemberNotReady, 'main-2 not ready'],
    ],
    [
      'a member whose claim vanished is reported as data lost',
      input(withMember(1, { reachable: false }, { pod: undefined, claim: undefined })),
      ['True', Reasons.ClusterAvailable, '2 of 3 voters answer; 2 needed'],
      ['True', Reasons.Healing, 'starting'],
      ['True', Reasons.MemberDataLost, 'main-1 must be replaced'],
    ],
    [
      'two voters that miss their status call while the linearizable member list answers: quorum holds, the cluster is degraded, nothing changes membership',
      input(withMember(2, { reachable: false }, {}, withMember(1, { reachable: false }, {}))),
      [
        'True',
        Reasons.ClusterAvailable,
        "1 of 3 voters answered their status in time, 2 needed; etcd's linearizable member list answered, so a quorum holds",
      ],
      ['False', Reasons.QuorumLost, '1 of 3 voters answer, 2 needed; no membership change can commit'],
      ['True', Reasons.MemberNotReady, 'main-1, main-2 not ready'],
    ],
    [
      'the same with the member-list rule (quorum-by-member-list): Available and the planner agree, nothing says QuorumLost',
      input(withMember(2, { reachable: false }, {}, withMember(1, { reachable: false }, {})), {
        desired: { ...desired(), quorumByMemberList: true },
      }),
      [
        'True',
        Reasons.ClusterAvailable,
        "1 of 3 voters answered their status in time, 2 needed; etcd's linearizable member list answered, so a quorum holds",
      ],
      [
        'False',
        Reasons.MemberNotReady,
        "1 of 3 voters answered their status in time, 2 needed; etcd's linearizable member list answered, so a quorum holds; membership changes wait for the others",
      ],
      ['True', Reasons.MemberNotReady, 'main-1, main-2 not ready'],
    ],
    [
      'a deadline that stopped an operation is reported until the spec changes or a retry is asked for',
      input(healthy, {
        desired: desired(5),
        halted: true,
        lastOperation: {
          type: 'ScaleUp',
          result: 'DeadlineExceeded',
          finishedAt: T0,
          workflowId: 'w1',
          message: 'learner main-3 never caught up',
        },
      }),
      ['True', Reasons.ClusterAvailable, '3 of 3 voters answer; 2 needed'],
      [
        'False',
        Reasons.Stalled,
        'ScaleUp w1: learner main-3 never caught up; change the spec or set the retry annotation',
      ],
      ['False', Reasons.MembersHealthy, '3 members healthy'],
    ],
    [
      'a cancelled operation is reported as cancelled',
      input(healthy, {
        desired: desired(5),
        halted: true,
        lastOperation: { type: 'ScaleUp', result: 'Cancelled', finishedAt: T0, workflowId: 'w1' },
      }),
      ['True', Reasons.ClusterAvailable, '3 of 3 voters answer; 2 needed'],
      [
        'False',
        Reasons.OperationCancelled,
        'ScaleUp w1: Cancelled; change the spec or set the retry annotation',
      ],
      ['False', Reasons.MembersHealthy, '3 members healthy'],
    ],
    [
      'a paused cluster is unavailable by request and not degraded',
      input(
        {
          kube: [{ name: 'main-0', claim: { terminating: false, dataLost: false } }],
          recorded: { ...recorded, paused: true },
        },
        { desired: desired(0) },
      ),
      ['False', Reasons.Paused, 'paused by replicas 0; the data is kept'],
      ['False', Reasons.Paused, 'paused; the data is kept on its claim'],
      ['False', Reasons.Paused, 'paused by replicas 0; the data is kept'],
    ],
    [
      'a resuming cluster is still reported as paused until it answers',
      input(
        {
          kube: [
            {
              name: 'main-0',
              pod: { phase: 'Pending', ready: false, terminating: false },
              claim: { terminating: false, dataLost: false },
            },
          ],
          recorded: { ...recorded, paused: true },
        },
        { currentOperation: { type: 'Resume', workflowId: 'w', startedAt: T0 } },
      ),
      ['False', Reasons.Paused, 'resuming from the kept claim'],
      ['True', Reasons.Resuming, 'Resume running'],
      ['False', Reasons.Paused, 'resuming from the kept claim'],
    ],
    [
      'a new cluster that has not answered yet is bootstrapping',
      input({ kube: [kube(0, false)], recorded: { members: [], paused: false } }),
      ['False', Reasons.Bootstrapping, 'the cluster has not answered yet'],
      ['False', Reasons.MemberNotReady, 'member Pods run but no member answers yet'],
      ['False', Reasons.Bootstrapping, 'the cluster has not answered yet'],
    ],
    [
      'a seed whose restore refused its snapshot, after the Bootstrap failed, is Degraded with the agent message',
      input(
        {
          kube: [
            kube(0, false, {
              pod: {
                phase: 'Pending',
                ready: false,
                terminating: false,
                restoreFailure: { reason: 'ChecksumMismatch', message: 'sha256 differs', permanent: true },
              },
            }),
          ],
          recorded: { members: [], paused: false },
        },
        {
          halted: true,
          lastOperation: {
            type: 'Bootstrap',
            result: 'Failed',
            finishedAt: T0,
            workflowId: 'op-1',
            message: 'restore of main-0 failed: ChecksumMismatch: sha256 differs',
          },
        },
      ),
      ['False', Reasons.Bootstrapping, 'the cluster has not answered yet'],
      [
        'False',
        Reasons.OperationFailed,
        'Bootstrap op-1: restore of main-0 failed: ChecksumMismatch: sha256 differs; change the spec or set the retry annotation',
      ],
      ['True', Reasons.RestoreFailed, 'restore of main-0 failed: ChecksumMismatch: sha256 differs'],
    ],
    [
      'a cluster whose every member lost its data says so',
      input({ kube: [], recorded }),
      ['False', Reasons.AllMembersLost, "every member's data is gone (cluster 77)"],
      ['False', Reasons.AllMembersLost, "every member's data is gone (cluster 77)"],
      ['True', Reasons.AllMembersLost, "every member's data is gone (cluster 77)"],
    ],
    [
      'an existing cluster that stops answering has lost quorum',
      input({ kube: [kube(0, false), kube(1, false)], recorded }),
      ['False', Reasons.QuorumLost, 'no member answers'],
      ['False', Reasons.MemberNotReady, 'member Pods run but no member answers yet'],
      ['True', Reasons.QuorumLost, 'no member answers'],
    ],
    [
      "members that run but refuse the operator's certificate are TLSTrustBroken, not QuorumLost",
      input({
        kube: [kube(0), kube(1), kube(2)],
        recorded,
        etcdRefused: 'SSL alert number 42',
      }),
      ['Unknown', Reasons.TLSTrustBroken, REFUSED],
      ['False', Reasons.TLSTrustBroken, REFUSED],
      ['True', Reasons.TLSTrustBroken, REFUSED],
    ],
    [
      'an etcd version without an image is reported instead of starting Pods',
      input(healthy, { desired: { ...desired(5), versionKnown: false } }),
      ['True', Reasons.ClusterAvailable, '3 of 3 voters answer; 2 needed'],
      [
        'False',
        Reasons.UnsupportedVersion,
        'spec.version names no etcd release this operator has an image for; set it to a supported release (docs/status.md lists them). Until then nothing is started: add member main-3 as a learner waits',
      ],
      ['False', Reasons.MembersHealthy, '3 members healthy'],
    ],
    [
      'a seed whose image cannot be pulled says so in Progressing and Degraded while the cluster bootstraps',
      input({
        kube: [
          {
            ...kube(0, false),
            problem: {
              reason: Reasons.ImagePullFailed,
              message: 'Pod main-0 cannot pull image "x": not found',
            },
          },
        ],
        recorded: { members: [], paused: false },
      }),
      ['False', Reasons.Bootstrapping, 'the cluster has not answered yet'],
      ['False', Reasons.ImagePullFailed, 'Pod main-0 cannot pull image "x": not found'],
      ['True', Reasons.ImagePullFailed, 'Pod main-0 cannot pull image "x": not found'],
    ],
  ])('%s', (_name, i, availableC, progressingC, degradedC) => {
    const status = computeStatus(i);
    const verdict = (type: string) => {
      const c = status.conditions?.find((x) => x.type === type);
      return [c?.status, c?.reason, c?.message];
    };
    expect(verdict('Available')).toEqual(availableC);
    expect(verdict('Progressing')).toEqual(progressingC);
    expect(verdict('Degraded')).toEqual(degradedC);
    expect(status.conditions?.every((c) => c.observedGeneration === 4 && c.lastTransitionTime === T0)).toBe(
      true,
    );
  });
});

describe('hexMemberId: member ids as etcdctl prints them', () => {
  test.each([
    { case: 'a typical id over 2^53', id: '10276657743932975437', want: '8e9e05c52164694d' },
    { case: 'a small id has no leading zeros', id: '255', want: 'ff' },
    { case: 'the largest uint64', id: '18446744073709551615', want: 'ffffffffffffffff' },
    { case: 'an id that is not a number stays as it is', id: 'abc', want: 'abc' },
  ])('$case', ({ id, want }) => {
    expect(hexMemberId(id)).toBe(want);
  });
});

describe('roundedLag: raft entries behind the leader, by order of magnitude', () => {
  test.each([
    { case: 'caught up', leader: '5000', member: '5000', want: 0 },
    { case: 'within the in-flight window of 100', leader: '5099', member: '5000', want: 0 },
    { case: '100 behind', leader: '5100', member: '5000', want: 100 },
    { case: '999 behind rounds down', leader: '5999', member: '5000', want: 100 },
    { case: '12345 behind', leader: '20345', member: '8000', want: 10000 },
    { case: 'ahead of a stale leader index counts as caught up', leader: '10', member: '50', want: 0 },
    { case: 'indexes beyond 2^53', leader: '9007199254741993', member: '9007199254740993', want: 1000 },
    { case: 'an unparsable index says nothing', leader: 'x', member: '1', want: undefined },
  ])('$case', ({ leader, member, want }) => {
    expect(roundedLag(leader, member)).toBe(want);
  });
});

describe('memberError: what is wrong with a member, in words', () => {
  const problem = {
    reason: 'ImagePullFailed' as const,
    message: 'Pod main-0 cannot pull image "x": not found',
  };
  test.each([
    { case: 'a healthy member: nothing', m: voter(0), k: kube(0), alarms: [], want: undefined },
    {
      case: "its Pod's problem comes first",
      m: voter(0, { reachable: false }),
      k: kube(0, false, { problem }),
      alarms: [{ memberId: voter(0).id, alarm: 'NOSPACE' }],
      want: 'ImagePullFailed: Pod main-0 cannot pull image "x": not found',
    },
    {
      case: 'then the alarms it raised (not those of others)',
      m: voter(0),
      k: kube(0),
      alarms: [
        { memberId: voter(0).id, alarm: 'NOSPACE' },
        { memberId: voter(1).id, alarm: 'CORRUPT' },
      ],
      want: 'etcd alarm NOSPACE raised on this member',
    },
    {
      case: 'then silence',
      m: voter(0, { reachable: false }),
      k: kube(0),
      alarms: [],
      want: 'did not answer the operator (etcd status request failed or timed out)',
    },
  ])('$case', ({ m, k, alarms, want }) => {
    expect(memberError(m, k, alarms)).toBe(want);
  });
});

describe('status fields', () => {
  test('members are listed by ordinal with role, readiness, leadership and version; learners are not ready replicas', () => {
    const observed: Observed = {
      etcd: {
        clusterId: '77',
        leaderId: voter(1).id,
        members: [voter(2), voter(0), voter(1), voter(3, { isLearner: true })],
      },
      kube: [kube(0), kube(1), kube(2, false), kube(3, false)],
      recorded,
    };
    const status = computeStatus(input(observed, { desired: desired(4) }));
    const hex = (n: number) => hexMemberId(voter(n).id);
    expect(status.members).toEqual([
      {
        id: voter(0).id,
        hexId: hex(0),
        name: 'main-0',
        role: 'voter',
        ready: true,
        leader: false,
        version: '3.6.16',
      },
      {
        id: voter(1).id,
        hexId: hex(1),
        name: 'main-1',
        role: 'voter',
        ready: true,
        leader: true,
        version: '3.6.16',
      },
      {
        id: voter(2).id,
        hexId: hex(2),
        name: 'main-2',
        role: 'voter',
        ready: false,
        leader: false,
        version: '3.6.16',
      },
      {
        id: voter(3).id,
        hexId: hex(3),
        name: 'main-3',
        role: 'learner',
        ready: true,
        leader: false,
        version: '3.6.16',
      },
    ]);
    expect(status).toMatchObject({
      leader: 'main-1',
      observedGeneration: 4,
      replicas: 4,
      readyReplicas: 2,
      clusterId: '77',
      selector: 'etcd.conductor.dev/cluster=main',
      clientEndpoint: 'http://main-client.default.svc:2379',
    });
  });

  test('with member detail each member carries its raft lag and last error; without it (older runs) neither', () => {
    const observed: Observed = {
      etcd: {
        clusterId: '77',
        leaderId: voter(0).id,
        members: [
          voter(0, { raftIndex: '50000' }),
          voter(1, { raftIndex: '49990' }),
          voter(2, { raftIndex: '1000', reachable: true }),
        ],
        alarms: [{ memberId: voter(2).id, alarm: 'NOSPACE' }],
      },
      kube: [kube(0), kube(1), kube(2)],
      recorded,
    };
    const detail = computeStatus(input(observed, { memberDetail: true }));
    expect(detail.members?.map((m) => [m.name, m.raftLag, m.lastError])).toEqual([
      ['main-0', 0, undefined],
      ['main-1', 0, undefined],
      ['main-2', 10000, 'etcd alarm NOSPACE raised on this member'],
    ]);
    const plain = computeStatus(input(observed));
    expect(plain.members?.some((m) => 'raftLag' in m || 'lastError' in m)).toBe(false);
    // A member that did not answer has no lag, and says so.
    const silent = computeStatus(
      input(
        { ...observed, etcd: { ...observed.etcd!, members: [voter(0), voter(1, { reachable: false })] } },
        { memberDetail: true },
      ),
    );
    expect(silent.members?.find((m) => m.name === 'main-1')).toMatchObject({
      lastError: 'did not answer the operator (etcd status request failed or timed out)',
    });
    expect(silent.members?.find((m) => m.name === 'main-1')?.raftLag).toBeUndefined();
  });

  test('while paused the kept member stays listed, not ready, and the cluster id survives', () => {
    const single: Observed = {
      kube: [kube(0)],
      recorded,
      etcd: { clusterId: '77', leaderId: voter(0).id, members: [voter(0)] },
    };
    const previous = computeStatus(input(single, { desired: desired(1) }));
    const paused = computeStatus(
      input(
        {
          kube: [{ name: 'main-0', claim: { terminating: false, dataLost: false } }],
          recorded: { ...recorded, paused: true },
        },
        { desired: desired(0), previous },
      ),
    );
    expect(paused.members).toEqual([{ ...previous.members?.[0], ready: false, leader: false }]);
    expect(paused).toMatchObject({ replicas: 0, readyReplicas: 0, clusterId: '77' });
    expect(previous.leader).toBe('main-0');
    expect(paused.leader).toBeUndefined();
  });

  test.each([
    [
      'a learner answering from a live Pod is ready though its Pod is not Ready',
      voter(3, { isLearner: true }),
      kube(3, false),
      true,
    ],
    ['a voter whose Pod is not Ready is not ready', voter(3), kube(3, false), false],
    ['a member that does not answer is not ready', voter(3, { reachable: false }), kube(3), false],
    ['a member without a Pod is not ready', voter(3), { name: 'main-3' }, false],
  ])('%s', (_name, m, k, expected) => {
    expect(memberReady(m, k)).toBe(expected);
  });
});

describe('transitions and writes', () => {
  test('lastTransitionTime moves when the status flips and stays when only the reason or message changes', () => {
    const first = setCondition(
      [],
      { type: 'Available', status: 'True', reason: 'ClusterAvailable', message: 'a' },
      T0,
    );
    const sameStatus = setCondition(
      first,
      { type: 'Available', status: 'True', reason: 'Other', message: 'b' },
      T1,
    );
    const flipped = setCondition(
      sameStatus,
      { type: 'Available', status: 'False', reason: 'QuorumLost', message: 'c' },
      T1,
    );
    expect(sameStatus[0]).toMatchObject({ reason: 'Other', lastTransitionTime: T0 });
    expect(flipped[0]).toMatchObject({ status: 'False', lastTransitionTime: T1 });
    expect(flipped).toHaveLength(1);
  });

  test('observing the same cluster later changes nothing, so no status write is needed', () => {
    const before = computeStatus(input(healthy));
    const after = computeStatus(input(healthy, { previous: before, now: T1 }));
    expect(statusChanged(before, after)).toBe(false);
  });

  test('a member becoming unready is a change, and only Degraded gets a new transition time', () => {
    const before = computeStatus(input(healthy));
    const after = computeStatus(
      input(withMember(2, {}, { pod: { phase: 'Running', ready: false, terminating: false } }), {
        previous: before,
        now: T1,
      }),
    );
    expect(statusChanged(before, after)).toBe(true);
    expect(findCondition(after, 'Degraded')?.lastTransitionTime).toBe(T1);
    expect(findCondition(after, 'Available')?.lastTransitionTime).toBe(T0);
  });

  test('key order and undefined fields do not count as a change', () => {
    const a: EtcdClusterStatus = { replicas: 3, selector: 's', clusterId: undefined };
    const b: EtcdClusterStatus = { selector: 's', replicas: 3 };
    expect(equalStatus(a, b)).toBe(true);
    expect(equalStatus(a, { ...b, replicas: 4 })).toBe(false);
    expect(statusChanged(undefined, b)).toBe(true);
  });
});

describe('withoutSmallSizeMoves: database sizes that moved by less than DB_SIZE_NEWS_BYTES alone are no news', () => {
  const MiB = DB_SIZE_NEWS_BYTES;
  const member = (name: string, dbSize?: number, dbSizeInUse?: number) => ({
    id: name,
    hexId: name,
    name,
    role: 'voter' as const,
    ready: true,
    leader: false,
    ...(dbSize !== undefined ? { dbSize } : {}),
    ...(dbSizeInUse !== undefined ? { dbSizeInUse } : {}),
  });
  const status = (...members: ReturnType<typeof member>[]): EtcdClusterStatus => ({ replicas: 3, members });
  test.each([
    [
      'an in-use size 4 KiB larger',
      status(member('a', 24576, 20480)),
      status(member('a', 24576, 24576)),
      false,
    ],
    ['both sizes a little larger', status(member('a', 1000, 900)), status(member('a', MiB, MiB - 1)), false],
    [
      'a file grown by 1 MiB',
      status(member('a', 24576, 20480)),
      status(member('a', 24576 + MiB, 20480)),
      true,
    ],
    [
      'an in-use size shrunk by 1 MiB',
      status(member('a', 3 * MiB, 2 * MiB)),
      status(member('a', 3 * MiB, MiB)),
      true,
    ],
    ['a size seen for the first time', status(member('a')), status(member('a', 4096, 4096)), true],
    ['a size no longer known', status(member('a', 4096, 4096)), status(member('a')), true],
    [
      'a new member with small sizes',
      status(member('a', 4096, 4096)),
      status(member('a', 4096, 4096), member('b', 10, 10)),
      true,
    ],
    [
      'a small move beside another change',
      status(member('a', 4096, 4096)),
      { ...status(member('a', 8192, 8192)), replicas: 5 },
      true,
    ],
    ['nothing before', undefined, status(member('a', 4096, 4096)), true],
  ] as const)('%s: a write is due = %s', (_what, before, after, due) => {
    expect(statusChanged(before, withoutSmallSizeMoves(before, after))).toBe(due);
  });
});
