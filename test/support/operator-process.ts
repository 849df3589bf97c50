// The stack's operator, however the stack runs it: a host process (its pid in stack.json, restarted by the stack
// daemon the way a Deployment would) or the Helm chart's Pods on real nodes (`up --operator=chart`, two replicas).
// For tests that kill the operator in the middle of an operation, scrape its /metrics or read its logs.
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import type { V1Pod } from '@kubernetes/client-node';
import { readStackInfo } from '../../localcluster/stack-info';
import { pidAlive } from '../../localcluster/tools';
import { operatorHttpAddress } from '../../localcluster/stack';
import { eventually, type Harness } from './cluster-harness';
import { containerFaults } from './container-faults';
import { isReady } from '../localcluster/etcd-pod';

export function operatorPid(h: Harness): number {
  const pid = readStackInfo(join(h.stack.stateDir, 'stack.json'))?.pids.operator;
  if (!pid) throw new Error('the local stack runs no operator as a host process');
  return pid;
}

/** The chart's operator Pods that are not being deleted, by name. */
export async function operatorPods(h: Harness): Promise<V1Pod[]> {
  const chart = h.stack.operatorChart;
  if (!chart) throw new Error('the local stack runs its operator as a host process, not from its chart');
  const pods = await h.core.listNamespacedPod({
    namespace: chart.namespace,
    labelSelector: `app.kubernetes.io/instance=${chart.release}`,
  });
  return pods.items
    .filter((p) => !p.metadata?.deletionTimestamp)
    .sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
}

/** Where a chart replica serves /metrics, /healthz and /readyz: the chart's http port on its Pod IP. */
export const podHttpAddress = (pod: V1Pod) => `${pod.status?.podIP ?? ''}:9464`;

/**
 * The whole operator dies at once, as a crash or an OOM kill would; resolves once it runs again. A host process gets
 * SIGKILL and the stack daemon starts it again. The chart's replicas get SIGKILL in their containers (no SIGTERM, so
 * no clean shutdown and no Lease released), then their Pods are deleted so the Deployment starts new ones (as a node
 * that died would have them rescheduled; a container restarted in place would meet the kubelet's crash back-off, 10 s
 * and growing, after a few kills); resolves when as many new replicas are Ready.
 */
export async function killOperator(h: Harness, timeoutMs = 120_000): Promise<void> {
  const chart = h.stack.operatorChart;
  if (!chart) {
    const killed = operatorPid(h);
    process.kill(killed, 'SIGKILL');
    await eventually(
      'the operator is restarted',
      async () => {
        const pid = operatorPid(h);
        return pid !== killed && pidAlive(pid) && !pidAlive(killed) ? pid : undefined;
      },
      timeoutMs,
    );
    return;
  }
  const before = await operatorPods(h);
  const old = new Set(before.map((p) => p.metadata?.name));
  const faults = containerFaults(h);
  await Promise.all(
    before.map((p) =>
      faults.crashContainer(chart.namespace, p.metadata?.name ?? '', 'operator').catch(() => undefined),
    ),
  );
  await Promise.all(
    before.map((p) =>
      h.core.deleteNamespacedPod({
        namespace: chart.namespace,
        name: p.metadata?.name ?? '',
        gracePeriodSeconds: 0,
      }),
    ),
  );
  await eventually(
    'new operator replicas are Ready',
    async () => {
      const now = await operatorPods(h);
      const fresh = now.filter((p) => !old.has(p.metadata?.name) && isReady(p));
      return fresh.length >= before.length ? true : undefined;
    },
    timeoutMs,
  );
}

/** Where each running operator serves /metrics, /healthz and /readyz: the host process's address, or each Pod's. */
export async function operatorHttpAddresses(h: Harness): Promise<string[]> {
  if (!h.stack.operatorChart) return [operatorHttpAddress(h.stack.hostIp)];
  return (await operatorPods(h)).flatMap((p) => (p.status?.podIP ? [podHttpAddress(p)] : []));
}

/**
 * Everything the operator has logged on this stack that is still kept: the host process's log file, or each chart
 * replica's log (and its previous container's, when the kubelet restarted it in place).
 */
export async function operatorLogs(h: Harness): Promise<string> {
  const chart = h.stack.operatorChart;
  if (!chart) return readFileSync(join(h.stack.logsDir, 'operator.log'), 'utf8');
  const out: string[] = [];
  for (const p of await operatorPods(h)) {
    const name = p.metadata?.name ?? '';
    const restarted =
      (p.status?.containerStatuses?.find((c) => c.name === 'operator')?.restartCount ?? 0) > 0;
    for (const previous of restarted ? [true, false] : [false])
      out.push(
        await h.core.readNamespacedPodLog({
          namespace: chart.namespace,
          name,
          container: 'operator',
          previous,
        }),
      );
  }
  return out.join('\n');
}

/**
 * Pure: a step's kind, the same for every member, version and figure ("add member ks-3 as a learner" and "add member
 * ks-4 as a learner" are one kind), so a test can act once at each kind of step boundary.
 */
export function stepKind(step: string, cluster: string): string {
  const escaped = cluster.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return step
    .replace(new RegExp(`\\b${escaped}-\\d+\\b`, 'g'), '<m>')
    .replace(/\b\d+\.\d+\.\d+\b/g, '<v>')
    .replace(/\d+/g, 'N');
}
