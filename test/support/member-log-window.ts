// What a cluster's etcd members logged around a write gap that passed its bound: elections, heartbeats sent late,
// applies that took too long. A diagnosis printed beside the failed assertion, never a reason to pass.
import { Labels } from '../../crds/labels';
import type { Harness } from './cluster-harness';

/** Lines each member contributes at most (see linesWithin for which). */
export const LINES_PER_MEMBER = 12;
/** Looked at before the gap began (what led to it) and after it ended (how it ended). */
export const BEFORE_MS = 2000;
export const AFTER_MS = 500;

interface EtcdLogLine {
  level?: string;
  ts?: string;
  msg?: string;
}

/** What explains a stall: raft's elections and terms, heartbeats, slow applies and disks, lost peers. */
const TELLING = /leader|elect|term|vote|heartbeat|took too long|slow|fdatasync|lost|inactive|unreachable/i;

/**
 * The lines of one member's log (etcd's JSON lines) stamped inside [from, to], debug lines left out, each shortened
 * to its time, level, message and the fields after it (the caller dropped). At most `max`, in time order: warnings,
 * errors and telling lines (TELLING) first, then the others from the earliest.
 */
export function linesWithin(text: string, from: number, to: number, max = LINES_PER_MEMBER): string[] {
  const inWindow: Array<{ at: number; telling: boolean; text: string }> = [];
  for (const raw of text.split('\n')) {
    if (!raw.startsWith('{')) continue;
    let line: EtcdLogLine & Record<string, unknown>;
    try {
      line = JSON.parse(raw) as EtcdLogLine & Record<string, unknown>;
    } catch {
      continue;
    }
    const at = line.ts === undefined ? NaN : Date.parse(line.ts);
    if (!(at >= from && at <= to) || line.level === 'debug') continue;
    const { level, ts, msg, caller: _caller, ...rest } = line;
    const fields = Object.keys(rest).length > 0 ? ` ${JSON.stringify(rest)}` : '';
    inWindow.push({
      at,
      telling: level !== 'info' || TELLING.test(msg ?? ''),
      text: `${ts} ${level ?? '?'} ${msg ?? ''}${fields}`.slice(0, 300),
    });
  }
  const picked = [...inWindow.filter((l) => l.telling), ...inWindow.filter((l) => !l.telling)].slice(0, max);
  return picked.sort((a, b) => a.at - b.at).map((l) => l.text);
}

/**
 * Each member Pod's etcd log around a gap, as report lines. Best effort: a Pod gone or a log unreadable is said in
 * one line and the others still print.
 */
export async function memberLogsAround(
  h: Harness,
  cluster: { namespace: string; name: string },
  gap: { from: number; to: number },
): Promise<string[]> {
  const from = gap.from - BEFORE_MS;
  const to = gap.to + AFTER_MS;
  const pods = await h.core.listNamespacedPod({
    namespace: cluster.namespace,
    labelSelector: `${Labels.cluster}=${cluster.name}`,
  });
  const out: string[] = [];
  for (const pod of pods.items) {
    const podName = pod.metadata?.name ?? '';
    try {
      const text = await h.core.readNamespacedPodLog({
        namespace: cluster.namespace,
        name: podName,
        container: 'etcd',
        // Whole seconds back to the window's start, with one to spare; the window's own bounds are applied above.
        sinceSeconds: Math.max(1, Math.ceil((Date.now() - from) / 1000) + 1),
      });
      const lines = linesWithin(text, from, to);
      out.push(
        `  ${podName} logged ${lines.length === 0 ? 'nothing' : `${lines.length} lines`} from ${BEFORE_MS / 1000} s before the gap to ${AFTER_MS} ms after it:`,
      );
      // A member restarted since the window began: its container's previous log when the kubelet keeps one (a restart
      // in the same Pod); a re-created Pod's earlier log is gone with the old Pod.
      const status = pod.status?.containerStatuses?.find((c) => c.name === 'etcd');
      const started = startedAtOf(status?.state?.running);
      if (started !== undefined && started > from) {
        const previous =
          (status?.restartCount ?? 0) > 0
            ? await h.core
                .readNamespacedPodLog({
                  namespace: cluster.namespace,
                  name: podName,
                  container: 'etcd',
                  previous: true,
                })
                .then((t) => linesWithin(t, from, to))
                .catch(() => undefined)
            : undefined;
        out.push(
          `    (its etcd container started at ${new Date(started).toISOString()}, inside the window; ${previous ? `the one before it logged ${previous.length} lines:` : 'what the one before it logged is gone'})`,
          ...(previous ?? []).map((l) => `    ${l}`),
        );
      }
      out.push(...lines.map((l) => `    ${l}`));
    } catch (err) {
      out.push(`  ${podName}: its log could not be read (${String(err).slice(0, 120)})`);
    }
  }
  return out;
}

/** When a running container started, in ms; client-node types it a Date, the wire carries a string. */
function startedAtOf(running: { startedAt?: Date | string } | undefined): number | undefined {
  const at = running?.startedAt === undefined ? NaN : new Date(running.startedAt).getTime();
  return Number.isNaN(at) ? undefined : at;
}
