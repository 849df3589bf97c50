// What the rolling-operation journeys (upgrade, downgrade, rollout) watch and check alike: the order members restart in (what writes kept is test/support/availability.ts's job).
import type { V1Pod } from '@kubernetes/client-node';
import type { EtcdCluster, OperationType } from '../../crds/etcd-cluster';
import { Labels } from '../../crds/labels';
import type { Harness } from './cluster-harness';
import { eventually, getCluster } from './cluster-harness';

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
