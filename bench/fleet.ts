// Bench section "fleet": a fleet created at once (BENCH_FLEET_CLUSTERS clusters of BENCH_FLEET_MEMBERS members,
// default 50 x 3): time until all are Available and each cluster's own time (p50, p99); then what the idle fleet
// costs: the operator's resident memory and CPU (watcher and worker share one process), status writes, and
// Temporal actions per cluster per hour over a window long enough to include a drift check (BENCH_IDLE_MINUTES,
// default 11; the drift check runs every 10 minutes).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { EtcdCluster } from '../crds/etcd-cluster';
import { readStackInfo } from '../localcluster/stack-info';
import { benchStack, clusterCrd as crd, createEtcdCluster, until } from './bench-stack';
import type { BenchSection, Figure } from './section';
import { countActions, type HistoryEventJson } from './temporal-actions';

const CLUSTERS = Number(process.env.BENCH_FLEET_CLUSTERS ?? '50');
const MEMBERS = Number(process.env.BENCH_FLEET_MEMBERS ?? '3');

/** The q-quantile (0..1) of the samples by nearest rank; undefined for none. */
export function quantile(xs: readonly number[], q: number): number | undefined {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
}

/** Clock ticks a second, asked of the system once. */
let clockTicks: number | undefined;

/** CPU seconds a process has used (user + system, from /proc/<pid>/stat), or undefined when it is gone. */
function cpuSeconds(pid: number): number | undefined {
  try {
    // Fields after the command (which may hold spaces) start at state; utime and stime are the 12th and 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(rest[11]) + Number(rest[12]);
    clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    return Number.isFinite(ticks) ? ticks / clockTicks : undefined;
  } catch {
    return undefined;
  }
}

/** Resident set size of a process in MB (VmRSS), or undefined when it is gone. */
function rssMb(pid: number): number | undefined {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) / 1024 : undefined;
  } catch {
    return undefined;
  }
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

    let peakRss = 0;
    let lastRss: number | undefined;
    const sample = () => {
      const pid = readStackInfo(stackJson)?.pids.operator;
      lastRss = pid ? rssMb(pid) : undefined;
      if (lastRss !== undefined) peakRss = Math.max(peakRss, lastRss);
    };
    sample();
    const sampler = setInterval(sample, 2000);

    const list = async () =>
      ((await custom.listNamespacedCustomObject({ ...crd, namespace })) as { items: EtcdCluster[] }).items;
    const figures: Figure[] = [];
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    try {
      const operatorPid = () => readStackInfo(stackJson)?.pids.operator;
      const cpuAtStart = cpuSeconds(operatorPid() ?? 0);
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
      const cpuAfterCreate = cpuSeconds(operatorPid() ?? 0);
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
          value:
            cpuAtStart !== undefined && cpuAfterCreate !== undefined
              ? cpuAfterCreate - cpuAtStart
              : undefined,
          unit: 'CPU s',
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
      const cpuAtEnd = cpuSeconds(operatorPid() ?? 0);

      const ids = (
        JSON.parse(
          temporal(['workflow', 'list', '--query', `EtcdClusterNamespace='${namespace}'`, '-o', 'json']),
        ) as { execution: { workflowId: string } }[] | null
      )?.map((w) => w.execution.workflowId);
      let actions = 0;
      for (const id of new Set(ids ?? [])) {
        const history = JSON.parse(temporal(['workflow', 'show', '--workflow-id', id, '-o', 'json'])) as {
          events: HistoryEventJson[];
        };
        actions += countActions(history.events, windowStart, windowEnd);
      }
      sample();
      figures.push(
        {
          name: 'operator resident memory, peak',
          value: peakRss,
          unit: 'MB',
          note: `watcher + worker, ${CLUSTERS} clusters of ${MEMBERS}; target < 300 MB`,
        },
        { name: 'operator resident memory, end of idle window', value: lastRss, unit: 'MB' },
        {
          name: 'idle fleet: operator CPU',
          value:
            cpuAtEnd !== undefined && cpuAfterCreate !== undefined
              ? ((cpuAtEnd - cpuAfterCreate) / (minutes * 60)) * 100
              : undefined,
          unit: '% of a core',
          note: 'watcher (with the alarm poller) + worker',
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
