// What the workflow tests share: the Temporal dev server the local stack builds (no download) with the project's search attributes, the workflow bundle, and polling of the fake world.
import type { WorkflowHandle } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import type { EtcdClusterSpec, EtcdClusterStatus } from '../../crds/etcd-cluster';
import { cacheRoot, toolPaths } from '../../localcluster/tool-cache';
import { etcdClusterWorkflow } from '../../workflows/cluster-workflow';
import {
  clusterChangedSignal,
  clusterWorkflowId,
  operationWorkflowId,
  SearchAttributes,
} from '../../contracts/messages';
import type { FakeCluster, FakeClusterOptions } from './fake-cluster';
import { createFakeCluster } from './fake-cluster';

/** Starting the server and bundling take this long at most on a loaded machine (a beforeAll timeout). */
export const DEV_SERVER_START_TIMEOUT_MS = 180_000;

export interface DevServer {
  env: TestWorkflowEnvironment;
  workflowBundle: WorkflowBundleWithSourceMap;
}

/** One dev server per test file; the caller tears `env` down in afterAll. */
export async function startDevServer(): Promise<DevServer> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: {
        type: 'existing-path',
        path: process.env.TEMPORAL_CLI_PATH ?? toolPaths(cacheRoot()).temporal,
      },
      searchAttributes: Object.values(SearchAttributes),
    },
  });
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('../../workflows/index'),
    logger: new DefaultLogger('WARN'),
  });
  return { env, workflowBundle };
}

/** Polls a synchronous probe of the fake world every 100 ms until it returns a value. */
export async function eventually<T>(
  what: string,
  probe: () => T | undefined | false,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The status once the operation `workflowId` has finished and no other runs. */
export function operationFinished(fake: FakeCluster, workflowId: string): Promise<EtcdClusterStatus> {
  return eventually(`${workflowId} to finish`, () => {
    const s = fake.status;
    return s?.lastOperation?.workflowId === workflowId && !s.currentOperation ? s : undefined;
  });
}

/**
 * A cluster bootstrapped on `from` in a fresh fake world, then its spec changed to `to` (generation 2); `body`
 * watches what follows. The cluster workflow is terminated afterwards if it still runs.
 */
export async function afterSpecChange(
  server: DevServer,
  input: { name: string; from: EtcdClusterSpec; to: EtcdClusterSpec; options: FakeClusterOptions },
  body: (fake: FakeCluster, handle: WorkflowHandle<typeof etcdClusterWorkflow>) => Promise<void>,
): Promise<void> {
  const { env, workflowBundle } = server;
  const { name, from, to } = input;
  const fake = createFakeCluster(input.options);
  const taskQueue = `spec-change-test-${name}-${++taskQueues}`;
  const uid = `uid-${name}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle,
    activities: fake.activities,
  });
  await worker.runUntil(async () => {
    const handle = await env.client.workflow.start(etcdClusterWorkflow, {
      workflowId: clusterWorkflowId('default', name),
      taskQueue,
      args: [{ ref: { namespace: 'default', name, uid }, change: { uid, generation: 1, spec: from } }],
    });
    try {
      await operationFinished(fake, operationWorkflowId('default', name, 1, 'Bootstrap'));
      await handle.signal(clusterChangedSignal, { uid, generation: 2, spec: to });
      await body(fake, handle);
    } finally {
      if ((await handle.describe()).status.name === 'RUNNING') await handle.terminate('test over');
    }
  });
}

let taskQueues = 0;
