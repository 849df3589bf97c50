// Hosts the operator in one process: the Temporal worker (workflows and activities) in every replica, and the CR
// watchers in the one replica holding the watcher Lease.
//
// Invariant: a start that fails part-way closes what it opened and throws a StartupError saying what and where,
// so main can retry without leaking connections.
import type { WatchSignalKind } from '../contracts/watch-signals';
import { existsSync, readFileSync } from 'node:fs';
import type { KubernetesObject } from '@kubernetes/client-node';
import { BatchV1Api, CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import type { TLSConfig } from '@temporalio/client';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../activities/cluster-activities';
import { createDowngradeActivities, createDowngradeEtcd } from '../activities/downgrade-activities';
import { createAuthActivities } from '../activities/auth-activities';
import { createEtcdAdmin } from '../activities/etcd-admin';
import { authConnection } from '../activities/etcd-auth';
import { createConnectionResolver } from '../activities/etcd-connection';
import { tlsConnection } from '../activities/etcd-tls';
import { etcdImageFor } from '../activities/etcd-images';
import { createEventRecorder } from '../activities/event-recorder';
import { createKubeObjects } from '../activities/kube-objects';
import { createS3Store } from '../activities/s3-store';
import { createSnapshotActivities } from '../activities/snapshot-activities';
import { createContinuousBackupActivities, readS3Object } from '../activities/continuous-backup-activities';
import { createSnapshotEventRecorder } from '../activities/snapshot-events';
import { createScheduleActivities } from '../activities/snapshot-schedule-activities';
import { createDefragScheduleActivities } from '../activities/defrag-schedule-activities';
import { API_GROUP, API_VERSION_NAME, ETCD_CLUSTER } from '../crds/etcd-cluster';
import { ETCD_SNAPSHOT } from '../crds/etcd-snapshot';
import { ETCD_SNAPSHOT_SCHEDULE } from '../crds/etcd-snapshot-schedule';
import { startAlarmPoller } from '../watcher/alarm-poller';
import { startClusterWatcher } from '../watcher/cluster-watcher';
import { startSnapshotWatcher } from '../watcher/snapshot-watcher';
import { TASK_QUEUE } from '../contracts/messages';
import { WORKFLOW_BUNDLE_PATH } from './bundle-workflows';
import { livenessHeartbeats, MAX_HEARTBEAT_THROTTLE_MS } from './liveness-heartbeats';
import type { OperatorConfig } from './config';
import type { OperatorMetrics } from './operator-metrics';
import type { StartupStep } from './startup-errors';
import { describeStartupFailure, StartupError } from './startup-errors';
import { startWatcherLease } from './watcher-lease';
import { MAX_CACHED_WORKFLOWS } from '../contracts/node-flags';

const STICKY_SCHEDULE_TO_START = '2s';

export interface Operator {
  /** Resolves when the worker stops (after `stop()` or a fatal error). */
  done: Promise<void>;
  stop(): Promise<void>;
  /** For /readyz: the roles and, for the watcher, whether this replica holds the Lease. */
  describe(): string;
}

export type Logger = (msg: string, fields?: Record<string, unknown>) => void;

/** TLS and API key settings shared by the worker's and the watcher's connections; files are read once, at start. */
export function temporalConnectionOptions(config: OperatorConfig): { tls?: TLSConfig; apiKey?: string } {
  const t = config.temporalTls;
  if (!t) return {};
  const read = (file: string, what: string) => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new Error(`cannot read the Temporal ${what} ${file}: ${String(err)}`, { cause: err });
    }
  };
  const tls: TLSConfig = {
    ...(t.clientCertFile && t.clientKeyFile
      ? {
          clientCertPair: {
            crt: read(t.clientCertFile, 'client certificate'),
            key: read(t.clientKeyFile, 'client key'),
          },
        }
      : {}),
    ...(t.caFile ? { serverRootCACertificate: read(t.caFile, 'CA bundle') } : {}),
    ...(t.serverName ? { serverNameOverride: t.serverName } : {}),
  };
  return { tls, ...(config.temporalApiKey ? { apiKey: config.temporalApiKey } : {}) };
}

export async function startOperator(
  config: OperatorConfig,
  log: Logger,
  metrics: OperatorMetrics,
): Promise<Operator> {
  const kc = new KubeConfig();
  if (config.kubeconfig) kc.loadFromFile(config.kubeconfig);
  else kc.loadFromDefault();

  const taskQueue = config.taskQueue ?? TASK_QUEUE;
  const where = {
    temporalAddress: config.temporalAddress,
    temporalNamespace: config.temporalNamespace,
    apiServer: kc.getCurrentCluster()?.server ?? '(no cluster in kubeconfig)',
  };
  /** Runs one start step; its failure becomes the plain sentence main logs and /readyz shows. */
  const step = async <T>(name: StartupStep, fn: () => Promise<T>, resource?: string): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw new StartupError(name, describeStartupFailure(name, { ...where, resource }, err), { cause: err });
    }
  };
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const s of stops.splice(0)) await s().catch(() => undefined);
  };
  let worker: Worker | undefined;
  let markStopped: () => void = () => undefined;
  // Without a worker role nothing else keeps the process busy: `done` then resolves when stop() is called.
  let done: Promise<void> = new Promise<void>((resolve) => (markStopped = resolve));
  let watcherState = () => '';

  try {
    const temporalOptions = temporalConnectionOptions(config);
    // One client connection checks the namespace first, so a wrong one is named before anything polls it.
    const clientConnection = await step('temporal-connect', () =>
      Connection.connect({ address: config.temporalAddress, ...temporalOptions }),
    );
    stops.push(() => clientConnection.close());
    await step('temporal-namespace', () =>
      clientConnection.workflowService.describeNamespace({ namespace: config.temporalNamespace }),
    );
    const client = new Client({ connection: clientConnection, namespace: config.temporalNamespace });

    if (config.roles.includes('watcher')) {
      // A 403 here names the missing RBAC rule; informers would only log it at every relist.
      await preflightLists(kc, config.watchNamespace, (resource, fn) => step('kube-list', fn, resource));
    }

    if (config.roles.includes('worker')) {
      const connection = await step('temporal-connect', () =>
        NativeConnection.connect({ address: config.temporalAddress, ...temporalOptions }),
      );
      const kube = createKubeObjects(kc);
      // Each cluster's TLS and auth join here as contributors: its secrets are read in this process only.
      const etcdOptions = {
        connectionFor: createConnectionResolver([tlsConnection(kube), authConnection(kube)]),
      };
      const etcd = createEtcdAdmin(etcdOptions);
      const snapshotEvents = createSnapshotEventRecorder(kc);
      const activities = {
        ...createActivities({
          kube,
          etcd,
          events: createEventRecorder(kc),
          imageFor: (version) => etcdImageFor(version, config.etcdRepository),
          onStatusWritten: (before, after) => metrics.onStatusWritten(before, after),
        }),
        ...createSnapshotActivities({ kube, etcd, events: snapshotEvents, agentImage: config.agentImage }),
        ...createContinuousBackupActivities({
          kube,
          agentImage: config.agentImage,
          readObject: readS3Object,
        }),
        ...createDowngradeActivities({ etcd: createDowngradeEtcd(etcdOptions) }),
        ...createAuthActivities({ kube, etcd: etcdOptions }),
        // The schedule activities keep Temporal Schedules, which needs a client beside the worker's connection.
        ...createScheduleActivities({
          kube,
          events: snapshotEvents,
          s3: createS3Store(),
          temporal: client,
          agentImage: config.agentImage,
        }),
        ...createDefragScheduleActivities({ temporal: client }),
      };
      worker = await step('worker', () =>
        Worker.create({
          connection,
          namespace: config.temporalNamespace,
          taskQueue,
          // The prebuilt bundle from `npm run build`; without one (ts-node, tests) the worker bundles at start.
          ...(existsSync(WORKFLOW_BUNDLE_PATH)
            ? { workflowBundle: { codePath: WORKFLOW_BUNDLE_PATH } }
            : { workflowsPath: require.resolve('../workflows/index') }),
          activities,
          // A killed worker's activity is retried within its kind's heartbeat timeout (activity-kinds.ts).
          interceptors: { activity: [livenessHeartbeats] },
          maxHeartbeatThrottleInterval: MAX_HEARTBEAT_THROTTLE_MS,
          maxCachedWorkflows: MAX_CACHED_WORKFLOWS,
          // A workflow task sent to a worker that died (the operator killed or its Pod deleted) waits this long on
          // the dead worker's sticky queue before Temporal gives it to the task queue: every cluster the dead
          // worker had cached stood still for the SDK's default 10 s after a restart. A live worker picks a task up
          // within milliseconds, so 2 s loses nothing but a cached replay now and then under heavy load.
          stickyQueueScheduleToStartTimeout: STICKY_SCHEDULE_TO_START,
        }),
      ).catch(async (err: unknown) => {
        await connection.close();
        throw err;
      });
      const w = worker;
      done = w.run().finally(() => connection.close());
      stops.unshift(async () => {
        if (w.getState() === 'RUNNING') w.shutdown();
        await done;
      });
      log('worker polling', { taskQueue, namespace: config.temporalNamespace });
    }

    if (config.roles.includes('watcher')) {
      const hooks = {
        onSignal: (kind: WatchSignalKind) => metrics.onSignal(kind),
        onWatchRestart: (resource: string) => metrics.onWatchRestart(resource),
        onObject: (resource: string, obj: KubernetesObject, deleted: boolean) =>
          metrics.onObject(resource, obj, deleted),
        ...(config.watchNamespace ? { namespace: config.watchNamespace } : {}),
        ...(config.excludeNamespaces ? { excludeNamespaces: config.excludeNamespaces } : {}),
      };
      let running: { stop(): Promise<void> }[] = [];
      // The alarm poller reads etcd with each cluster's own TLS and auth, resolved in this process like the
      // activities do; a short deadline, so one unreachable cluster does not hold a round up.
      const alarmKube = createKubeObjects(kc);
      const alarmEtcd = createEtcdAdmin({
        callTimeoutMs: 3000,
        connectionFor: createConnectionResolver([tlsConnection(alarmKube), authConnection(alarmKube)]),
      });
      const lease = startWatcherLease({
        kubeConfig: kc,
        namespace: config.operatorNamespace,
        identity: config.identity,
        log,
        onLeaderChange: (leader) => metrics.setWatcherLeader(leader),
        async onLeading() {
          const common = { kubeConfig: kc, temporal: client, taskQueue, log, ...hooks };
          running = [await startClusterWatcher(common), await startSnapshotWatcher(common)];
          if (config.alarmPollSeconds > 0)
            running.push(
              startAlarmPoller({
                ...common,
                intervalSeconds: config.alarmPollSeconds,
                readAlarms: (endpoint) => alarmEtcd.alarms([endpoint]),
                readSecretVersion: async (namespace, name) =>
                  (await alarmKube.read({ apiVersion: 'v1', kind: 'Secret', namespace, name }))?.metadata
                    ?.resourceVersion,
              }),
            );
        },
        async onStopLeading() {
          const stopping = running;
          running = [];
          await Promise.all(stopping.map((r) => r.stop()));
        },
      });
      watcherState = () => lease.describe();
      // Before the connections close: the watchers still signal while they stop, and the Lease is released last.
      stops.unshift(() => lease.stop());
    }
  } catch (err) {
    await stopAll();
    throw err;
  }

  return {
    done,
    describe: () =>
      `identity ${config.identity}; roles ${config.roles.map((r) => (r === 'watcher' ? `watcher (${watcherState()})` : r)).join(', ')}`,
    async stop() {
      await stopAll();
      markStopped();
    },
  };
}

/** Lists each resource the watchers watch, one object at most, so missing RBAC fails the start with its name. */
async function preflightLists(
  kc: KubeConfig,
  namespace: string | undefined,
  step: (resource: string, fn: () => Promise<unknown>) => Promise<unknown>,
): Promise<void> {
  const custom = kc.makeApiClient(CustomObjectsApi);
  const core = kc.makeApiClient(CoreV1Api);
  const batch = kc.makeApiClient(BatchV1Api);
  const limit = 1;
  const listCustom = (plural: string) =>
    namespace
      ? custom.listNamespacedCustomObject({
          group: API_GROUP,
          version: API_VERSION_NAME,
          namespace,
          plural,
          limit,
        })
      : custom.listClusterCustomObject({ group: API_GROUP, version: API_VERSION_NAME, plural, limit });
  for (const plural of [ETCD_CLUSTER.plural, ETCD_SNAPSHOT.plural, ETCD_SNAPSHOT_SCHEDULE.plural])
    await step(`${plural}.${API_GROUP}`, () => listCustom(plural));
  await step('pods', () =>
    namespace ? core.listNamespacedPod({ namespace, limit }) : core.listPodForAllNamespaces({ limit }),
  );
  await step('persistentvolumeclaims', () =>
    namespace
      ? core.listNamespacedPersistentVolumeClaim({ namespace, limit })
      : core.listPersistentVolumeClaimForAllNamespaces({ limit }),
  );
  await step('jobs.batch', () =>
    namespace ? batch.listNamespacedJob({ namespace, limit }) : batch.listJobForAllNamespaces({ limit }),
  );
}
