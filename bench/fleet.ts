// Bench section "fleet": a fleet created at once (BENCH_FLEET_CLUSTERS clusters of BENCH_FLEET_MEMBERS members,
// default 50 x 3): time until all are Available and each cluster's own time (p50, p99); then what the idle fleet
// costs: the operator's resident memory and CPU (watcher and worker share one process), status writes, and
// Temporal actions per cluster per hour over a window long enough to include a drift check (BENCH_IDLE_MINUTES,
// default 11; the drift check runs every 10 minutes); last, how soon a spec change reaches its operation's first step
// (p50, p99) with the whole fleet in the operator.
import { execFileSync } from 'node:child_process';
import type { EtcdCluster } from '../crds/etcd-cluster';
import { readStackInfo } from '../localcluster/stack-info';
import { createWorkloadNamespace } from '../localcluster/workload-namespace';
import { benchStack, clusterCrd as crd, createEtcdCluster, scaleEtcdCluster, until } from './bench-stack';
import type { BenchSection, Figure } from './section';
import { countActions, firstStep, type HistoryEventJson } from './temporal-actions';
import { operatorSampler, type ProcessSample } from './operator-processes';

const CLUSTERS = Number(process.env.BENCH_FLEET_CLUSTERS ?? '50');
const MEMBERS = Number(process.env.BENCH_FLEET_MEMBERS ?? '3');
/**
 * The CPU request each member container gets (BENCH_FLEET_MEMBER_CPU, default 25m: 50 x 3 members take 3.75 of the
 * local nodes' 6 CPUs); `none` leaves them BestEffort, as Sessions 26 and 27 measured (starved beside busy operator
 * Pods: their spec change -> first step p99 was 14.4 s, most of it one look at members that answered slowly).
 */
const MEMBER_CPU = process.env.BENCH_FLEET_MEMBER_CPU ?? '25m';

/** The q-quantile (0..1) of the samples by nearest rank; undefined for none. */
export function quantile(xs: readonly number[], q: number): number | undefined {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
}

/** CPU seconds of each process by name, and their sum, between two samples (processes in both only). */
export function cpuBetween(
  before: readonly ProcessSample[],
  after: readonly ProcessSample[],
): { total: number; each: string } | undefined {
  const was = new Map(before.map((s) => [s.name, s.cpuSeconds]));
  const used = after.flatMap((s) => {
    const b = was.get(s.name);
    return b === undefined ? [] : [{ name: s.name, cpu: s.cpuSeconds - b }];
  });
  if (used.length === 0) return undefined;
  return {
    total: used.reduce((sum, u) => sum + u.cpu, 0),
    each: used.map((u) => `${u.name} ${u.cpu.toFixed(1)}`).join(', '),
  };
}

export const fleetSection: BenchSection = {
  name: 'fleet',
  async run(log) {
    const { stack, stackJson, core, custom } = benchStack(log);
    const idleMs = Number(process.env.BENCH_IDLE_MINUTES ?? '11') * 60_000;
    const namespace = `bench-fleet-${Date.now().toString(36)}`;
    const names = Array.from({ length: CLUSTERS }, (_, i) => `f${String(i).padStart(2, '0')}`);
    const temporal = (args: string[]) =>
      execFileSync(
        stack.tools.temporal,
        [...args, '--address', stack.temporal.address, '--namespace', stack.temporal.namespace],
        { encoding: 'utf8', maxBuffer: 64 << 20 },
      );

    // Each operator process (one per replica) is sampled every 2 s: its peak and its last resident memory.
    const processes = operatorSampler(() => readStackInfo(stackJson), core);
    const peakRss = new Map<string, number>();
    let last: ProcessSample[] = [];
    const sample = async () => {
      last = await processes().catch(() => last);
      for (const s of last) peakRss.set(s.name, Math.max(peakRss.get(s.name) ?? 0, s.rssMb));
      return last;
    };
    await sample();
    const sampler = setInterval(() => void sample(), 2000);
    const largest = (xs: Iterable<number>) => {
      const all = [...xs];
      return all.length > 0 ? Math.max(...all) : undefined;
    };

    /** Every workflow of the fleet's namespace: cluster workflows and their operations. */
    const workflowIds = () =>
      (
        (JSON.parse(
          temporal(['workflow', 'list', '--query', `EtcdClusterNamespace='${namespace}'`, '-o', 'json']),
        ) as { execution: { workflowId: string } }[] | null) ?? []
      ).map((w) => w.execution.workflowId);
    const history = (id: string) =>
      (
        JSON.parse(temporal(['workflow', 'show', '--workflow-id', id, '-o', 'json'])) as {
          events: HistoryEventJson[];
        }
      ).events;

    /**
     * Spec change -> first step, after the idle window: each cluster in turn, one a second, is scaled by one member
     * (down from 3: a member removal, no Pod to wait for), timed from the moment the API server answered the patch
     * to the moment its operation scheduled its first step (from the operation's history, so nothing polls in
     * between).
     */
    const specChangeToFirstStep = async (): Promise<Figure[]> => {
      const to = MEMBERS > 1 ? MEMBERS - 1 : MEMBERS + 1;
      const type = to < MEMBERS ? 'scaledown' : 'scaleup';
      const changedAt = new Map<string, number>();
      for (const name of names) {
        await scaleEtcdCluster(custom, namespace, name, to);
        changedAt.set(name, Date.now());
        await new Promise((r) => setTimeout(r, 1000));
      }
      const steps = new Map<string, { ms: number; activity: string }>();
      await until(
        `${CLUSTERS} ${type} operations with a first step`,
        async () => {
          for (const id of workflowIds().filter((w) => w.endsWith(`-${type}`))) {
            const name = id.split('/')[2] ?? '';
            const at = changedAt.get(name);
            if (at === undefined || steps.has(name)) continue;
            const step = firstStep(history(id));
            if (step) steps.set(name, { ms: step.atMs - at, activity: step.activity });
          }
          return steps.size === CLUSTERS ? true : undefined;
        },
        300_000,
        2000,
      );
      const ms = [...steps.values()].map((s) => s.ms);
      const activities = [...new Set([...steps.values()].map((s) => s.activity))].join(', ');
      const note = `${CLUSTERS} clusters ${MEMBERS} -> ${to}, one a second; first step ${activities}; target p99 <= 200 ms`;
      return [
        { name: 'spec change -> first step, p50', value: quantile(ms, 0.5), unit: 'ms', note },
        { name: 'spec change -> first step, p99', value: quantile(ms, 0.99), unit: 'ms' },
      ];
    };

    const list = async () =>
      ((await custom.listNamespacedCustomObject({ ...crd, namespace })) as { items: EtcdCluster[] }).items;
    const figures: Figure[] = [];
    if (MEMBER_CPU === 'none') await core.createNamespace({ body: { metadata: { name: namespace } } });
    else await createWorkloadNamespace(core, namespace, {}, MEMBER_CPU);
    log(`fleet: member CPU request ${MEMBER_CPU === 'none' ? 'none (BestEffort)' : MEMBER_CPU}`);
    try {
      const cpuAtStart = await sample();
      const t0 = performance.now();
      await Promise.all(
        names.map((name) => createEtcdCluster(custom, namespace, name, { replicas: MEMBERS })),
      );
      log(
        `fleet: ${CLUSTERS} ${MEMBERS}-member clusters applied in ${namespace}; waiting for all to be Available`,
      );
      /** Seconds from the apply until each cluster was first seen Available (polled every 500 ms). */
      const availableAfter = new Map<string, number>();
      await until(
        `${CLUSTERS} clusters Available`,
        async () => {
          const now = (performance.now() - t0) / 1000;
          for (const c of await list()) {
            const ready =
              c.status?.observedGeneration === c.metadata.generation &&
              c.status?.readyReplicas === MEMBERS &&
              !c.status?.currentOperation &&
              c.status?.conditions?.some((x) => x.type === 'Available' && x.status === 'True');
            if (ready && !availableAfter.has(c.metadata.name ?? ''))
              availableAfter.set(c.metadata.name ?? '', now);
          }
          return availableAfter.size === CLUSTERS ? true : undefined;
        },
        1_800_000,
        500,
      );
      const perCluster = [...availableAfter.values()];
      const cpuAfterCreate = await sample();
      const created = cpuBetween(cpuAtStart, cpuAfterCreate);
      figures.push(
        {
          name: `${CLUSTERS} ${MEMBERS}-member clusters applied -> all Available`,
          value: (performance.now() - t0) / 1000,
          unit: 's',
        },
        { name: 'one cluster applied -> Available, p50', value: quantile(perCluster, 0.5), unit: 's' },
        { name: 'one cluster applied -> Available, p99', value: quantile(perCluster, 0.99), unit: 's' },
        {
          name: 'operator CPU while the fleet was created',
          value: created?.total,
          unit: 'CPU s',
          ...(created ? { note: `each process: ${created.each}` } : {}),
        },
      );

      log(`fleet: all Available; idle for ${idleMs / 60_000} min`);
      const windowStart = Date.now();
      const versions = new Map((await list()).map((c) => [c.metadata.name, c.metadata.resourceVersion]));
      let writes = 0;
      while (Date.now() - windowStart < idleMs) {
        await new Promise((r) => setTimeout(r, 10_000));
        for (const c of await list()) {
          if (versions.get(c.metadata.name) !== c.metadata.resourceVersion) writes += 1;
          versions.set(c.metadata.name, c.metadata.resourceVersion);
        }
      }
      const windowEnd = Date.now();
      const minutes = (windowEnd - windowStart) / 60_000;
      const cpuAtEnd = await sample();
      const idle = cpuBetween(cpuAfterCreate, cpuAtEnd);

      let actions = 0;
      for (const id of new Set(workflowIds())) actions += countActions(history(id), windowStart, windowEnd);
      figures.push(...(await specChangeToFirstStep()));

      const peaks = [...peakRss].map(([name, mb]) => `${name} ${mb.toFixed(0)}`).join(', ');
      figures.push(
        {
          name: 'operator resident memory, peak (largest process)',
          value: largest(peakRss.values()),
          unit: 'MB',
          note: `${CLUSTERS} clusters of ${MEMBERS}; each process: ${peaks}; target < 300 MB`,
        },
        {
          name: 'operator resident memory, end of idle window (largest process)',
          value: largest(cpuAtEnd.map((s) => s.rssMb)),
          unit: 'MB',
        },
        {
          name: 'idle fleet: operator CPU (all processes)',
          value: idle ? (idle.total / (minutes * 60)) * 100 : undefined,
          unit: '% of a core',
          note: `watcher (with the alarm poller) + workers${idle ? `; CPU s each: ${idle.each}` : ''}`,
        },
        {
          name: 'idle fleet: status writes',
          value: writes / CLUSTERS / minutes,
          unit: '/cluster/min',
          note: 'target 0',
        },
        {
          name: 'idle fleet: Temporal actions',
          value: (actions / CLUSTERS / minutes) * 60,
          unit: '/cluster/h',
          note: `${actions} actions in ${minutes.toFixed(1)} min over ${CLUSTERS} clusters; target < 20`,
        },
      );
    } finally {
      clearInterval(sampler);
      await core.deleteNamespace({ name: namespace }).catch(() => undefined);
    }
    return figures;
  },
};
