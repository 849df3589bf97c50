// What the operator bench sections share: the running default stack (brought up when it is not), API clients, and polling.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import {
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { API_GROUP, API_VERSION, API_VERSION_NAME, ETCD_CLUSTER } from '../crds/etcd-cluster';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { readStackInfo, repoRoot } from '../localcluster/stack-info';
import type { StackInfo } from '../localcluster/stack-info';

export const clusterCrd = { group: API_GROUP, version: API_VERSION_NAME, plural: ETCD_CLUSTER.plural };

/** Creates the EtcdCluster `namespace/name` with `spec` (the API server fills the defaults). */
export function createEtcdCluster(
  custom: CustomObjectsApi,
  namespace: string,
  name: string,
  spec: Partial<EtcdClusterSpec>,
): Promise<object> {
  return custom.createNamespacedCustomObject({
    ...clusterCrd,
    namespace,
    body: { apiVersion: API_VERSION, kind: ETCD_CLUSTER.kind, metadata: { name, namespace }, spec },
  });
}

/** Sets `spec.replicas` of the EtcdCluster `namespace/name` (a merge patch, as `kubectl scale` changes it). */
export function scaleEtcdCluster(
  custom: CustomObjectsApi,
  namespace: string,
  name: string,
  replicas: number,
): Promise<object> {
  return custom.patchNamespacedCustomObject(
    { ...clusterCrd, namespace, name, body: { spec: { replicas } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

export interface BenchStack {
  stack: StackInfo;
  stackJson: string;
  core: CoreV1Api;
  custom: CustomObjectsApi;
}

export function benchStack(log: (line: string) => void): BenchStack {
  const root = repoRoot();
  // Found as the tests find it (localcluster/stack-info.ts requireStackInfo): ETCD_CONDUCTOR_STACK_JSON, else this
  // checkout's .local/stack.json; `up` takes the host IP from ETCD_CONDUCTOR_HOST_IP when it has to start one.
  const stackJson = process.env.ETCD_CONDUCTOR_STACK_JSON ?? join(root, '.local', 'stack.json');
  if (readStackInfo(stackJson)?.phase !== 'ready') {
    log(`bench: bringing the local stack up (${process.env.ETCD_CONDUCTOR_HOST_IP ?? '127.0.0.1'})`);
    execFileSync(process.execPath, [join(root, 'dist', 'localcluster', 'main.js'), 'up'], {
      stdio: 'inherit',
    });
  }
  const stack = readStackInfo(stackJson);
  if (!stack) throw new Error('no local stack');
  const kc = new KubeConfig();
  kc.loadFromFile(stack.kubeconfig);
  return { stack, stackJson, core: kc.makeApiClient(CoreV1Api), custom: kc.makeApiClient(CustomObjectsApi) };
}

/** Polls until `check` returns a value; errors count as "not yet". */
export async function until<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 300_000,
  intervalMs = 200,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch {
      // not there yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
