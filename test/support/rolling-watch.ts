// What the rolling-operation journeys (upgrade, downgrade, rollout) watch and check alike: the order members restart in, and that no acknowledged write was lost.
import type { V1Pod } from '@kubernetes/client-node';
import type { WriteLoadReport } from '../../bench/upgrade';
import type { EtcdCluster, OperationType } from '../../crds/etcd-cluster';
import { Labels } from '../../crds/labels';
import type { Harness } from './cluster-harness';
import { eventually, getCluster, memberHashes, readKeys } from './cluster-harness';

export interface RollWatch {
  /** The cluster once `done` held for it. */
  cluster: EtcdCluster;
  /** Members in the order their Pods were replaced (a new Pod uid), each once. */
  restartedOrder: string[];
  /** Every Pod uid seen per member, oldest first: a member restarted once has two. */
  uidsByMember: Map<string, string[]>;
  /** currentOperation types seen while polling. */
  operationTypes: Set<string>;
  /** currentOperation workflow ids seen while polling. */
  workflowIds: Set<string>;
  /** `name=version,...` of status.members while an operation ran. */
  versionsDuring: Set<string>;
  /** The most members whose Pod was not Ready (or going away) at one poll. */
  mostDown: number;
}

const ready = (p: V1Pod) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');

/**
 * Polls the cluster and its member Pods until a rolling operation of `type` finished and `done` holds for the
 * cluster (every member on the new version, say), recording what the roll did on the way.
 */
export async function watchRoll(
  h: Harness,
  namespace: string,
  name: string,
  input: {
    type: OperationType;
    members: number;
    done: (c: EtcdCluster) => boolean;
    what: string;
    timeoutMs: number;
  },
): Promise<RollWatch> {
  const memberPods = async () =>
    (await h.core.listNamespacedPod({ namespace, labelSelector: Labels.member })).items.filter((p) =>
      p.metadata?.name?.startsWith(`${name}-`),
    );
  const uidsByMember = new Map<string, string[]>();
  const restartedOrder: string[] = [];
  const operationTypes = new Set<string>();
  const workflowIds = new Set<string>();
  const versionsDuring = new Set<string>();
  let mostDown = 0;
  const cluster = await eventually(
    input.what,
    async () => {
      const pods = await memberPods();
      mostDown = Math.max(
        mostDown,
        input.members - pods.filter((p) => !p.metadata?.deletionTimestamp && ready(p)).length,
      );
      for (const p of pods) {
        const member = p.metadata?.name ?? '';
        const seen = uidsByMember.get(member) ?? [];
        if (p.metadata?.uid && !seen.includes(p.metadata.uid)) {
          if (seen.length > 0 && !restartedOrder.includes(member)) restartedOrder.push(member);
          uidsByMember.set(member, [...seen, p.metadata.uid]);
        }
      }
      const c = await getCluster(h, namespace, name);
      const s = c.status;
      if (s?.currentOperation) {
        operationTypes.add(s.currentOperation.type);
        workflowIds.add(s.currentOperation.workflowId);
        versionsDuring.add((s.members ?? []).map((m) => `${m.name}=${m.version ?? '?'}`).join(','));
      }
      if (!s) return undefined;
      const finished =
        s.observedGeneration === c.metadata.generation &&
        s.members?.length === input.members &&
        !s.currentOperation &&
        s.lastOperation?.type === input.type &&
        input.done(c);
      return finished ? c : undefined;
    },
    input.timeoutMs,
    300,
  );
  return { cluster, restartedOrder, uidsByMember, operationTypes, workflowIds, versionsDuring, mostDown };
}

/** A `done` for watchRoll: every member reports `version` and is ready. */
export const everyMemberOn = (version: string) => (c: EtcdCluster) =>
  c.status?.members?.every((m) => m.version === version && m.ready) === true;

/** Every acknowledged write of the load reads back with its value, and every member has the same hashKV. */
export async function expectWritesKept(
  h: Harness,
  namespace: string,
  name: string,
  input: {
    prefix: string;
    report: WriteLoadReport;
    members: string[];
    /** How to read the keys back (default: readKeys through the client Service, plaintext, no auth). */
    read?: () => Promise<Map<string, string>>;
    /** How to take each member's hashKV (default: memberHashes, plaintext, no auth). */
    hashes?: (members: string[]) => Promise<Map<string, string>>;
  },
): Promise<void> {
  expect(input.report.acknowledged.size).toBeGreaterThan(0);
  const read = await eventually(
    'keys readable',
    input.read ?? (() => readKeys(namespace, name, input.prefix)),
  );
  const missing = [...input.report.acknowledged].filter(([k, v]) => read.get(k) !== v);
  expect(missing).toEqual([]);
  const hashesOf = input.hashes ?? ((members: string[]) => memberHashes(h, namespace, name, members));
  const hashes = await eventually('equal hashKV on all members', async () => {
    const hs = await hashesOf(input.members);
    return new Set(hs.values()).size === 1 ? hs : undefined;
  });
  expect(hashes.size).toBe(input.members.length);
}

/** One line of figures for the test log. */
export function describeLoad(what: string, report: WriteLoadReport, order: string[]): string {
  return (
    `${what} under writes: ${report.acknowledged.size} acknowledged, ${report.failedAttempts} attempts retried, ` +
    `${report.failedWrites} writes failed, longest gap ${report.longestGapMs} ms; order ${order.join(', ')}`
  );
}
