import type { EtcdCluster, EtcdClusterStatus } from '../crds/etcd-cluster';
import type { EtcdSnapshot } from '../crds/etcd-snapshot';
import type { OperationTransition } from './operator-metrics';
import {
  backupFamilies,
  clusterFamilies,
  clusterView,
  createOperatorMetrics,
  operationTransition,
  snapshotFamilies,
} from './operator-metrics';

const running = (workflowId: string, startedAt = '2026-01-01T00:00:00Z'): EtcdClusterStatus => ({
  currentOperation: { type: 'ScaleUp', workflowId, startedAt, step: 'x' },
});
const finished = (workflowId: string, finishedAt = '2026-01-01T00:01:30Z'): EtcdClusterStatus => ({
  lastOperation: { type: 'ScaleUp', result: 'Succeeded', finishedAt, workflowId },
});

describe('operationTransition', () => {
  const cases: Array<[string, EtcdClusterStatus | undefined, EtcdClusterStatus, OperationTransition]> = [
    ['a first status without an operation tells nothing', undefined, { replicas: 1 }, {}],
    ['a new currentOperation is a start', {}, running('op-1'), { started: 'ScaleUp' }],
    ['the same currentOperation written again is no new start', running('op-1'), running('op-1'), {}],
    [
      'a new lastOperation after the object showed it running is an end with its run time',
      running('op-1'),
      finished('op-1'),
      { finished: { type: 'ScaleUp', result: 'Succeeded', seconds: 90 } },
    ],
    [
      'an end the object never showed running is counted without a run time',
      {},
      finished('op-1'),
      { finished: { type: 'ScaleUp', result: 'Succeeded' } },
    ],
    [
      'the same lastOperation written again (a retry, another replica) is no new end',
      finished('op-1'),
      { ...finished('op-1'), replicas: 3 },
      {},
    ],
    [
      'one write may end one operation and start the next',
      { ...finished('op-1'), ...running('op-2') },
      { ...finished('op-2'), ...running('op-3') },
      { started: 'ScaleUp', finished: { type: 'ScaleUp', result: 'Succeeded', seconds: 90 } },
    ],
  ];
  it.each(cases)('%s', (_name, before, after, expected) => {
    expect(operationTransition(before, after)).toEqual(expected);
  });
});

const cluster = (name: string, status: EtcdClusterStatus): EtcdCluster =>
  ({
    apiVersion: 'etcd.conductor.dev/v1alpha1',
    kind: 'EtcdCluster',
    metadata: { namespace: 'ns', name, uid: `uid-${name}` },
    spec: {
      replicas: 3,
      version: '3.6.16',
      storage: { size: '1Gi', medium: '' },
      progressDeadlineSeconds: 600,
    },
    status,
  }) as EtcdCluster;

const cond = (type: string, status: 'True' | 'False') => ({
  type,
  status,
  reason: 'R',
  message: '',
  lastTransitionTime: '2026-01-01T00:00:00Z',
});

describe('clusterFamilies', () => {
  const views = [
    clusterView(
      cluster('a', {
        readyReplicas: 2,
        members: [
          { id: '1', name: 'a-0', role: 'voter', ready: true, leader: true },
          { id: '2', name: 'a-1', role: 'voter', ready: true, leader: false },
          { id: '3', name: 'a-2', role: 'voter', ready: false, leader: false },
          { id: '4', name: 'a-3', role: 'learner', ready: false, leader: false },
        ],
        conditions: [cond('Available', 'True'), cond('Degraded', 'True')],
        ...running('op-1', '2026-01-01T00:00:00Z'),
      }),
    ),
    clusterView(cluster('b', { conditions: [cond('Available', 'False')] })),
  ];
  const families = clusterFamilies(views, Date.parse('2026-01-01T00:02:00Z'));
  const samples = (name: string) => families.find((f) => f.name === name);

  it('counts clusters per condition and status, listing zeros too', () => {
    const f = samples('etcd_conductor_clusters');
    expect(f?.samples).toEqual(
      expect.arrayContaining([
        { labels: { condition: 'Available', status: 'True' }, value: 1 },
        { labels: { condition: 'Available', status: 'False' }, value: 1 },
        { labels: { condition: 'Degraded', status: 'True' }, value: 1 },
        { labels: { condition: 'Progressing', status: 'True' }, value: 0 },
      ]),
    );
    expect(f?.samples).toHaveLength(9);
  });
  it.each<[string, string, number]>([
    ['voters leave learners out', 'etcd_conductor_cluster_voters', 4 - 1],
    ['ready voters come from status.readyReplicas', 'etcd_conductor_cluster_ready_voters', 2],
    ['desired members come from spec.replicas', 'etcd_conductor_cluster_desired_members', 3],
    [
      'a running operation reports its age in seconds',
      'etcd_conductor_cluster_operation_running_seconds',
      120,
    ],
  ])('%s', (_name, metric, value) => {
    const f = samples(metric);
    expect(f?.samples[0]?.value).toBe(value);
  });
  it('a cluster without a running operation has no running-seconds sample', () => {
    const f = samples('etcd_conductor_cluster_operation_running_seconds');
    expect(f?.samples.map((s) => s.labels.name)).toEqual(['a']);
  });
});

describe('backupFamilies', () => {
  const backedUp = (name: string, backup: EtcdClusterStatus['backup']) =>
    clusterView(cluster(name, { backup }));
  const views = [
    backedUp('current', {
      latestRevision: 1234,
      latestTime: '2026-11-27T03:00:00.500Z',
      lagSeconds: 0,
      gaps: [],
    }),
    backedUp('behind', {
      latestRevision: 900,
      latestTime: '2026-11-27T02:50:00Z',
      lagSeconds: 600,
      gaps: [
        {
          afterRevision: 10,
          beforeRevision: 20,
          afterTime: '2026-11-26T00:00:00Z',
          beforeTime: '2026-11-26T00:01:00Z',
          reason: 'compacted',
        },
      ],
    }),
    backedUp('starting', { gaps: [] }),
    clusterView(cluster('off', {})),
  ];
  const families = backupFamilies(views);
  const byName = (metric: string) =>
    Object.fromEntries(
      (families.find((f) => f.name === metric)?.samples ?? []).map((x) => [x.labels.name, x.value]),
    );

  it.each<[string, string, Record<string, number>]>([
    [
      'the lag is status.backup.lagSeconds, 0 for a current backup; none while the archiver stored nothing or without a backup',
      'etcd_conductor_backup_lag_seconds',
      { current: 0, behind: 600 },
    ],
    [
      'the latest safe revision is status.backup.latestRevision',
      'etcd_conductor_backup_latest_revision',
      { current: 1234, behind: 900 },
    ],
    [
      'the latest safe time is status.backup.latestTime in Unix seconds, milliseconds kept',
      'etcd_conductor_backup_latest_timestamp_seconds',
      {
        current: Date.parse('2026-11-27T03:00:00.500Z') / 1000,
        behind: Date.parse('2026-11-27T02:50:00Z') / 1000,
      },
    ],
    [
      'gaps are counted for every cluster with a backup status, zero included',
      'etcd_conductor_backup_gaps',
      { current: 0, behind: 1, starting: 0 },
    ],
  ])('%s', (_name, metric, want) => {
    expect(byName(metric)).toEqual(want);
  });

  it('labels each sample with the cluster namespace and name', () => {
    expect(families[0]?.samples[0]?.labels).toEqual({ namespace: 'ns', name: 'current' });
  });
});

describe('snapshotFamilies', () => {
  const snap = (
    name: string,
    cluster: string,
    phase: 'Succeeded' | 'Failed',
    takenAt: string,
  ): EtcdSnapshot =>
    ({
      metadata: { namespace: 'ns', name },
      spec: { clusterRef: { name: cluster }, destination: {} },
      status: {
        phase,
        artifact: { takenAt, uri: '', size: 1, sha256: '', revision: 1, etcdVersion: '3.6.16' },
      },
    }) as unknown as EtcdSnapshot;
  it('reports per cluster the newest Succeeded snapshot and ignores failed ones', () => {
    const [f] = snapshotFamilies([
      snap('s1', 'main', 'Succeeded', '2026-01-01T00:00:00Z'),
      snap('s2', 'main', 'Succeeded', '2026-01-01T01:00:00Z'),
      snap('s3', 'main', 'Failed', '2026-01-01T02:00:00Z'),
      snap('s4', 'other', 'Failed', '2026-01-01T02:00:00Z'),
    ]);
    expect(f?.samples).toEqual([
      { labels: { namespace: 'ns', cluster: 'main' }, value: Date.parse('2026-01-01T01:00:00Z') / 1000 },
    ]);
  });

  const checked = (s: EtcdSnapshot, status: 'True' | 'False' | 'Unknown', reason: string): EtcdSnapshot => ({
    ...s,
    status: {
      ...s.status,
      conditions: [{ type: 'Verified', status, reason, message: '', lastTransitionTime: '' }],
    },
  });
  const families = snapshotFamilies([
    checked(snap('s1', 'main', 'Succeeded', '2026-01-01T00:00:00Z'), 'True', 'SnapshotVerified'),
    checked(snap('s2', 'main', 'Succeeded', '2026-01-01T01:00:00Z'), 'False', 'ObjectAltered'),
    checked(snap('s3', 'main', 'Succeeded', '2026-01-01T02:00:00Z'), 'Unknown', 'VerificationRunning'),
    snap('s4', 'main', 'Succeeded', '2025-12-31T00:00:00Z'),
    checked(snap('s5', 'main', 'Failed', '2026-01-01T03:00:00Z'), 'True', 'SnapshotVerified'),
    checked(snap('o1', 'other', 'Succeeded', '2026-01-01T00:00:00Z'), 'False', 'HashMismatch'),
  ]);
  const family = (name: string) => families.find((f) => f.name === `etcd_conductor_${name}`)?.samples;

  it('reports per cluster when the newest verified snapshot was taken, not a newer one that failed its check', () => {
    expect(family('snapshot_last_verified_timestamp_seconds')).toEqual([
      { labels: { namespace: 'ns', cluster: 'main' }, value: Date.parse('2026-01-01T00:00:00Z') / 1000 },
    ]);
  });

  it('counts stored snapshots by their Verified reason, NotChecked for none', () => {
    expect(family('snapshots_verified')).toEqual(
      expect.arrayContaining([
        { labels: { namespace: 'ns', cluster: 'main', verification: 'SnapshotVerified' }, value: 1 },
        { labels: { namespace: 'ns', cluster: 'main', verification: 'ObjectAltered' }, value: 1 },
        { labels: { namespace: 'ns', cluster: 'main', verification: 'VerificationRunning' }, value: 1 },
        { labels: { namespace: 'ns', cluster: 'main', verification: 'NotChecked' }, value: 1 },
        { labels: { namespace: 'ns', cluster: 'other', verification: 'HashMismatch' }, value: 1 },
      ]),
    );
    expect(family('snapshots_verified')).toHaveLength(5);
  });
});

describe('createOperatorMetrics', () => {
  it('renders counters moved by hooks, the leader flag and the process metrics', async () => {
    const m = createOperatorMetrics({ now: () => 0 });
    m.onStatusWritten(running('op-1'), finished('op-1'));
    m.onSignal('cluster');
    m.onWatchRestart('pods');
    m.setWatcherLeader(true);
    m.onObject('etcdclusters', cluster('a', { conditions: [cond('Available', 'True')] }) as never, false);
    const text = await m.render();
    expect(text).toContain('etcd_conductor_operations_total{result="Succeeded",type="ScaleUp"} 1\n');
    expect(text).toContain(
      'etcd_conductor_operation_duration_seconds_bucket{le="120",result="Succeeded",type="ScaleUp"} 1\n',
    );
    expect(text).toContain(
      'etcd_conductor_operation_duration_seconds_bucket{le="60",result="Succeeded",type="ScaleUp"} 0\n',
    );
    expect(text).toContain('etcd_conductor_watch_changes_signalled_total{kind="cluster"} 1\n');
    expect(text).toContain('etcd_conductor_watch_restarts_total{resource="pods"} 1\n');
    expect(text).toContain('etcd_conductor_clusters{condition="Available",status="True"} 1\n');
    expect(text).toContain('etcd_conductor_watcher_leader 1\n');
    // Series read as before the move to prom-client: label names in alphabetical order.
    expect(text).toContain(
      'etcd_conductor_operation_duration_seconds_count{result="Succeeded",type="ScaleUp"} 1\n',
    );
    expect(text).toContain('etcd_conductor_cluster_ready_voters{name="a",namespace="ns"} 0\n');
    // prom-client's default metrics: the process's memory, event-loop lag and garbage collection.
    expect(Number(/^process_resident_memory_bytes (\d+)$/m.exec(text)?.[1])).toBeGreaterThan(0);
    expect(text).toMatch(/^# TYPE nodejs_eventloop_lag_seconds gauge$/m);
    expect(text).toMatch(/^# TYPE nodejs_gc_duration_seconds histogram$/m);
  });
  it('forgets a deleted cluster', async () => {
    const m = createOperatorMetrics({ now: () => 0 });
    const c = cluster('a', { conditions: [cond('Available', 'True')] }) as never;
    m.onObject('etcdclusters', c, false);
    m.onObject('etcdclusters', c, true);
    expect(await m.render()).toContain('etcd_conductor_clusters{condition="Available",status="True"} 0\n');
  });
});
