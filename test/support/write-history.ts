// The pure half of the availability checks: what a writer's history says (acknowledged, failed, the longest gap) and what a member's copy of the keys says about it (lost, changed, unexpected). No I/O, so it is tested as tables.

/** One write of the writer: a unique key, tried once, with its outcome and when it started and ended (ms since the epoch). */
export interface WriteRecord {
  key: string;
  value: string;
  startedAt: number;
  endedAt: number;
  /** Acknowledged: etcd answered the put. A failed write may or may not have been applied (a timeout is indeterminate). */
  ok: boolean;
  /** The revision of the put's response header (acknowledged writes only): the key's mod_revision from then on. */
  revision?: number;
  error?: string;
}

export interface Gap {
  /** The gap the cluster is answerable for: its length on the clock less the time the writer itself stood still. */
  ms: number;
  /** When the gap began (the acknowledgement before it, or the writer's start) and ended. */
  from: number;
  to: number;
  /** Its length on the clock, and how much of it the writer's own process was stalled (see Stall). */
  wallMs: number;
  stalledMs: number;
}

/**
 * A time the writer's own process could not run (its event loop blocked: a garbage collection of the test
 * process's heap, a CPU starved machine). No request could be sent and no answer read then, whatever the cluster
 * did, so that time is the measurement's, not the cluster's; the writer records such stalls as it runs.
 */
export interface Stall {
  from: number;
  to: number;
}

/** How much of [from, to] the stalls cover (stalls do not overlap one another). */
export function stalledWithin(stalls: readonly Stall[], from: number, to: number): number {
  let ms = 0;
  for (const s of stalls) ms += Math.max(0, Math.min(to, s.to) - Math.max(from, s.from));
  return ms;
}

/**
 * The longest time without an acknowledgement, from the writer's start through every acknowledgement to its stop,
 * less the writer's own stalls within it. The start and the stop count as edges: a writer that never got an answer
 * after some moment has a gap up to its stop, so an outage at the end of a test cannot hide behind the last
 * success. (A write in flight at the stop may be acknowledged after it; it then simply closes no gap.)
 */
export function longestGap(
  ackTimes: readonly number[],
  startedAt: number,
  stoppedAt: number,
  stalls: readonly Stall[] = [],
): Gap {
  const edges = [startedAt, ...ackTimes, stoppedAt].sort((a, b) => a - b);
  let best: Gap = { ms: 0, from: startedAt, to: startedAt, wallMs: 0, stalledMs: 0 };
  for (let i = 1; i < edges.length; i++) {
    const from = edges[i - 1] as number;
    const to = edges[i] as number;
    const stalledMs = stalledWithin(stalls, from, to);
    const ms = to - from - stalledMs;
    if (ms > best.ms) best = { ms, from, to, wallMs: to - from, stalledMs };
  }
  return best;
}

export interface WriteFigures {
  acknowledged: number;
  failed: number;
  longestGap: Gap;
  /** Acknowledged writes per second over the writer's life. */
  rate: number;
  /** The writer's own stalls: how many, and the longest. */
  stalls: number;
  longestStallMs: number;
}

export function writeFigures(
  records: readonly WriteRecord[],
  startedAt: number,
  stoppedAt: number,
  stalls: readonly Stall[] = [],
): WriteFigures {
  const acks = records.filter((r) => r.ok);
  const seconds = Math.max(stoppedAt - startedAt, 1) / 1000;
  return {
    acknowledged: acks.length,
    failed: records.length - acks.length,
    longestGap: longestGap(
      acks.map((r) => r.endedAt),
      startedAt,
      stoppedAt,
      stalls,
    ),
    rate: Math.round((acks.length / seconds) * 10) / 10,
    stalls: stalls.length,
    longestStallMs: Math.max(0, ...stalls.map((x) => x.to - x.from)),
  };
}

/** A key as one member stores it. */
export interface StoredKey {
  value: string;
  modRevision: number;
}

export interface MemberCopyCheck {
  /** Acknowledged keys the member does not hold. Must be empty. */
  lost: string[];
  /** Acknowledged keys held with another value or another mod_revision than the put answered (history rewritten). Must be empty. */
  changed: string[];
  /** Keys under the prefix the writer never tried. Must be empty. */
  unexpected: string[];
  /** Failed writes that were applied anyway (a timeout after commit): allowed, counted. */
  recovered: number;
}

/** Compares one member's keys under the writer's prefix with the writer's history. */
export function checkMemberCopy(
  records: readonly WriteRecord[],
  stored: ReadonlyMap<string, StoredKey>,
): MemberCopyCheck {
  const tried = new Map(records.map((r) => [r.key, r]));
  const lost: string[] = [];
  const changed: string[] = [];
  let recovered = 0;
  for (const r of records) {
    const s = stored.get(r.key);
    if (!r.ok) {
      if (s) recovered += 1;
      continue;
    }
    if (!s) lost.push(r.key);
    else if (s.value !== r.value || (r.revision !== undefined && s.modRevision !== r.revision))
      changed.push(r.key);
  }
  const unexpected = [...stored.keys()].filter((k) => !tried.has(k));
  return { lost, changed, unexpected, recovered };
}

/** The highest revision any acknowledged write was answered with: a member that has applied it holds them all. */
export function highestAcknowledgedRevision(records: readonly WriteRecord[]): number {
  return records.reduce((max, r) => (r.ok && r.revision !== undefined ? Math.max(max, r.revision) : max), 0);
}
