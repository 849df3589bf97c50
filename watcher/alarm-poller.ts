// Notices etcd alarms (NOSPACE, CORRUPT) and changed Secrets within seconds: asks each EtcdCluster's etcd for its alarm list, and the API server for the versions of the Secrets the cluster uses, on a short interval, and tells the cluster workflow only when either changed.
//
// Why a poller in the operator process and not a faster timer in the workflow: member Pods stay Ready under
// NOSPACE (readiness is /readyz, which ignores it), so no Kubernetes watch reports the alarm, and a workflow
// timer of a few seconds would cost every idle cluster Temporal actions around the clock (bench/fleet.ts
// measures them). The poller costs Temporal nothing while a cluster's alarm list stays as it was: a healthy
// idle cluster is one cheap etcd call per interval and no signal. It runs beside the watchers, only in the
// replica holding the watcher Lease, and stops with them.
//
// Invariants: at most one round runs at a time (the next starts an interval after the last ended), each
// round asks at most MAX_CONCURRENT_ALARM_READS clusters at once, each with a short deadline; a cluster
// that does not answer keeps its last known list (no signal either way); a signal that fails is retried next
// round because the list is recorded only after the signal was delivered.
//
// Secrets (spec.auth's root password, spec.tls's certificates and CA bundles) ride the same rounds for the same
// reason: a rotated password or a new ca.crt changes nothing Kubernetes watches on our objects, so without this
// the workflow would learn of it only at its 10-minute drift check. Only their resourceVersions are compared (a
// get per referenced Secret; no list or watch of Secrets, so no wider grant than the get the activities have).
// The first sighting of a cluster's Secrets tells the workflow as well: a Secret edited before that round (or while
// the operator was down) would otherwise wait for the drift check.
import type { WatchSignalKind } from '../contracts/watch-signals';
import type { KubeConfig } from '@kubernetes/client-node';
import { CustomObjectsApi } from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { EtcdCluster } from '../crds/etcd-cluster';
import { API_GROUP, API_VERSION_NAME, ETCD_CLUSTER } from '../crds/etcd-cluster';
import { clientEndpointFor, issuedTLSSecrets, tlsSecretNames } from '../crds/tls-names';
import { clusterWorkflowId, membersChangedSignal } from '../contracts/messages';

/** etcd's raised alarms as etcd-admin reports them (alarm names upper case). */
export interface AlarmRow {
  memberId: string;
  alarm: string;
}

/** One cluster the poller asks: where its clients connect and which workflow to tell. */
export interface AlarmTarget {
  /** namespace/name */
  key: string;
  namespace: string;
  name: string;
  endpoint: string;
  /** Secrets the cluster uses (spec.auth, spec.tls), sorted: a change to any one needs the workflow to look. */
  secrets: string[];
  /** The cluster has answered the operator before (status.clusterId): only then is not answering news. */
  bootstrapped: boolean;
}

/** Default seconds between rounds: NOSPACE refuses every write, so it should be noticed in seconds, not minutes. */
export const DEFAULT_ALARM_POLL_INTERVAL_SECONDS = 15;
/** Clusters asked at once; a fleet of many is walked in batches rather than all in one burst. */
export const MAX_CONCURRENT_ALARM_READS = 4;

/**
 * The clusters worth asking: not being deleted, not paused (replicas 0: no member answers), not in an
 * excluded namespace. The endpoint is the client Service, TLS or not as the spec says.
 */
export function alarmTargets(
  clusters: readonly (Pick<EtcdCluster, 'metadata' | 'spec'> & {
    status?: Pick<NonNullable<EtcdCluster['status']>, 'clusterId'>;
  })[],
  excludeNamespaces: readonly string[] = [],
): AlarmTarget[] {
  const out: AlarmTarget[] = [];
  for (const c of clusters) {
    const { namespace, name, deletionTimestamp } = c.metadata;
    if (!namespace || !name || deletionTimestamp) continue;
    if (excludeNamespaces.includes(namespace)) continue;
    if (!c.spec || c.spec.replicas < 1) continue;
    out.push({
      key: `${namespace}/${name}`,
      namespace,
      name,
      endpoint: clientEndpointFor(c.spec, { namespace, name }),
      secrets: referencedSecrets(c.spec, name),
      bootstrapped: c.status?.clusterId !== undefined,
    });
  }
  return out.sort((a, b) => a.key.localeCompare(b.key));
}

/**
 * Whether a round in which the cluster did not answer tells its workflow: on the first two rounds of an outage of a
 * cluster that has answered before. One that never answered (bootstrapping, or waiting on a version with no image)
 * is already the workflow's to report, and telling it would wake a workflow that waits cheaply.
 */
export function outageSignalNeeded(bootstrapped: boolean, rounds: number): boolean {
  return bootstrapped && rounds <= 2;
}

/** The Secrets a cluster's members and the operator read: the root password's and every TLS Secret, sorted. */
export function referencedSecrets(
  spec: Pick<EtcdCluster['spec'], 'auth' | 'tls'>,
  cluster: string,
): string[] {
  const names = new Set<string>(Object.values(tlsSecretNames(spec, cluster)));
  // cert-manager's own Secrets too: a renewal shows there first, and the operator moves it into its copies.
  for (const s of issuedTLSSecrets(spec, cluster)) names.add(s.issued);
  if (spec.auth?.rootSecretRef.name) names.add(spec.auth.rootSecretRef.name);
  return [...names].sort();
}

/** One comparable string for the versions of a cluster's Secrets; a missing Secret reads as `-`. */
export function secretVersionsKey(versions: ReadonlyArray<readonly [string, string | undefined]>): string {
  return versions.map(([name, rv]) => `${name}@${rv ?? '-'}`).join(',');
}

/**
 * Whether a change of Secrets needs telling. The first sighting (nothing recorded: the operator just started, or the
 * cluster is new to the poller) tells too: nothing says the workflow's last look read these versions. A Secret
 * edited between a cluster's creation and the poller's first round of it (a round can take tens of seconds on a
 * busy fleet), or while the operator was down, was otherwise only noticed at the 10-minute drift check. It costs
 * one look per cluster with Secrets after each start of the operator.
 */
export function secretsSignalNeeded(recorded: string | undefined, now: string): boolean {
  return recorded !== now;
}

/** One comparable string for an alarm list: order and duplicates do not matter. Empty means no alarm. */
export function alarmSetKey(rows: readonly AlarmRow[]): string {
  return [...new Set(rows.map((r) => `${r.alarm}@${r.memberId}`))].sort().join(',');
}

/**
 * Whether to tell the workflow. A cluster never signalled counts as "no alarm" (what a healthy cluster has),
 * so a healthy fleet sends nothing, even after the poller restarts; any other change is told once, in both
 * directions: a raised alarm so the workflow clears it, a cleared one so status stops showing it.
 */
export function alarmSignalNeeded(lastSignalled: string | undefined, now: string): boolean {
  return (lastSignalled ?? '') !== now;
}

export interface AlarmPollerOptions {
  kubeConfig: KubeConfig;
  temporal: Client;
  /** Limit to one namespace; all namespaces when absent. */
  namespace?: string;
  excludeNamespaces?: readonly string[];
  intervalSeconds?: number;
  /**
   * The cluster's raised alarms. Injected by worker/operator.ts (the watcher does not import activities/),
   * which reads them with the same per-cluster connection resolver as the activities, so TLS and auth work.
   */
  readAlarms: (endpoint: string) => Promise<AlarmRow[]>;
  /** A Secret's resourceVersion, undefined when it does not exist; without it Secrets are not compared. */
  readSecretVersion?: (namespace: string, name: string) => Promise<string | undefined>;
  log: (msg: string, fields?: Record<string, unknown>) => void;
  onSignal?: (kind: Extract<WatchSignalKind, 'alarms' | 'secrets'>) => void;
}

export interface AlarmPoller {
  stop(): Promise<void>;
}

export function startAlarmPoller(opts: AlarmPollerOptions): AlarmPoller {
  const { log } = opts;
  const intervalMs = (opts.intervalSeconds ?? DEFAULT_ALARM_POLL_INTERVAL_SECONDS) * 1000;
  const custom = opts.kubeConfig.makeApiClient(CustomObjectsApi);
  const signalled = new Map<string, string>();
  const unreachable = new Set<string>();
  /** Consecutive rounds a cluster did not answer the alarm poll. */
  const unreachableRounds = new Map<string, number>();
  const secretsSeen = new Map<string, string>();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let round: Promise<void> = Promise.resolve();

  async function listClusters(): Promise<EtcdCluster[]> {
    // resourceVersion 0: served from the apiserver's watch cache, not a quorum read of etcd.
    const page = (await (opts.namespace
      ? custom.listNamespacedCustomObject({
          group: API_GROUP,
          version: API_VERSION_NAME,
          namespace: opts.namespace,
          plural: ETCD_CLUSTER.plural,
          resourceVersion: '0',
        })
      : custom.listClusterCustomObject({
          group: API_GROUP,
          version: API_VERSION_NAME,
          plural: ETCD_CLUSTER.plural,
          resourceVersion: '0',
        }))) as { items?: EtcdCluster[] };
    return page.items ?? [];
  }

  /** Tells the cluster workflow to look again; false when it does not exist (the watcher starts it). */
  async function tell(t: AlarmTarget): Promise<boolean> {
    try {
      await opts.temporal.workflow
        .getHandle(clusterWorkflowId(t.namespace, t.name))
        .signal(membersChangedSignal);
      return true;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    }
  }

  async function pollSecrets(t: AlarmTarget): Promise<void> {
    const read = opts.readSecretVersion;
    if (!read || t.secrets.length === 0) {
      secretsSeen.delete(t.key);
      return;
    }
    const versions = await Promise.all(
      t.secrets.map(async (name) => [name, await read(t.namespace, name)] as const),
    );
    const now = secretVersionsKey(versions);
    const recorded = secretsSeen.get(t.key);
    if (secretsSignalNeeded(recorded, now)) {
      if (!(await tell(t))) return;
      opts.onSignal?.('secrets');
      log('a Secret the cluster uses changed; signalled the cluster workflow', {
        cluster: t.key,
        secrets: now,
      });
    }
    secretsSeen.set(t.key, now);
  }

  async function pollOne(t: AlarmTarget): Promise<void> {
    await pollSecrets(t).catch((err: unknown) =>
      log('cannot read the Secrets of a cluster; trying again next round', {
        cluster: t.key,
        error: String(err),
      }),
    );
    let rows: AlarmRow[];
    try {
      rows = await opts.readAlarms(t.endpoint);
    } catch (err) {
      // Told once per outage: an unreachable cluster (starting, quorum lost) is the workflow's to report.
      const rounds = (unreachableRounds.get(t.key) ?? 0) + 1;
      unreachableRounds.set(t.key, rounds);
      if (!unreachable.has(t.key)) {
        unreachable.add(t.key);
        log('cannot read etcd alarms; keeping the last known list', { cluster: t.key, error: String(err) });
      }
      // News no watch reports (members refusing the operator's certificate, say): the workflow looks again and
      // says what it finds. On the first two rounds of an outage only (the second after the worker's 5 s cache
      // of credentials has expired), so a cluster that stays unreachable costs nothing more.
      if (outageSignalNeeded(t.bootstrapped, rounds)) await tell(t);
      return;
    }
    unreachable.delete(t.key);
    unreachableRounds.delete(t.key);
    const now = alarmSetKey(rows);
    if (!alarmSignalNeeded(signalled.get(t.key), now)) return;
    // No workflow yet: the cluster watcher starts it, and its first look reads the alarms itself.
    if (!(await tell(t))) return;
    signalled.set(t.key, now);
    opts.onSignal?.('alarms');
    log('etcd alarms changed; signalled the cluster workflow', { cluster: t.key, alarms: now || '(none)' });
  }

  async function pollRound(): Promise<void> {
    const targets = alarmTargets(await listClusters(), opts.excludeNamespaces);
    const keys = new Set(targets.map((t) => t.key));
    for (const k of [...signalled.keys()]) if (!keys.has(k)) signalled.delete(k);
    for (const k of [...unreachable]) if (!keys.has(k)) unreachable.delete(k);
    for (const k of [...unreachableRounds.keys()]) if (!keys.has(k)) unreachableRounds.delete(k);
    for (const k of [...secretsSeen.keys()]) if (!keys.has(k)) secretsSeen.delete(k);
    for (let i = 0; i < targets.length && !stopped; i += MAX_CONCURRENT_ALARM_READS) {
      await Promise.all(targets.slice(i, i + MAX_CONCURRENT_ALARM_READS).map((t) => pollOne(t)));
    }
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      round = pollRound()
        .catch((err: unknown) =>
          log('alarm poll round failed; trying again next interval', { error: String(err) }),
        )
        .finally(schedule);
    }, intervalMs);
  }
  schedule();
  log('polling etcd alarms', { intervalSeconds: intervalMs / 1000 });

  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await round;
    },
  };
}
