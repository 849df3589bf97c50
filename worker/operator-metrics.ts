// The operator's metrics: what the process counts (operations, signals, watch restarts) and what it derives at
// scrape time from the objects the watcher already holds (clusters by condition, members, running operations,
// newest snapshot, continuous backup); docs/metrics.md lists them.
//
// Invariant: workflow code is never touched for metrics. An operation's start and end are read from the status
// write that publishes them (status is the UI, so the metric and `kubectl get` agree), and a write is counted
// only when it changes the object on the apiserver, so a retried activity or a second replica counts nothing twice.
import { WATCH_SIGNAL_KINDS, type WatchSignalKind } from '../contracts/watch-signals';
import type { KubernetesObject } from '@kubernetes/client-node';
import { ConditionTypes, VerificationReasons } from '../crds/conditions';
import type {
  BackupStatus,
  EtcdCluster,
  EtcdClusterStatus,
  OperationResult,
  OperationType,
} from '../crds/etcd-cluster';
import { CONDITION_STATUSES } from '../crds/etcd-cluster';
import type { EtcdSnapshot } from '../crds/etcd-snapshot';
import { SnapshotConditionTypes } from '../crds/etcd-snapshot';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export const METRIC_PREFIX = 'etcd_conductor_';

/** The exposition's content type (Prometheus text 0.0.4, as prom-client's registry writes it). */
export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

export interface Sample {
  labels: Readonly<Record<string, string>>;
  value: number;
}

/** A gauge computed at scrape time from what the watcher holds: its name, help, label names and samples. */
export interface GaugeFamily {
  name: string;
  help: string;
  labelNames: readonly string[];
  samples: Sample[];
}

/** Seconds; operations run from seconds (a heal) to many minutes (a scale of a large member). */
export const OPERATION_DURATION_BUCKETS = [1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

export interface OperationTransition {
  started?: OperationType;
  finished?: { type: OperationType; result: OperationResult; seconds?: number };
}

/**
 * What a status write tells about operations, given the status on the apiserver before it. An operation
 * started when a new `currentOperation` appears; it finished when a new `lastOperation` appears, and lasted
 * from the `startedAt` the object still showed to the `finishedAt` now written (unknown if the object never
 * showed it running, e.g. it ended before its first status write).
 */
export function operationTransition(
  before: EtcdClusterStatus | undefined,
  after: EtcdClusterStatus,
): OperationTransition {
  const t: OperationTransition = {};
  const cur = after.currentOperation;
  if (cur && cur.workflowId !== before?.currentOperation?.workflowId) t.started = cur.type;
  const last = after.lastOperation;
  if (last && last.workflowId !== before?.lastOperation?.workflowId) {
    const running = before?.currentOperation;
    const seconds =
      running?.workflowId === last.workflowId
        ? (Date.parse(last.finishedAt) - Date.parse(running.startedAt)) / 1000
        : NaN;
    t.finished = {
      type: last.type,
      result: last.result,
      ...(Number.isFinite(seconds) && seconds >= 0 ? { seconds } : {}),
    };
  }
  return t;
}

/** The parts of an EtcdCluster the gauges need, kept per cluster while the watcher sees it. */
export interface ClusterView {
  namespace: string;
  name: string;
  desired: number;
  voters: number;
  readyVoters: number;
  conditions: { type: string; status: string }[];
  operation?: { type: string; startedAt: string };
  progressDeadlineSeconds: number;
  /** status.backup, while the continuous backup is on. */
  backup?: Omit<BackupStatus, 'gaps'> & { gaps: number };
}

export function clusterView(obj: EtcdCluster): ClusterView {
  const s = obj.status ?? {};
  return {
    namespace: obj.metadata.namespace,
    name: obj.metadata.name,
    desired: obj.spec?.replicas ?? 0,
    voters: (s.members ?? []).filter((m) => m.role === 'voter').length,
    readyVoters: s.readyReplicas ?? 0,
    conditions: (s.conditions ?? []).map((c) => ({ type: c.type, status: c.status })),
    ...(s.currentOperation
      ? { operation: { type: s.currentOperation.type, startedAt: s.currentOperation.startedAt } }
      : {}),
    progressDeadlineSeconds: obj.spec?.progressDeadlineSeconds ?? 0,
    ...(s.backup
      ? {
          backup: {
            ...(s.backup.latestRevision !== undefined ? { latestRevision: s.backup.latestRevision } : {}),
            ...(s.backup.latestTime !== undefined ? { latestTime: s.backup.latestTime } : {}),
            ...(s.backup.lagSeconds !== undefined ? { lagSeconds: s.backup.lagSeconds } : {}),
            gaps: s.backup.gaps?.length ?? 0,
          },
        }
      : {}),
  };
}

/** Gauges over the clusters the watcher sees; every condition type and status appears, zero included. */
export function clusterFamilies(views: readonly ClusterView[], nowMs: number): GaugeFamily[] {
  const byCondition: Sample[] = [];
  for (const type of Object.values(ConditionTypes)) {
    for (const status of CONDITION_STATUSES) {
      const value = views.filter((v) =>
        v.conditions.some((c) => c.type === type && c.status === status),
      ).length;
      byCondition.push({ labels: { condition: type, status }, value });
    }
  }
  const per = (pick: (v: ClusterView) => number): Sample[] =>
    views.map((v) => ({ labels: { namespace: v.namespace, name: v.name }, value: pick(v) }));
  const running = views.flatMap((v) =>
    v.operation
      ? [
          {
            labels: { namespace: v.namespace, name: v.name, type: v.operation.type },
            value: Math.max(0, (nowMs - Date.parse(v.operation.startedAt)) / 1000),
          },
        ]
      : [],
  );
  return [
    {
      name: `${METRIC_PREFIX}clusters`,
      help: 'EtcdClusters by condition type and status, as the watcher last saw them.',
      labelNames: ['condition', 'status'],
      samples: byCondition,
    },
    {
      name: `${METRIC_PREFIX}cluster_desired_members`,
      help: 'spec.replicas of each EtcdCluster.',
      labelNames: ['namespace', 'name'],
      samples: per((v) => v.desired),
    },
    {
      name: `${METRIC_PREFIX}cluster_voters`,
      help: 'Voting members etcd lists for each EtcdCluster (status.members with role voter).',
      labelNames: ['namespace', 'name'],
      samples: per((v) => v.voters),
    },
    {
      name: `${METRIC_PREFIX}cluster_ready_voters`,
      help: 'Voters that answer and whose Pod is Ready (status.readyReplicas).',
      labelNames: ['namespace', 'name'],
      samples: per((v) => v.readyVoters),
    },
    {
      name: `${METRIC_PREFIX}cluster_progress_deadline_seconds`,
      help: 'spec.progressDeadlineSeconds of each EtcdCluster: how long one operation may go without progress.',
      labelNames: ['namespace', 'name'],
      samples: per((v) => v.progressDeadlineSeconds),
    },
    {
      name: `${METRIC_PREFIX}cluster_operation_running_seconds`,
      help: 'How long the operation in status.currentOperation has been running.',
      labelNames: ['namespace', 'name', 'type'],
      samples: running,
    },
  ];
}

/**
 * The continuous backup of each cluster that has status.backup, as the operator last wrote it: a figure the status
 * does not hold yet (the archiver has stored nothing) has no sample rather than a zero, so "no lag" is never made up.
 */
export function backupFamilies(views: readonly ClusterView[]): GaugeFamily[] {
  const per = (pick: (b: NonNullable<ClusterView['backup']>) => number | undefined): Sample[] =>
    views.flatMap((v) => {
      const value = v.backup ? pick(v.backup) : undefined;
      return value !== undefined && Number.isFinite(value)
        ? [{ labels: { namespace: v.namespace, name: v.name }, value }]
        : [];
    });
  const labelNames = ['namespace', 'name'];
  return [
    {
      name: `${METRIC_PREFIX}backup_lag_seconds`,
      help: 'status.backup.lagSeconds: how far the continuous backup was behind etcd when the operator last looked (0 within maxLagSeconds plus the report interval).',
      labelNames,
      samples: per((b) => b.lagSeconds),
    },
    {
      name: `${METRIC_PREFIX}backup_latest_revision`,
      help: 'status.backup.latestRevision: every change up to this etcd revision is in the store.',
      labelNames,
      samples: per((b) => b.latestRevision),
    },
    {
      name: `${METRIC_PREFIX}backup_latest_timestamp_seconds`,
      help: 'status.backup.latestTime as Unix time: when the store was last known to hold everything etcd had.',
      labelNames,
      samples: per((b) => (b.latestTime !== undefined ? Date.parse(b.latestTime) / 1000 : undefined)),
    },
    {
      name: `${METRIC_PREFIX}backup_gaps`,
      help: 'Gaps in the retained range of the continuous backup (status.backup.gaps).',
      labelNames,
      samples: per((b) => b.gaps),
    },
  ];
}

/** The `verification` label: the Verified reason of a stored snapshot, or NotChecked when it has none (yet). */
export const NOT_CHECKED = 'NotChecked';
export const VERIFICATION_LABEL_VALUES: readonly string[] = [
  ...Object.values(VerificationReasons),
  NOT_CHECKED,
];

/** Per cluster, the time the newest Succeeded EtcdSnapshot was taken, the newest verified one, and counts by check. */
export function snapshotFamilies(snapshots: readonly EtcdSnapshot[]): GaugeFamily[] {
  const newest = new Map<string, Sample>();
  const newestVerified = new Map<string, Sample>();
  const byVerification = new Map<string, Sample>();
  const keep = (into: Map<string, Sample>, key: string, sample: Sample) => {
    if (Number.isFinite(sample.value) && sample.value > (into.get(key)?.value ?? -Infinity))
      into.set(key, sample);
  };
  for (const s of snapshots) {
    const takenAt = s.status?.phase === 'Succeeded' ? s.status.artifact?.takenAt : undefined;
    if (!takenAt) continue;
    const value = Date.parse(takenAt) / 1000;
    const labels = { namespace: s.metadata.namespace, cluster: s.spec.clusterRef.name };
    const key = `${labels.namespace}/${labels.cluster}`;
    keep(newest, key, { labels, value });
    const verified = s.status?.conditions?.find((c) => c.type === SnapshotConditionTypes.Verified);
    if (verified?.status === 'True') keep(newestVerified, key, { labels, value });
    const verification = verified?.reason ?? NOT_CHECKED;
    const countKey = `${key}/${verification}`;
    const count = byVerification.get(countKey) ?? { labels: { ...labels, verification }, value: 0 };
    count.value += 1;
    byVerification.set(countKey, count);
  }
  return [
    {
      name: `${METRIC_PREFIX}snapshot_last_success_timestamp_seconds`,
      help: 'Unix time the newest Succeeded EtcdSnapshot of each cluster was taken.',
      labelNames: ['namespace', 'cluster'],
      samples: [...newest.values()],
    },
    {
      name: `${METRIC_PREFIX}snapshot_last_verified_timestamp_seconds`,
      help: 'Unix time the newest EtcdSnapshot of each cluster whose stored copy was verified (Verified=True) was taken.',
      labelNames: ['namespace', 'cluster'],
      samples: [...newestVerified.values()],
    },
    {
      name: `${METRIC_PREFIX}snapshots_verified`,
      help: 'Succeeded EtcdSnapshots of each cluster by the reason of their Verified condition (NotChecked: none yet).',
      labelNames: ['namespace', 'cluster', 'verification'],
      samples: [...byVerification.values()],
    },
  ];
}

export interface OperatorMetrics {
  /** Called by the status writer with the status on the apiserver before the write and the one written. */
  onStatusWritten(before: EtcdClusterStatus | undefined, after: EtcdClusterStatus): void;
  onSignal(kind: WatchSignalKind): void;
  onWatchRestart(resource: string): void;
  /** Every object an informer delivers, so scrape-time gauges need no lists of their own. */
  onObject(resource: string, obj: KubernetesObject, deleted: boolean): void;
  setWatcherLeader(leader: boolean): void;
  /** The Prometheus text exposition, this process's default metrics (memory, CPU, event loop, GC) included. */
  render(): Promise<string>;
}

/**
 * The labels with their names in alphabetical order. prom-client prints labels in the order of the object it
 * was given; sorted, every series reads as it always did (`{result="Succeeded",type="Bootstrap"}`), so queries
 * and scrapers that match the text keep working. Only a histogram bucket's `le` comes first now.
 */
function sorted(labels: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * A gauge that prom-client fills at each scrape from `family()`, so it never shows a cluster the watcher no
 * longer holds.
 */
function scrapeGauge(register: Registry, first: GaugeFamily, family: () => GaugeFamily | undefined): void {
  new Gauge({
    name: first.name,
    help: first.help,
    labelNames: first.labelNames,
    registers: [register],
    collect() {
      this.reset();
      for (const s of family()?.samples ?? []) this.set(sorted(s.labels), s.value);
    },
  });
}

export function createOperatorMetrics(
  host: { now: () => number } = { now: () => Date.now() },
): OperatorMetrics {
  // One registry per instance (not prom-client's global one), so tests and a second instance never share series.
  const register = new Registry();
  // The process's own health: resident memory, CPU, heap, event-loop lag, GC (prom-client's default metrics).
  collectDefaultMetrics({ register });
  const started = new Counter({
    name: `${METRIC_PREFIX}operations_started_total`,
    help: 'Operations started, by type.',
    labelNames: ['type'],
    registers: [register],
  });
  const finished = new Counter({
    name: `${METRIC_PREFIX}operations_total`,
    help: 'Operations finished, by type and result (Succeeded, Failed, Cancelled, DeadlineExceeded).',
    labelNames: ['type', 'result'],
    registers: [register],
  });
  const durations = new Histogram({
    name: `${METRIC_PREFIX}operation_duration_seconds`,
    help: 'Run time of finished operations whose start the cluster status showed, by type and result.',
    buckets: OPERATION_DURATION_BUCKETS,
    labelNames: ['type', 'result'],
    registers: [register],
  });
  const signals = new Counter({
    name: `${METRIC_PREFIX}watch_changes_signalled_total`,
    help: `Changes the watchers signalled to workflows, by kind (${WATCH_SIGNAL_KINDS.join(', ')}).`,
    labelNames: ['kind'],
    registers: [register],
  });
  const restarts = new Counter({
    name: `${METRIC_PREFIX}watch_restarts_total`,
    help: 'Watches that failed and were relisted after back-off, by resource.',
    labelNames: ['resource'],
    registers: [register],
  });
  const clusters = new Map<string, ClusterView>();
  const snapshots = new Map<string, EtcdSnapshot>();
  let leader = false;
  new Gauge({
    name: `${METRIC_PREFIX}watcher_leader`,
    help: '1 while this process holds the watcher Lease and runs the watchers, else 0.',
    registers: [register],
    collect() {
      this.set(leader ? 1 : 0);
    },
  });
  const scrapeFamilies = (): GaugeFamily[] => [
    ...clusterFamilies([...clusters.values()], host.now()),
    ...backupFamilies([...clusters.values()]),
    ...snapshotFamilies([...snapshots.values()]),
  ];
  for (const first of [...clusterFamilies([], 0), ...backupFamilies([]), ...snapshotFamilies([])]) {
    scrapeGauge(register, first, () => scrapeFamilies().find((f) => f.name === first.name));
  }

  return {
    onStatusWritten(before, after) {
      const t = operationTransition(before, after);
      if (t.started) started.inc(sorted({ type: t.started }));
      if (t.finished) {
        const labels = sorted({ type: t.finished.type, result: t.finished.result });
        finished.inc(labels);
        if (t.finished.seconds !== undefined) durations.observe(labels, t.finished.seconds);
      }
    },
    onSignal: (kind) => signals.inc(sorted({ kind })),
    onWatchRestart: (resource) => restarts.inc(sorted({ resource })),
    onObject(resource, obj, deleted) {
      const key = obj.metadata?.uid ?? `${obj.metadata?.namespace}/${obj.metadata?.name}`;
      if (resource === 'etcdclusters') {
        if (deleted) clusters.delete(key);
        else clusters.set(key, clusterView(obj as unknown as EtcdCluster));
      } else if (resource === 'etcdsnapshots') {
        if (deleted) snapshots.delete(key);
        else snapshots.set(key, obj as unknown as EtcdSnapshot);
      }
    },
    setWatcherLeader(value) {
      leader = value;
    },
    render: () => register.metrics(),
  };
}
