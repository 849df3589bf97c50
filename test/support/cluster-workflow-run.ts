// One EtcdCluster's cluster workflow on a Temporal test server, for the workflow test files that drive it by signals
// over a fake world: a worker on a task queue of its own, the workflow started, terminated after the body if it still
// runs.
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { Worker } from '@temporalio/worker';
import type { EtcdClusterSpec } from '../../crds/etcd-cluster';
import type { ClusterChange, ClusterWorkflowInput } from '../../contracts/messages';
import { clusterChangedSignal, clusterWorkflowId, operationWorkflowId } from '../../contracts/messages';
import { etcdClusterWorkflow } from '../../workflows/cluster-workflow';

export interface ClusterRun {
  handle: WorkflowHandle<typeof etcdClusterWorkflow>;
  uid: string;
  opId: (seq: number, type: Parameters<typeof operationWorkflowId>[3]) => string;
  /** A clusterChanged signal of generation 1 with the run's spec and `more`. */
  change: (more: Partial<ClusterChange>) => Promise<void>;
}

export async function withClusterWorkflow(
  opts: {
    env: TestWorkflowEnvironment;
    workflowBundle: WorkflowBundleWithSourceMap;
    /** Task queue `<queuePrefix>-<name>`; the uid is `uid-<name>`, the namespace `default`. */
    queuePrefix: string;
    name: string;
    spec: EtcdClusterSpec;
    activities: object;
  },
  body: (r: ClusterRun) => Promise<void>,
): Promise<void> {
  const { env, workflowBundle, name, spec } = opts;
  const taskQueue = `${opts.queuePrefix}-${name}`;
  const uid = `uid-${name}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle,
    activities: opts.activities,
  });
  await worker.runUntil(async () => {
    const input: ClusterWorkflowInput = {
      ref: { namespace: 'default', name, uid },
      change: { uid, generation: 1, spec },
    };
    const handle = await env.client.workflow.start(etcdClusterWorkflow, {
      workflowId: clusterWorkflowId('default', name),
      taskQueue,
      args: [input],
    });
    try {
      await body({
        handle,
        uid,
        opId: (seq, type) => operationWorkflowId('default', name, seq, type),
        change: (more) => handle.signal(clusterChangedSignal, { uid, generation: 1, spec, ...more }),
      });
    } finally {
      const description = await handle.describe();
      if (description.status.name === 'RUNNING') await handle.terminate('test over');
    }
  });
}
