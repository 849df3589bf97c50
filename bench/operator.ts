// Bench section "operator": how long the operator takes to bootstrap, scale and heal a cluster, beside the floor (the same step done by bare Pods in the same run), medians of BENCH_RUNS runs (default 3); and what an idle cluster costs.
import type { CoreV1Api } from '@kubernetes/client-node';
import type { EtcdCluster } from '../crds/etcd-cluster';
import { benchStack, clusterCrd as crd, until } from './bench-stack';
import { measureFloor, removeFloor, type FloorTimes } from './floor';
import { runOperator, type OperatorTimes } from './operator-run';
import { formatSpread, summarize, type BenchSection, type Figure } from './section';
import { createWorkloadNamespace } from '../localcluster/workload-namespace';

/** Each figure: the operator's time, the floor step it compares with, and what the floor did. */
const ROWS: Array<{
  name: string;
  op: keyof OperatorTimes;
  floor: keyof Omit<FloorTimes, 'podReady' | 'refusals'>;
  note: string;
}> = [
  {
    name: 'create 3: etcd 3 voters answer',
    op: 'createEtcd',
    floor: 'bootstrap',
    note: 'floor: 3 bare Pods, static cluster',
  },
  {
    name: 'create 3: status Available',
    op: 'createStatus',
    floor: 'bootstrap',
    note: 'target <= floor + 1.5 s',
  },
  {
    name: 'scale 3 -> 5: etcd 5 voters answer',
    op: 'scaleUpEtcd',
    floor: 'join',
    note: 'floor: member add + Pod, x2, each fed a snapshot (PRELOAD_ENTRIES)',
  },
  { name: 'scale 3 -> 5: status Available', op: 'scaleUpStatus', floor: 'join', note: 'target <= 3 s' },
  {
    name: 'scale 5 -> 3: membership 3',
    op: 'scaleDownMembership',
    floor: 'remove',
    note: 'floor: member remove x2; target <= 0.3 s',
  },
  {
    name: 'scale 5 -> 3: status true',
    op: 'scaleDownStatus',
    floor: 'remove',
    note: 'target membership + 0.3 s',
  },
  {
    name: 'member Pod deleted: member healthy',
    op: 'healHealthy',
    floor: 'heal',
    note: 'floor: bare Pod re-created; target <= floor + 0.5 s',
  },
  {
    name: 'member Pod deleted: its Pod Ready',
    op: 'healPodReady',
    floor: 'heal',
    note: "the kubelet's readiness probe (1 s period, after the startup probe's 1 s)",
  },
  {
    name: 'member Pod deleted: status ready',
    op: 'healStatus',
    floor: 'heal',
    note: 'target Pod Ready + 1 s (what the operator can see)',
  },
];

async function idleStatusWrites(get: () => Promise<EtcdCluster>, ms: number): Promise<number> {
  let last = (await get()).metadata.resourceVersion;
  let writes = 0;
  const t0 = Date.now();
  while (Date.now() - t0 < ms) {
    await new Promise((r) => setTimeout(r, 1000));
    const rv = (await get()).metadata.resourceVersion;
    if (rv !== last) writes += 1;
    last = rv;
  }
  return writes;
}

async function deleteNamespace(core: CoreV1Api, name: string): Promise<void> {
  await core.deleteNamespace({ name }).catch(() => undefined);
  // The next run starts on a quiet machine: wait (bounded) until the namespace and its Pods are gone.
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    const gone = await core.readNamespace({ name }).then(
      () => false,
      () => true,
    );
    if (gone) return;
    await new Promise((r) => setTimeout(r, 500));
  }
}

export const operatorSection: BenchSection = {
  name: 'operator',
  async run(log) {
    const { stack, core, custom } = benchStack(log);
    const runs = Math.max(1, Number(process.env.BENCH_RUNS ?? '3'));
    const idleMs = Number(process.env.BENCH_IDLE_SECONDS ?? '60') * 1000;
    log(`operator: ${runs} run(s) on the stack at ${stack.hostIp}`);
    const ops: OperatorTimes[] = [];
    const floors: FloorTimes[] = [];
    let idleWrites: number | undefined;
    for (let run = 1; run <= runs; run++) {
      const namespace = `bench-${run}-${Date.now().toString(36)}`;
      await createWorkloadNamespace(core, namespace);
      try {
        const { times, cluster, image } = await runOperator(core, custom, namespace, 'b');
        ops.push(times);
        log(
          `operator: run ${run} operator ${JSON.stringify(times, (_k, v: unknown) => (typeof v === 'number' ? Number(v.toFixed(2)) : v))}`,
        );
        if (run === runs && idleMs > 0) {
          idleWrites = await idleStatusWrites(
            async () =>
              (await custom.getNamespacedCustomObject({ ...crd, namespace, name: 'b' })) as EtcdCluster,
            idleMs,
          );
        }
        // The operator's cluster is deleted before the floor runs, so each measures on the same idle machine.
        await custom.deleteNamespacedCustomObject({ ...crd, namespace, name: 'b' });
        await until(
          "the operator's Pods gone",
          async () => ((await core.listNamespacedPod({ namespace })).items.length === 0 ? true : undefined),
          120_000,
          500,
        ).catch(() =>
          log("operator: the cluster's Pods still there after 120 s; the floor runs beside them"),
        );
        const f = await measureFloor(core, namespace, cluster.spec, image);
        floors.push(f);
        log(
          `operator: run ${run} floor ${JSON.stringify(f, (_k, v: unknown) => (typeof v === 'number' ? Number(v.toFixed(2)) : v))}`,
        );
        await removeFloor(core, namespace);
      } finally {
        await deleteNamespace(core, namespace);
      }
    }

    const figures: Figure[] = ROWS.map((r) => {
      const op = summarize(ops.map((o) => o[r.op]));
      const floor = summarize(floors.map((f) => f[r.floor]));
      const floorSpread = formatSpread(floor.spread, 's');
      return {
        name: r.name,
        unit: 's',
        ...op,
        ...(floor.value !== undefined ? { floor: floor.value } : {}),
        note: `${r.note}${floorSpread ? `; floor ${floorSpread}` : ''}`,
      } as Figure;
    });
    const podReady = summarize(floors.flatMap((f) => f.podReady));
    figures.push({
      name: 'floor: member Pod created -> Ready and answering',
      unit: 's',
      ...podReady,
      note: 'bare Pod, same image, claim and probe (joining a cluster)',
    } as Figure);
    figures.push({
      name: 'idle cluster: status writes',
      value: idleWrites === undefined ? undefined : idleWrites / (idleMs / 60_000),
      unit: '/min',
      note: 'target 0',
    });
    return figures;
  },
};
