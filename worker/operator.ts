// Hosts the operator in one process: the Temporal worker (workflows and activities) and the CR watcher.
import { existsSync, readFileSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import type { TLSConfig } from '@temporalio/client';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../activities/cluster-activities';
import { createEtcdAdmin } from '../activities/etcd-admin';
import { etcdImageFor } from '../activities/etcd-images';
import { createEventRecorder } from '../activities/event-recorder';
import { createKubeObjects } from '../activities/kube-objects';
import { createS3Store } from '../activities/s3-store';
import { createSnapshotActivities } from '../activities/snapshot-activities';
import { createSnapshotEventRecorder } from '../activities/snapshot-events';
import { createScheduleActivities } from '../activities/snapshot-schedule-activities';
import { startClusterWatcher } from '../watcher/cluster-watcher';
import { startSnapshotWatcher } from '../watcher/snapshot-watcher';
import { TASK_QUEUE } from '../workflows/messages';
import { WORKFLOW_BUNDLE_PATH } from './bundle-workflows';
import type { OperatorConfig } from './config';

export interface Operator {
  /** Resolves when the worker stops (after `stop()` or a fatal error). */
  done: Promise<void>;
  stop(): Promise<void>;
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

export async function startOperator(config: OperatorConfig, log: Logger): Promise<Operator> {
  const kc = new KubeConfig();
  if (config.kubeconfig) kc.loadFromFile(config.kubeconfig);
  else kc.loadFromDefault();

  const taskQueue = config.taskQueue ?? TASK_QUEUE;
  const temporalOptions = temporalConnectionOptions(config);
  const stops: (() => Promise<void>)[] = [];
  let worker: Worker | undefined;
  let markStopped: () => void = () => undefined;
  // Without a worker role nothing else keeps the process busy: `done` then resolves when stop() is called.
  let done: Promise<void> = new Promise<void>((resolve) => (markStopped = resolve));

  if (config.roles.includes('worker')) {
    const connection = await NativeConnection.connect({
      address: config.temporalAddress,
      ...temporalOptions,
    });
    const kube = createKubeObjects(kc);
    const etcd = createEtcdAdmin();
    // The schedule activities keep Temporal Schedules, which needs a client beside the worker's connection.
    const clientConnection = await Connection.connect({
      address: config.temporalAddress,
      ...temporalOptions,
    });
    const snapshotEvents = createSnapshotEventRecorder(kc);
    const activities = {
      ...createActivities({
        kube,
        etcd,
        events: createEventRecorder(kc),
        imageFor: (version) => etcdImageFor(version, config.etcdRepository),
      }),
      ...createSnapshotActivities({ kube, etcd, events: snapshotEvents, agentImage: config.agentImage }),
      ...createScheduleActivities({
        kube,
        events: snapshotEvents,
        s3: createS3Store(),
        temporal: new Client({ connection: clientConnection, namespace: config.temporalNamespace }),
        agentImage: config.agentImage,
      }),
    };
    worker = await Worker.create({
      connection,
      namespace: config.temporalNamespace,
      taskQueue,
      // The prebuilt bundle from `npm run build`; without one (ts-node, tests) the worker bundles at start.
      ...(existsSync(WORKFLOW_BUNDLE_PATH)
        ? { workflowBundle: { codePath: WORKFLOW_BUNDLE_PATH } }
        : { workflowsPath: require.resolve('../workflows/index') }),
      activities,
    });
    const w = worker;
    done = w
      .run()
      .finally(() => Promise.all([connection.close(), clientConnection.close()]).then(() => undefined));
    stops.push(async () => {
      if (w.getState() === 'RUNNING') w.shutdown();
      await done;
    });
    log('worker polling', { taskQueue, namespace: config.temporalNamespace });
  }

  if (config.roles.includes('watcher')) {
    const connection = await Connection.connect({ address: config.temporalAddress, ...temporalOptions });
    const client = new Client({ connection, namespace: config.temporalNamespace });
    const watcher = await startClusterWatcher({
      kubeConfig: kc,
      temporal: client,
      taskQueue,
      log,
      ...(config.watchNamespace ? { namespace: config.watchNamespace } : {}),
      ...(config.excludeNamespaces ? { excludeNamespaces: config.excludeNamespaces } : {}),
    });
    const snapshotWatcher = await startSnapshotWatcher({
      kubeConfig: kc,
      temporal: client,
      taskQueue,
      log,
      ...(config.watchNamespace ? { namespace: config.watchNamespace } : {}),
      ...(config.excludeNamespaces ? { excludeNamespaces: config.excludeNamespaces } : {}),
    });
    stops.unshift(async () => {
      await Promise.all([watcher.stop(), snapshotWatcher.stop()]);
      await connection.close();
    });
  }

  return {
    done,
    async stop() {
      for (const s of stops) await s();
      markStopped();
    },
  };
}
