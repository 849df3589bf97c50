// Retention of a schedule's snapshots as a pure function: which EtcdSnapshots (and their stored objects) to prune.
//
// Invariant: the newest successful snapshot is never pruned, whatever the rule says, and a snapshot that
// is still being taken is never pruned; without a retention rule nothing is.
import type { SnapshotPhase } from '../crds/etcd-snapshot';
import type { SnapshotRetention } from '../crds/etcd-snapshot-schedule';

/** What retention needs to know of one EtcdSnapshot. */
export interface RetentionCandidate {
  name: string;
  phase?: SnapshotPhase;
  /** metadata.creationTimestamp, RFC 3339. */
  createdAt: string;
  /** status.artifact.takenAt, RFC 3339, for a successful snapshot. */
  takenAt?: string;
  /** status.artifact.uri: the stored object to delete with the CR. */
  uri?: string;
}

export interface Pruned {
  name: string;
  uri?: string;
  why: string;
}

export interface RetentionVerdict {
  keep: string[];
  prune: Pruned[];
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `30m`, `36h`, `7d`, `1d12h` in milliseconds; throws on anything else (the CRD's pattern refuses it first). */
export function parseDuration(text: string): number {
  if (!/^([0-9]+[smhd])+$/.test(text)) {
    throw new Error(`not a duration: "${text}" (expected e.g. 30m, 36h, 7d or 1d12h)`);
  }
  let ms = 0;
  for (const m of text.matchAll(/([0-9]+)([smhd])/g)) ms += Number(m[1]) * (UNIT_MS[m[2] ?? ''] ?? 0);
  return ms;
}

const timeOf = (c: RetentionCandidate) => Date.parse(c.takenAt ?? c.createdAt);
const newestFirst = (a: RetentionCandidate, b: RetentionCandidate) =>
  timeOf(b) - timeOf(a) || b.name.localeCompare(a.name);

/**
 * Successful snapshots: keep the newest `keepLast` and those younger than `maxAge`; both limits apply when
 * both are set. Failed snapshots hold no stored object: they stay while no newer snapshot succeeded (they
 * explain the current failures), and go once one did or once older than `maxAge`.
 */
export function retentionVerdict(
  snapshots: RetentionCandidate[],
  retention: SnapshotRetention | undefined,
  now: Date,
): RetentionVerdict {
  const keep: string[] = [];
  const prune: Pruned[] = [];
  const maxAgeMs = retention?.maxAge !== undefined ? parseDuration(retention.maxAge) : undefined;
  const tooOld = (c: RetentionCandidate) => maxAgeMs !== undefined && now.getTime() - timeOf(c) > maxAgeMs;

  const succeeded = snapshots.filter((c) => c.phase === 'Succeeded').sort(newestFirst);
  const newestSuccess = succeeded[0];
  for (const c of [...snapshots].sort(newestFirst)) {
    if (!retention || (c.phase !== 'Succeeded' && c.phase !== 'Failed') || c === newestSuccess) {
      keep.push(c.name);
      continue;
    }
    let why: string | undefined;
    if (c.phase === 'Succeeded') {
      const rank = succeeded.indexOf(c);
      if (retention.keepLast !== undefined && rank >= retention.keepLast) {
        why = `beyond keepLast ${retention.keepLast}`;
      } else if (tooOld(c)) {
        why = `older than maxAge ${retention.maxAge}`;
      }
    } else if (newestSuccess && timeOf(c) <= timeOf(newestSuccess)) {
      why = `failed, and ${newestSuccess.name} succeeded since`;
    } else if (tooOld(c)) {
      why = `failed, and older than maxAge ${retention.maxAge}`;
    }
    if (why) prune.push({ name: c.name, ...(c.uri ? { uri: c.uri } : {}), why });
    else keep.push(c.name);
  }
  return { keep, prune };
}
