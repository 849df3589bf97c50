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
  ms: number;
  /** When the gap began (the acknowledgement before it, or the writer's start) and ended. */
  from: number;
  to: number;
}

/**
 * The longest time without an acknowledgement, from the writer's start through every acknowledgement to its stop.
 * The start and the stop count as edges: a writer that never got an answer after some moment has a gap up to its
 * stop, so an outage at the end of a test cannot hide behind the last success. (A write in flight at the stop may
 * be acknowledged after it; it then simply closes no gap.)
 */
export function longestGap(ackTimes: readonly number[], startedAt: number, stoppedAt: number): Gap {
  const edges = [startedAt, ...ackTimes, stoppedAt].sort((a, b) => a - b);
  let best: Gap = { ms: 0, from: startedAt, to: startedAt };
  for (let i = 1; i < edges.length; i++) {
    const from = edges[i - 1] as number;
    const to = edges[i] as number;
    if (to - from > best.ms) best = { ms: to - from, from, to };
  }
  return best;
}

export interface WriteFigures {
  acknowledged: number;
  failed: number;
  longestGap: Gap;
  /** Acknowledged writes per second over the writer's life. */
  rate: number;
}

export function writeFigures(
  records: readonly WriteRecord[],
  startedAt: number,
  stoppedAt: number,
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
    ),
    rate: Math.round((acks.length / seconds) * 10) / 10,
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
