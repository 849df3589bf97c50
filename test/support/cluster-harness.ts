// What the end-to-end journeys share: clients for the running local stack, EtcdCluster helpers, and data checks against real etcd.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { CoreV1Api, CustomObjectsApi, KubeConfig, StorageV1Api } from '@kubernetes/client-node';
import { Etcd3 } from 'etcd3';
import type { IOptions } from 'etcd3';
import { API_GROUP, API_VERSION, API_VERSION_NAME, ETCD_CLUSTER } from '../../crds/etcd-cluster';
import type { EtcdCluster, EtcdClusterSpec } from '../../crds/etcd-cluster';
import { clusterClientEndpoint, memberClientURL, memberClientURLTLS } from '../../crds/names';
import { requireStackInfo } from '../../localcluster/stack-info';
import { createWorkloadNamespace } from '../../localcluster/workload-namespace';
import type { StackInfo } from '../../localcluster/stack-info';
import { Reasons } from '../../crds/conditions';
import { waitRouted } from './service-route';

export interface Harness {
  stack: StackInfo;
  kc: KubeConfig;
  core: CoreV1Api;
  custom: CustomObjectsApi;
}

export function connect(): Harness {
  const stack = requireStackInfo();
  const kc = new KubeConfig();
  kc.loadFromFile(stack.kubeconfig);
  return {
    stack,
    kc,
    core: kc.makeApiClient(CoreV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
  };
}

const DEFAULT_CLASS_ANNOTATION = 'storageclass.kubernetes.io/is-default-class';
const defaultClassKnown = new WeakMap<Harness, boolean>();

async function hasDefaultStorageClass(h: Harness): Promise<boolean> {
  const known = defaultClassKnown.get(h);
  if (known !== undefined) return known;
  const classes = await h.kc.makeApiClient(StorageV1Api).listStorageClass();
  const found = classes.items.some((c) => c.metadata?.annotations?.[DEFAULT_CLASS_ANNOTATION] === 'true');
  defaultClassKnown.set(h, found);
  return found;
}

/**
 * The spec a journey's cluster gets on this stack. A stack without a default StorageClass (no provisioner yet) never
 * binds a claim, so a spec that leaves storage to the default runs on memory-backed volumes there; a journey about
 * storage sets spec.storage itself and keeps it.
 * Memory costs what a journey about a member's data surviving its Pod asserts: those fail there until a provisioner
 * exists (docs/local-cluster.md lists them).
 */
export async function specForStack(
  h: Harness,
  spec: Partial<EtcdClusterSpec>,
): Promise<Partial<EtcdClusterSpec>> {
  // A cluster created paused (replicas 0) runs no Pod, and Memory cannot be paused: it keeps the default.
  if (spec.storage !== undefined || spec.replicas === 0) return spec;
  if (await hasDefaultStorageClass(h)) return spec;
  return { ...spec, storage: { medium: 'Memory' } as EtcdClusterSpec['storage'] };
}

const created: { h: Harness; name: string }[] = [];

/**
 * A namespace of its own per journey, so journeys never see each other's objects. It is deleted after the test
 * file (its clusters' Pods and claims go with it through owner references) unless E2E_KEEP_NAMESPACES=1 asks to
 * keep them for a look; a long-lived dev stack would otherwise pile up etcd processes run after run.
 */
export async function freshNamespace(
  h: Harness,
  prefix: string,
  labels: Record<string, string> = {},
): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  created.push({ h, name });
  await createWorkloadNamespace(h.core, name, labels);
  return name;
}

afterAll(async () => {
  if (process.env.E2E_KEEP_NAMESPACES === '1') return;
  for (const { h, name } of created.splice(0)) {
    await h.core.deleteNamespace({ name }).catch(() => undefined);
  }
});

const crd = { group: API_GROUP, version: API_VERSION_NAME, plural: ETCD_CLUSTER.plural };

export async function createCluster(
  h: Harness,
  namespace: string,
  name: string,
  spec: Partial<EtcdClusterSpec>,
): Promise<EtcdCluster> {
  return (await h.custom.createNamespacedCustomObject({
    ...crd,
    namespace,
    body: {
      apiVersion: API_VERSION,
      kind: ETCD_CLUSTER.kind,
      metadata: { name, namespace },
      spec: await specForStack(h, spec),
    },
  })) as EtcdCluster;
}

export async function getCluster(h: Harness, namespace: string, name: string): Promise<EtcdCluster> {
  return (await h.custom.getNamespacedCustomObject({ ...crd, namespace, name })) as EtcdCluster;
}

export async function patchSpec(
  h: Harness,
  namespace: string,
  name: string,
  spec: Partial<EtcdClusterSpec>,
): Promise<void> {
  const { setHeaderOptions, PatchStrategy } = await import('@kubernetes/client-node');
  await h.custom.patchNamespacedCustomObject(
    { ...crd, namespace, name, body: { spec } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

/** Polls until `check` returns a value (not undefined); the last observation is in the timeout error. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 120_000,
  intervalMs = 500,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last error: ${String(last)}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Progressing reasons of a plan that waits (crds/conditions.ts): the cluster is not yet what its spec asks. */
const WAIT_REASONS = new Set<string>([
  Reasons.AuthUnknown,
  Reasons.AuthSecretInvalid,
  Reasons.AuthFailed,
  Reasons.MemberNotReady,
  Reasons.LearnerCatchingUp,
  Reasons.QuorumAtRisk,
  Reasons.WaitingForDeletion,
  Reasons.WaitingForClusterVersion,
]);

/**
 * Waits until status says Available with `replicas` ready voters, the spec's generation observed, and no operation
 * running, planned or waited for.
 */
export async function waitConverged(
  h: Harness,
  namespace: string,
  name: string,
  replicas: number,
  timeoutMs = 180_000,
) {
  const converged = await eventually(
    `${namespace}/${name} converged at ${replicas} ready voters`,
    async () => {
      const c = await getCluster(h, namespace, name);
      const s = c.status;
      const available = s?.conditions?.find((x) => x.type === 'Available')?.status === 'True';
      // Progressing=True with no current operation: the next one is planned and about to start (the EnableAuth after a
      // Bootstrap with spec.auth, say), so the cluster is not yet what its spec asks.
      const progressing = s?.conditions?.find((x) => x.type === 'Progressing');
      const planned = progressing?.status === 'True';
      // Progressing=False for a reason the plan waits on: whole and ready, yet not what the spec asks (auth unread, say).
      const waiting = progressing !== undefined && WAIT_REASONS.has(progressing.reason);
      const voters = s?.members?.filter((m) => m.role === 'voter').length ?? -1;
      const ok =
        available &&
        s?.observedGeneration === c.metadata.generation &&
        s?.readyReplicas === replicas &&
        voters === replicas &&
        (s?.members?.length ?? -1) === replicas &&
        !s?.currentOperation &&
        !planned &&
        !waiting;
      return ok ? c : undefined;
    },
    timeoutMs,
  );
  // Converged in status is not yet reachable through the Service: a writer started now would count node-a's
  // kube-proxy catching up with the new endpoints (docs/testing-availability.md, "Known on this machine").
  if (replicas > 0) await waitRouted(clusterClientEndpoint({ namespace, name }));
  return converged;
}

/** TLS credentials of a client of a cluster with spec.tls.client (test/tls makes them). */
export type ClientCredentials = IOptions['credentials'];

export function etcdClient(endpoints: string[], credentials?: ClientCredentials): Etcd3 {
  return new Etcd3({
    hosts: endpoints,
    ...(credentials ? { credentials } : {}),
    dialTimeout: 5000,
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + 5000 }),
    // Its own connections: grpc-js otherwise shares one subchannel per address among every client of the process, and
    // a client made after a member went away waited on the shared one's reconnect back-off (see the writer).
    grpcOptions: { 'grpc.use_local_subchannel_pool': 1 },
  });
}

export function clientEndpoint(namespace: string, name: string): string {
  return clusterClientEndpoint({ namespace, name });
}

/** Resolves with the error a put of `key` through the cluster's client Service ends in, or undefined if it succeeded. */
export async function putError(
  ref: { namespace: string; name: string },
  credentials: ClientCredentials | undefined,
  key: string,
): Promise<unknown> {
  const c = etcdClient([clientEndpoint(ref.namespace, ref.name)], credentials);
  try {
    await c.put(key).value('x');
    return undefined;
  } catch (err) {
    return err;
  } finally {
    c.close();
  }
}

/** Writes `count` keys under `prefix` through the cluster's client Service and returns them. */
export async function writeKeys(
  namespace: string,
  name: string,
  prefix: string,
  count: number,
  credentials?: ClientCredentials,
): Promise<Map<string, string>> {
  const client = etcdClient([clientEndpoint(namespace, name)], credentials);
  const written = new Map<string, string>();
  try {
    for (let i = 0; i < count; i++) {
      const key = `${prefix}/${String(i).padStart(4, '0')}`;
      const value = `${prefix}-${i}-${randomBytes(4).toString('hex')}`;
      await client.put(key).value(value);
      written.set(key, value);
    }
  } finally {
    client.close();
  }
  return written;
}

/** Every key written earlier is still there with its value, read linearizably through the client Service. */
export async function readKeys(
  namespace: string,
  name: string,
  prefix: string,
  credentials?: ClientCredentials,
): Promise<Map<string, string>> {
  const client = etcdClient([clientEndpoint(namespace, name)], credentials);
  try {
    const all = await client.getAll().prefix(`${prefix}/`).strings();
    return new Map(Object.entries(all));
  } finally {
    client.close();
  }
}

/**
 * hashKV of every member (etcdctl's `endpoint hashkv`; the etcd3 client has no HashKV call): equal hashes
 * at the same revision mean the members hold the same data.
 */
export async function memberHashes(
  h: Harness,
  namespace: string,
  name: string,
  members: string[],
  /** For a cluster with client TLS and/or auth: https URLs, and etcdctl's --cacert/--cert/--key/--user flags. */
  secure?: { tls: boolean; flags: string[] },
): Promise<Map<string, string>> {
  const etcdctl = `${Object.values(h.stack.tools.etcdBinDirs).find((d) => d.includes('3.6')) ?? ''}/etcdctl`;
  const urlOf = secure?.tls ? memberClientURLTLS : memberClientURL;
  const endpoints = members.map((m) => urlOf({ namespace, name }, m));
  const out = execFileSync(
    etcdctl,
    [
      '--endpoints',
      endpoints.join(','),
      ...(secure?.flags ?? []),
      '--command-timeout=5s',
      'endpoint',
      'hashkv',
      '-w',
      'json',
    ],
    {
      encoding: 'utf8',
    },
  );
  const rows = JSON.parse(out) as {
    Endpoint: string;
    HashKV: { header: { revision: number }; hash: number };
  }[];
  const revisions = new Set(rows.map((r) => r.HashKV.header.revision));
  // Members answering at different revisions are still applying: not comparable yet.
  if (revisions.size !== 1) throw new Error(`members at different revisions: ${[...revisions].join(', ')}`);
  return new Map(rows.map((r, i) => [members[i] ?? r.Endpoint, String(r.HashKV.hash)]));
}

/** The cluster id each member reports in its own status (etcdctl's `endpoint status`), by member. */
export function memberClusterIds(
  h: Harness,
  namespace: string,
  name: string,
  members: string[],
): Map<string, string> {
  const etcdctl = `${Object.values(h.stack.tools.etcdBinDirs).find((d) => d.includes('3.6')) ?? ''}/etcdctl`;
  const endpoints = members.map((m) => memberClientURL({ namespace, name }, m));
  const out = execFileSync(
    etcdctl,
    ['--endpoints', endpoints.join(','), '--command-timeout=5s', 'endpoint', 'status', '-w', 'json'],
    { encoding: 'utf8' },
  );
  // etcdctl's JSON writes the uint64 ids as numbers beyond 2^53: read them as text.
  const rows = JSON.parse(out.replace(/"cluster_id":(\d+)/g, '"cluster_id":"$1"')) as {
    Status: { header: { cluster_id: string } };
  }[];
  return new Map(rows.map((r, i) => [members[i] ?? String(i), r.Status.header.cluster_id]));
}

/** Keys written before survive, and every member holds the same data (equal hashKV at one revision). */
export async function expectClusterData(
  h: Harness,
  namespace: string,
  name: string,
  prefix: string,
  written: Map<string, string>,
): Promise<void> {
  const read = await eventually('keys readable', () => readKeys(namespace, name, prefix));
  expect(read).toEqual(written);
  const c = await getCluster(h, namespace, name);
  const members = (c.status?.members ?? []).map((m) => m.name);
  const hashes = await eventually('equal hashKV on all members', async () => {
    const hs = await memberHashes(h, namespace, name, members);
    return new Set(hs.values()).size === 1 ? hs : undefined;
  });
  expect(hashes.size).toBe(members.length);
}

export interface EtcdMemberRow {
  id: string;
  name: string;
  peerURLs: string[];
  isLearner: boolean;
}

/** etcd's own member list, asked through the cluster's client Service (voters only answer there). */
export async function etcdMemberList(
  namespace: string,
  name: string,
  credentials?: ClientCredentials,
): Promise<EtcdMemberRow[]> {
  const client = etcdClient([clientEndpoint(namespace, name)], credentials);
  try {
    const res = await client.cluster.memberList({ linearizable: true });
    return res.members.map((m) => ({
      id: String(m.ID),
      name: m.name,
      peerURLs: m.peerURLs,
      isLearner: Boolean(m.isLearner),
    }));
  } finally {
    client.close();
  }
}

/** The Temporal CLI of the stack, pointed at its server and namespace; returns stdout. */
export function temporalCli(h: Harness, args: string[]): string {
  return execFileSync(
    h.stack.tools.temporal,
    [...args, '--address', h.stack.temporal.address, '--namespace', h.stack.temporal.namespace],
    { encoding: 'utf8' },
  );
}

export interface WorkflowListRow {
  execution: { workflowId: string; runId: string };
  startTime: string;
  closeTime?: string;
  status: string;
}

/** `temporal workflow list --query ...` as rows, oldest first. */
export function listWorkflows(h: Harness, query: string): WorkflowListRow[] {
  const rows = JSON.parse(temporalCli(h, ['workflow', 'list', '--query', query, '-o', 'json'])) as
    WorkflowListRow[] | null;
  return (rows ?? []).sort((a, b) => a.startTime.localeCompare(b.startTime));
}
