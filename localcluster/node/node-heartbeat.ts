// Registers the Node and keeps it Ready: Lease renewed and Ready heartbeat posted every 10 s while the node is up.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { CoordinationV1Api, CoreV1Api, V1Node } from '@kubernetes/client-node';
import { microTime, nodeLabels, nodeStatus } from './node-object';
import type { NodeFacts } from './node-object';
import { rfc3339 } from './rfc3339';

export const HEARTBEAT_MS = 10_000;
export const LEASE_DURATION_SECONDS = 40;

export interface NodeHeartbeat {
  /** Stops renewing; the node-lifecycle controller will mark the node NotReady after its grace period. */
  pause(): void;
  /** Renews at once (Ready transition time = now), then every 10 s. */
  resume(): Promise<void>;
  stop(): void;
}

function apiCode(e: unknown): number | undefined {
  return typeof e === 'object' && e !== null && 'code' in e ? (e as { code: number }).code : undefined;
}

export function machineIdentity(): { bootId: string; machineId: string } {
  const read = (p: string): string | undefined => {
    try {
      return readFileSync(p, 'utf8').trim();
    } catch {
      return undefined;
    }
  };
  return {
    bootId: read('/proc/sys/kernel/random/boot_id') ?? randomUUID(),
    machineId: read('/etc/machine-id') ?? randomUUID(),
  };
}

/** Creates the Node, or brings an existing one's labels up to date, and posts a Ready status. */
export async function registerNode(core: CoreV1Api, facts: NodeFacts): Promise<V1Node> {
  const labels = nodeLabels(facts);
  let node: V1Node;
  try {
    node = await core.createNode({
      body: { apiVersion: 'v1', kind: 'Node', metadata: { name: facts.nodeName, labels } },
    });
  } catch (e) {
    if (apiCode(e) !== 409) throw e;
    node = await core.patchNode(
      { name: facts.nodeName, body: { metadata: { labels } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }
  await postNodeStatus(core, facts, rfc3339(new Date()));
  return node;
}

export async function postNodeStatus(core: CoreV1Api, facts: NodeFacts, readySince: string): Promise<void> {
  await core.patchNodeStatus(
    { name: facts.nodeName, body: { status: nodeStatus(facts, rfc3339(new Date()), readySince) } },
    setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
  );
}

async function renewLease(coordination: CoordinationV1Api, node: V1Node, facts: NodeFacts): Promise<void> {
  const body = {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: facts.nodeName,
      namespace: 'kube-node-lease',
      ownerReferences: [
        { apiVersion: 'v1', kind: 'Node', name: facts.nodeName, uid: node.metadata?.uid ?? '' },
      ],
    },
    spec: {
      holderIdentity: facts.nodeName,
      leaseDurationSeconds: LEASE_DURATION_SECONDS,
      renewTime: microTime(new Date()),
    },
  };
  await coordination.patchNamespacedLease(
    {
      name: facts.nodeName,
      namespace: 'kube-node-lease',
      body,
      fieldManager: 'process-kubelet',
      force: true,
    },
    setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
  );
}

export function startNodeHeartbeat(
  core: CoreV1Api,
  coordination: CoordinationV1Api,
  node: V1Node,
  facts: NodeFacts,
  log: (line: string) => void,
): NodeHeartbeat {
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let readySince = rfc3339(new Date());
  const beat = async (): Promise<void> => {
    const results = await Promise.allSettled([
      renewLease(coordination, node, facts),
      postNodeStatus(core, facts, readySince),
    ]);
    for (const r of results)
      if (r.status === 'rejected')
        log(
          `node ${facts.nodeName}: heartbeat failed: ${r.reason instanceof Error ? r.reason.message : String(r.reason)}`,
        );
  };
  const loop = (): void => {
    if (!running) return;
    timer = setTimeout(() => {
      void beat().finally(loop);
    }, HEARTBEAT_MS);
  };
  const resume = async (): Promise<void> => {
    if (running) return;
    running = true;
    readySince = rfc3339(new Date());
    await beat();
    loop();
  };
  running = true;
  void beat().finally(loop);
  return {
    pause: () => {
      running = false;
      clearTimeout(timer);
    },
    resume,
    stop: () => {
      running = false;
      clearTimeout(timer);
    },
  };
}
