// What each command shows, computed from the objects alone (no I/O), so the tables are tested as tables.
import type { EtcdCluster, MemberStatus } from '../crds/etcd-cluster';
import type { EtcdSnapshot } from '../crds/etcd-snapshot';
import { formatAge, formatBytes, renderTable } from './table';

/** A member id as etcdctl prints it (older operators wrote no hexId). */
function hexId(m: MemberStatus): string {
  return m.hexId ?? (/^\d+$/.test(m.id) ? BigInt(m.id).toString(16) : m.id);
}

export function renderStatus(c: EtcdCluster, now: number): string {
  const s = c.status;
  const members = s?.members ?? [];
  const voters = members.filter((m) => m.role === 'voter');
  const op = s?.currentOperation;
  const last = s?.lastOperation;
  const stale =
    s?.observedGeneration !== undefined && s.observedGeneration !== c.metadata.generation
      ? ` (status is of generation ${s.observedGeneration}; the spec is at ${c.metadata.generation})`
      : '';
  const summary: [string, string | undefined][] = [
    ['Cluster', `${c.metadata.namespace}/${c.metadata.name}${stale}`],
    ['Version', c.spec.version],
    [
      'Members',
      `${s?.readyReplicas ?? 0} of ${c.spec.replicas} ready` +
        (members.length > voters.length ? `, ${members.length - voters.length} learner` : '') +
        (s?.updatedReplicas !== undefined ? `, ${s.updatedReplicas} up to date` : ''),
    ],
    ['Leader', s?.leader ?? (members.length > 0 ? 'none' : undefined)],
    ['Endpoint', s?.clientEndpoint],
    [
      'Operation',
      op
        ? `${op.type} running ${formatAge(op.startedAt, now) ?? ''}${op.step ? `, ${op.step}` : ''} (${op.workflowId})`
        : 'none',
    ],
    [
      'Last',
      last
        ? `${last.type} ${last.result} ${formatAge(last.finishedAt, now) ?? ''} ago${last.message ? `: ${last.message}` : ''}`
        : undefined,
    ],
  ];
  const head = summary
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${`${k}:`.padEnd(11)}${v}`)
    .join('\n');
  const memberTable =
    members.length === 0
      ? 'No members listed (etcd has not answered yet, or the cluster is paused).'
      : renderTable(
          [
            'name',
            'id',
            'role',
            'ready',
            'leader',
            'version',
            'db size',
            'in use',
            'lag',
            'up to date',
            'error',
          ],
          members.map((m) => [
            m.name,
            hexId(m),
            m.role,
            m.ready,
            m.leader,
            m.version,
            formatBytes(m.dbSize),
            formatBytes(m.dbSizeInUse),
            m.raftLag,
            m.upToDate,
            m.lastError,
          ]),
        );
  const conditions = renderTable(
    ['condition', 'status', 'reason', 'since', 'message'],
    (s?.conditions ?? []).map((x) => [
      x.type,
      x.status,
      x.reason,
      formatAge(x.lastTransitionTime, now),
      x.message,
    ]),
  );
  return `${head}\n\n${memberTable}\n\n${conditions}`;
}

/** The snapshots taken of one cluster, newest first. */
export function clusterSnapshots(all: readonly EtcdSnapshot[], cluster: string): EtcdSnapshot[] {
  const when = (s: EtcdSnapshot) =>
    Date.parse(s.status?.artifact?.takenAt ?? s.metadata.creationTimestamp ?? '') || 0;
  return all.filter((s) => s.spec.clusterRef.name === cluster).sort((a, b) => when(b) - when(a));
}

/** The Verified condition in a word: its reason when it failed (what to look at), else its status. */
export function verifiedOf(s: EtcdSnapshot): string | undefined {
  const v = s.status?.conditions?.find((c) => c.type === 'Verified');
  if (!v) return undefined;
  return v.status === 'False' ? v.reason : v.status;
}

export function renderBackups(snapshots: readonly EtcdSnapshot[], now: number): string {
  if (snapshots.length === 0) return 'No snapshots of this cluster.';
  return renderTable(
    ['name', 'phase', 'verified', 'revision', 'size', 'taken', 'etcd', 'uri'],
    snapshots.map((s) => [
      s.metadata.name,
      s.status?.phase ?? 'Pending',
      verifiedOf(s),
      s.status?.artifact?.revision,
      formatBytes(s.status?.artifact?.size),
      s.status?.artifact ? `${formatAge(s.status.artifact.takenAt, now)} ago` : undefined,
      s.status?.artifact?.etcdVersion,
      s.status?.artifact?.uri,
    ]),
  );
}

/** One operation as Temporal lists it. */
export interface OperationRow {
  workflowId: string;
  type?: string;
  status: string;
  startTime?: string;
  closeTime?: string;
  /** The step the running one is on (from the cluster's status). */
  step?: string;
}

function duration(from?: string, to?: string, now?: number): string | undefined {
  if (!from) return undefined;
  const end = to ? Date.parse(to) : now;
  if (end === undefined) return undefined;
  const s = Math.max(0, Math.round((end - Date.parse(from)) / 100) / 10);
  return s < 120 ? `${s}s` : `${Math.round(s / 60)}m`;
}

export function renderOperations(rows: readonly OperationRow[], now: number): string {
  if (rows.length === 0) return 'No operations recorded for this cluster.';
  return renderTable(
    ['workflow id', 'type', 'status', 'started', 'took', 'step'],
    rows.map((r) => [
      r.workflowId,
      r.type,
      r.status,
      r.startTime ? `${formatAge(r.startTime, now)} ago` : undefined,
      duration(r.startTime, r.closeTime, now),
      r.step,
    ]),
  );
}

/** A name for a snapshot taken now: `<cluster>-<yyyymmddhhmmss>`, at most 63 characters like the Job it gets. */
export function manualSnapshotName(cluster: string, now: number): string {
  const stamp = new Date(now).toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return `${cluster.slice(0, 63 - stamp.length - 1).replace(/[-.]+$/, '')}-${stamp}`;
}
