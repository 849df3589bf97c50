// A namespace for workloads on the local stack (the e2e journeys and the bench), where every container that asks for
// no CPU is given a 100m request, as a cluster run with care gives etcd.
//
// Why: a member Pod with no requests is BestEffort, and its node's kubelet weights the whole BestEffort class at 2 CPU
// shares against 102 for the operator Pod (100m) on the same node. On this stack's nodes, with two busy threads in
// each operator Pod, a 3-member cluster answered 601 sequential puts in 25 s (p50 19 ms, p99 215 ms) as BestEffort and
// 10383 (p50 1 ms, p99 22 ms) with 100m requests. Session 26's CI run missed its planned-change bound that way: one put
// spent 1.07 s in raft during an auto-TLS renewal, at load 22. Specs that set resources keep theirs.
import type { CoreV1Api, V1LimitRange } from '@kubernetes/client-node';

const WORKLOAD_CPU_REQUEST = '100m';

/** The LimitRange that gives containers without a CPU request one; limits and memory are left as asked. */
export function cpuRequestsLimitRange(namespace: string, cpu = WORKLOAD_CPU_REQUEST): V1LimitRange {
  return {
    metadata: { name: 'cpu-requests', namespace },
    spec: { limits: [{ type: 'Container', defaultRequest: { cpu } }] },
  };
}

/**
 * Creates the namespace, then its LimitRange (before anything in it asks for a Pod). `cpu` is the request given to
 * containers that ask for none (a fleet of many members gives each less, so that all of them fit the nodes).
 */
export async function createWorkloadNamespace(
  core: CoreV1Api,
  name: string,
  labels: Record<string, string> = {},
  cpu = WORKLOAD_CPU_REQUEST,
): Promise<void> {
  await core.createNamespace({ body: { metadata: { name, labels } } });
  await core.createNamespacedLimitRange({ namespace: name, body: cpuRequestsLimitRange(name, cpu) });
}
