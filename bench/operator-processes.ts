// The operator's processes as the bench reads them: resident memory and CPU seconds of each, from /proc for an
// operator the stack runs as a local process, from each replica's /metrics when it runs from the Helm chart.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { CoreV1Api } from '@kubernetes/client-node';
import type { StackInfo } from '../localcluster/stack-info';

/** One operator process at one moment. */
export interface ProcessSample {
  /** The process: its pid, or its Pod's name. */
  name: string;
  rssMb: number;
  cpuSeconds: number;
}

/** Every operator process now (one per replica); those that cannot be read are left out. */
export type OperatorSampler = () => Promise<ProcessSample[]>;

/** Pure: resident memory and CPU from a Prometheus text exposition (prom-client's default process metrics). */
export function processFigures(text: string): { rssMb: number; cpuSeconds: number } | undefined {
  const value = (metric: string) => {
    const m = new RegExp(`^${metric} ([0-9.e+-]+)$`, 'm').exec(text)?.[1];
    return m === undefined ? undefined : Number(m);
  };
  const rss = value('process_resident_memory_bytes');
  const cpu = value('process_cpu_seconds_total');
  if (rss === undefined || cpu === undefined || !Number.isFinite(rss) || !Number.isFinite(cpu))
    return undefined;
  return { rssMb: rss / (1024 * 1024), cpuSeconds: cpu };
}

/** Clock ticks a second, asked of the system once. */
let clockTicks: number | undefined;

/** A local process's resident memory (VmRSS) and CPU (utime + stime), or undefined when it is gone. */
function procSample(pid: number): ProcessSample | undefined {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    // Fields after the command (which may hold spaces) start at state; utime and stime are the 12th and 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    const ticks = Number(rest[11]) + Number(rest[12]);
    if (!kb || !Number.isFinite(ticks)) return undefined;
    return { name: `pid ${pid}`, rssMb: Number(kb) / 1024, cpuSeconds: ticks / clockTicks };
  } catch {
    return undefined;
  }
}

/** How long one replica's /metrics may take to answer before it is left out of a sample. */
const METRICS_TIMEOUT_MS = 2000;

/** The sampler for this stack's operator: its local process, or every running Pod of its chart release. */
export function operatorSampler(stack: () => StackInfo | undefined, core: CoreV1Api): OperatorSampler {
  return async () => {
    const info = stack();
    const chart = info?.operatorChart;
    if (!chart) {
      const pid = info?.pids.operator;
      const s = pid ? procSample(pid) : undefined;
      return s ? [s] : [];
    }
    const pods = await core.listNamespacedPod({
      namespace: chart.namespace,
      labelSelector: `app.kubernetes.io/instance=${chart.release}`,
    });
    const samples = await Promise.all(
      pods.items.map(async (p): Promise<ProcessSample | undefined> => {
        const ip = p.status?.podIP;
        const port = p.spec?.containers
          .flatMap((c) => c.ports ?? [])
          .find((x) => x.name === 'http')?.containerPort;
        if (!ip || !port || p.metadata?.deletionTimestamp) return undefined;
        try {
          const res = await fetch(`http://${ip}:${port}/metrics`, {
            signal: AbortSignal.timeout(METRICS_TIMEOUT_MS),
          });
          const figures = res.ok ? processFigures(await res.text()) : undefined;
          return figures && { name: p.metadata?.name ?? ip, ...figures };
        } catch {
          return undefined;
        }
      }),
    );
    return samples.flatMap((s) => (s ? [s] : []));
  };
}
