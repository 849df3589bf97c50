// `npm run bench -- truth`: how soon status tells what the operator can see of members that stop answering (a frozen
// follower, a frozen leader, two of three frozen), each timed beside the moment the kubelet marks their Pods not Ready.
import type { CoreV1Api, CustomObjectsApi, V1Pod } from '@kubernetes/client-node';
import type { EtcdCluster } from '../crds/etcd-cluster';
import { Labels } from '../crds/labels';
import { stackFaults } from '../localcluster/fault-cli';
import { createWorkloadNamespace } from '../localcluster/workload-namespace';
import { benchStack, clusterCrd as crd, createEtcdCluster, until } from './bench-stack';
import { POLL_MS } from './floor';
import { formatSpread, summarize, type BenchSection, type Figure } from './section';

/** How long each freeze lasts; it thaws by itself after, whatever the bench does meanwhile. */
const FREEZE_SECONDS = 45;
/** A status that has not told by then is recorded as not told (the freeze ends 5 s later). */
const TELL_WITHIN_MS = 40_000;
const CONVERGE_MS = 180_000;

export type Scenario = 'follower' | 'leader' | 'twoOfThree';

/** Seconds from the freeze: the frozen members' Pods not Ready (the last of them), and status telling it. */
export interface TruthTimes {
  podsNotReady: number | undefined;
  statusTells: number | undefined;
}

/** Pure: whether status tells what the scenario did to `frozen`. */
export function statusTells(scenario: Scenario, cluster: EtcdCluster, frozen: readonly string[]): boolean {
  const s = cluster.status;
  if (scenario === 'twoOfThree') {
    return (
      s?.conditions?.some(
        (c) => c.type === 'Available' && c.status === 'False' && c.reason === 'QuorumLost',
      ) ?? false
    );
  }
  return frozen.every((name) => s?.members?.find((m) => m.name === name)?.ready === false);
}

/** Pure: whether every Pod named in `frozen` has its Ready condition False. */
export function podsNotReady(pods: readonly V1Pod[], frozen: readonly string[]): boolean {
  return frozen.every((name) =>
    pods
      .find((p) => p.metadata?.name === name)
      ?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'False'),
  );
}

/** Pure: whom each scenario freezes, from status (a follower, the leader, or two followers' worth of three). */
export function frozenFor(scenario: Scenario, cluster: EtcdCluster): string[] {
  const members = cluster.status?.members ?? [];
  const leader = members.find((m) => m.leader)?.name;
  const followers = members.filter((m) => !m.leader).map((m) => m.name);
  if (scenario === 'leader') return leader ? [leader] : [];
  if (scenario === 'follower') return followers.slice(0, 1);
  // Two of three: the leader and one follower, so that the survivor is a follower that cannot lead alone.
  return leader ? [leader, ...followers.slice(0, 1)] : followers.slice(0, 2);
}

const ROWS: Array<{ scenario: Scenario; name: string }> = [
  { scenario: 'follower', name: 'follower frozen: status says not ready' },
  { scenario: 'leader', name: 'leader frozen: status says not ready' },
  { scenario: 'twoOfThree', name: 'two of three frozen: status QuorumLost' },
];

const elapsed = (t0: number) => (performance.now() - t0) / 1000;

async function runTruth(
  core: CoreV1Api,
  custom: CustomObjectsApi,
  freeze: (namespace: string, pod: string) => Promise<void>,
  namespace: string,
  log: (line: string) => void,
): Promise<Record<Scenario, TruthTimes>> {
  const name = 't';
  const get = async () =>
    (await custom.getNamespacedCustomObject({ ...crd, namespace, name })) as EtcdCluster;
  const converged = () =>
    until(
      `${namespace}/${name}: 3 ready voters, Available`,
      async () => {
        const c = await get();
        const s = c.status;
        const ok =
          s?.readyReplicas === 3 &&
          (s.members?.length ?? 0) === 3 &&
          s.members?.every((m) => m.ready) &&
          s.members.some((m) => m.leader) &&
          !s.currentOperation &&
          s.conditions?.some((x) => x.type === 'Available' && x.status === 'True');
        return ok ? c : undefined;
      },
      CONVERGE_MS,
      POLL_MS,
    );
  await createEtcdCluster(custom, namespace, name, { replicas: 3 });
  const times = {} as Record<Scenario, TruthTimes>;
  for (const { scenario } of ROWS) {
    const frozen = frozenFor(scenario, await converged());
    const t0 = performance.now();
    // Each freeze thaws by itself after FREEZE_SECONDS; awaited (bounded) before the next scenario.
    const thawed = Promise.all(frozen.map((pod) => freeze(namespace, pod)));
    const pods = until(
      `${frozen.join(', ')} not Ready`,
      async () =>
        podsNotReady(
          (await core.listNamespacedPod({ namespace, labelSelector: `${Labels.cluster}=${name}` })).items,
          frozen,
        )
          ? elapsed(t0)
          : undefined,
      TELL_WITHIN_MS,
      POLL_MS,
    ).catch(() => undefined);
    const told = until(
      `status telling ${scenario}`,
      async () => (statusTells(scenario, await get(), frozen) ? elapsed(t0) : undefined),
      TELL_WITHIN_MS,
      POLL_MS,
    ).catch(() => undefined);
    times[scenario] = { podsNotReady: await pods, statusTells: await told };
    log(`truth: ${scenario} (${frozen.join(', ')}) ${JSON.stringify(times[scenario])}`);
    await thawed;
  }
  await converged();
  return times;
}

export const truthSection: BenchSection = {
  name: 'truth',
  async run(log) {
    const { stack, core, custom } = benchStack(log);
    const faults = stackFaults(stack, log);
    const freeze = (namespace: string, pod: string) =>
      faults.freezeContainer(namespace, pod, 'etcd', FREEZE_SECONDS);
    const runs = Math.max(1, Number(process.env.BENCH_RUNS ?? '3'));
    const all: Array<Record<Scenario, TruthTimes>> = [];
    for (let run = 1; run <= runs; run++) {
      const namespace = `truth-${run}-${Date.now().toString(36)}`;
      await createWorkloadNamespace(core, namespace);
      try {
        all.push(await runTruth(core, custom, freeze, namespace, log));
      } finally {
        await core.deleteNamespace({ name: namespace }).catch(() => undefined);
      }
    }
    return ROWS.flatMap(({ scenario, name }): Figure[] => {
      const told = summarize(all.map((t) => t[scenario].statusTells));
      const seen = summarize(all.map((t) => t[scenario].podsNotReady));
      const notTold = all.filter((t) => t[scenario].statusTells === undefined).length;
      const seenSpread = formatSpread(seen.spread, 's');
      return [
        {
          name,
          unit: 's',
          ...told,
          ...(seen.value !== undefined ? { floor: seen.value } : {}),
          note: `target <= Pods not Ready + 1 s (the floor column: what the operator can see${seenSpread ? `, ${seenSpread}` : ''})${notTold > 0 ? `; not told within ${TELL_WITHIN_MS / 1000} s in ${notTold} run(s)` : ''}`,
        } as Figure,
      ];
    });
  },
};
