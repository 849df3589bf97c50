import type { EtcdCluster } from '../crds/etcd-cluster';
import type { EtcdSnapshot } from '../crds/etcd-snapshot';
import {
  clusterSnapshots,
  manualSnapshotName,
  renderBackups,
  renderOperations,
  renderStatus,
  verifiedOf,
} from './views';

const now = Date.parse('2026-11-25T12:00:00Z');

const cluster = (status: EtcdCluster['status'], generation = 3): EtcdCluster =>
  ({
    apiVersion: 'etcd.conductor.dev/v1alpha1',
    kind: 'EtcdCluster',
    metadata: { name: 'main', namespace: 'prod', generation },
    spec: { replicas: 3, version: '3.6.16' },
    status,
  }) as EtcdCluster;

describe('renderStatus', () => {
  test('a healthy cluster: summary, a member table with ids as etcdctl prints them, and the conditions', () => {
    const text = renderStatus(
      cluster({
        observedGeneration: 3,
        readyReplicas: 3,
        updatedReplicas: 3,
        leader: 'main-1',
        clientEndpoint: 'http://main-client.prod.svc:2379',
        members: [
          {
            id: '10276657743932975437',
            hexId: '8e9e05c52164694d',
            name: 'main-0',
            role: 'voter',
            ready: true,
            leader: false,
            version: '3.6.16',
            dbSize: 20480,
            dbSizeInUse: 16384,
            raftLag: 1000,
            upToDate: true,
            lastError: 'etcd alarm NOSPACE raised on this member',
          },
          // Written by an older operator: no hexId, derived here.
          { id: '255', name: 'main-1', role: 'voter', ready: true, leader: true, version: '3.6.16' },
        ],
        conditions: [
          {
            type: 'Available',
            status: 'True',
            reason: 'QuorumHealthy',
            message: '3 of 3 voters ready',
            lastTransitionTime: '2026-11-25T11:48:00Z',
          },
        ],
        lastOperation: {
          type: 'ScaleUp',
          result: 'Succeeded',
          finishedAt: '2026-11-25T11:57:00Z',
          workflowId: 'w',
          message: '3 members',
        },
      }),
      now,
    );
    expect(text.split('\n')).toEqual([
      'Cluster:   prod/main',
      'Version:   3.6.16',
      'Members:   3 of 3 ready, 3 up to date',
      'Leader:    main-1',
      'Endpoint:  http://main-client.prod.svc:2379',
      'Operation: none',
      'Last:      ScaleUp Succeeded 3m ago: 3 members',
      '',
      'NAME     ID                 ROLE    READY   LEADER   VERSION   DB SIZE   IN USE   LAG      UP TO DATE   ERROR',
      'main-0   8e9e05c52164694d   voter   true    false    3.6.16    20 KiB    16 KiB   1000     true         etcd alarm NOSPACE raised on this member',
      'main-1   ff                 voter   true    true     3.6.16    <none>    <none>   <none>   <none>       <none>',
      '',
      'CONDITION   STATUS   REASON          SINCE   MESSAGE',
      'Available   True     QuorumHealthy   12m     3 of 3 voters ready',
    ]);
  });

  test('an operation in flight shows its step; a status of an older generation says so', () => {
    const text = renderStatus(
      cluster(
        {
          observedGeneration: 2,
          currentOperation: {
            type: 'ScaleUp',
            workflowId: 'etcdcluster/prod/main/op/4-scaleup',
            startedAt: '2026-11-25T11:59:30Z',
            step: 'step 2: promote main-3',
          },
        },
        3,
      ),
      now,
    );
    expect(text).toContain('Cluster:   prod/main (status is of generation 2; the spec is at 3)');
    expect(text).toContain(
      'Operation: ScaleUp running 30s, step 2: promote main-3 (etcdcluster/prod/main/op/4-scaleup)',
    );
    expect(text).toContain('No members listed');
  });
});

const snap = (name: string, cluster: string, takenAt?: string): EtcdSnapshot =>
  ({
    metadata: { name, namespace: 'prod', creationTimestamp: '2026-11-25T10:00:00Z' },
    spec: { clusterRef: { name: cluster }, destination: {} },
    status: takenAt
      ? {
          phase: 'Succeeded',
          artifact: {
            uri: `s3://b/${name}.db`,
            size: 2048,
            sha256: 'x',
            revision: 42,
            etcdVersion: '3.6.16',
            takenAt,
          },
        }
      : { phase: 'Running' },
  }) as EtcdSnapshot;

describe('backups', () => {
  test("only the cluster's snapshots, newest first (one still running sorts by its creation)", () => {
    const all = [
      snap('a', 'main', '2026-11-25T11:00:00Z'),
      snap('other', 'other', '2026-11-25T11:30:00Z'),
      snap('b', 'main', '2026-11-25T11:50:00Z'),
      snap('c', 'main'),
    ];
    expect(clusterSnapshots(all, 'main').map((s) => s.metadata.name)).toEqual(['b', 'a', 'c']);
  });
  test('a table of what each can restore', () => {
    expect(
      renderBackups([snap('b', 'main', '2026-11-25T11:50:00Z'), snap('c', 'main')], now).split('\n'),
    ).toEqual([
      'NAME   PHASE       VERIFIED   REVISION   SIZE      TAKEN     ETCD     URI',
      'b      Succeeded   <none>     42         2.0 KiB   10m ago   3.6.16   s3://b/b.db',
      'c      Running     <none>     <none>     <none>    <none>    <none>   <none>',
    ]);
    expect(renderBackups([], now)).toBe('No snapshots of this cluster.');
  });
});

test.each([
  ['a check that passed', 'True', 'SnapshotVerified', 'True'],
  ['a check running', 'Unknown', 'VerificationRunning', 'Unknown'],
  ['a check that failed shows what failed', 'False', 'ObjectAltered', 'ObjectAltered'],
])('the verified column: %s', (_n, status, reason, want) => {
  const s = {
    ...snap('v', 'main', '2026-11-25T11:50:00Z'),
  } as EtcdSnapshot;
  s.status = {
    ...s.status,
    conditions: [{ type: 'Verified', status: status as 'True', reason, message: '', lastTransitionTime: '' }],
  };
  expect(verifiedOf(s)).toBe(want);
});

describe('renderOperations', () => {
  test('running and finished operations with how long they took and the running step', () => {
    expect(
      renderOperations(
        [
          {
            workflowId: 'etcdcluster/prod/main/op/5-upgrade',
            type: 'Upgrade',
            status: 'RUNNING',
            startTime: '2026-11-25T11:59:00Z',
            step: 'step 1: restart main-0',
          },
          {
            workflowId: 'etcdcluster/prod/main/op/4-scaleup',
            type: 'ScaleUp',
            status: 'COMPLETED',
            startTime: '2026-11-25T11:00:00Z',
            closeTime: '2026-11-25T11:00:06.700Z',
          },
        ],
        now,
      ).split('\n'),
    ).toEqual([
      'WORKFLOW ID                          TYPE      STATUS      STARTED   TOOK   STEP',
      'etcdcluster/prod/main/op/5-upgrade   Upgrade   RUNNING     60s ago   60s    step 1: restart main-0',
      'etcdcluster/prod/main/op/4-scaleup   ScaleUp   COMPLETED   60m ago   6.7s   <none>',
    ]);
  });
});

describe('manualSnapshotName', () => {
  test.each([
    { cluster: 'main', want: 'main-20261125120000' },
    { cluster: `${'x'.repeat(60)}`, want: `${'x'.repeat(48)}-20261125120000` },
    { cluster: `${'y'.repeat(47)}-abc`, want: `${'y'.repeat(47)}-20261125120000` },
  ])('$cluster -> $want', ({ cluster: c, want }) => {
    const name = manualSnapshotName(c, now);
    expect(name).toBe(want);
    expect(name.length).toBeLessThanOrEqual(63);
  });
});
