// Records when this process's event loop stood still: the stack's daemon carries the Pods' TCP relays to Temporal and MinIO (real-nodes/host-service-relays.ts), so a stall there holds that traffic; the availability report prints the stalls that fall in a write gap.
import { appendFileSync } from 'node:fs';

const TICK_MS = 50;

/** The daemon's stall log, in the stack's state folder. */
export const DAEMON_STALLS_FILE = 'daemon-stalls.log';

/** One stall as a log line: start and end (ms since the epoch) and its length. */
export const stallLine = (from: number, to: number): string =>
  `${new Date(from).toISOString()} ${new Date(to).toISOString()} ${to - from}\n`;

/** The stalls of a log written by startStallLog, oldest first; lines it cannot read are skipped. */
export function parseStallLog(text: string): Array<{ from: number; to: number }> {
  const out: Array<{ from: number; to: number }> = [];
  for (const line of text.split('\n')) {
    const [a, b] = line.trim().split(' ');
    const from = Date.parse(a ?? '');
    const to = Date.parse(b ?? '');
    if (Number.isFinite(from) && Number.isFinite(to) && to >= from) out.push({ from, to });
  }
  return out;
}

/** Appends a line to `path` for every time the loop ran more than `minMs` late; returns a stop function. */
export function startStallLog(path: string, minMs = 150): () => void {
  let last = Date.now();
  const timer = setInterval(() => {
    const now = Date.now();
    if (now - last - TICK_MS > minMs) {
      try {
        appendFileSync(path, stallLine(last + TICK_MS, now));
      } catch {
        // A diagnosis aid: a full disk must not take the stack down.
      }
    }
    last = now;
  }, TICK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
