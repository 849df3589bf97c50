// The continuous backup's layout in the store and the decisions read from it: object names that say the cluster uid, the
// chain and the revisions they hold; which chain and chunks reach a revision or a time; where the gaps are; what retention
// may delete. Pure, so the archiver (agent/), the operator (activities/) and the restore plan read the store one way.
//
// A chain is one full snapshot at revision S plus the chunks of changes after it (first revision S+1, contiguous);
// it exists once its manifest is stored (written after the snapshot's upload completed). Invariant: a point is
// reachable only through one chain whose snapshot is at or before it and whose chunks reach it with no hole, and
// retention deletes whole chains only, never one that a kept point needs.

/** Digits of a revision in an object name: every safe integer (2^53 - 1 has 16), so names sort by revision. */
const REVISION_DIGITS = 16;

/** The version of the manifest and state formats; a reader refuses one it does not know. */
export const CONTINUOUS_FORMAT = 1;

/**
 * The version a chunk is written in. 2 adds `leaseTtl` to changes; a reader takes every format in
 * CHUNK_FORMATS_READ (a format 1 chunk restores its keys without their leases) and refuses any other.
 */
export const CHUNK_FORMAT = 2;
export const CHUNK_FORMATS_READ: readonly number[] = [1, 2];
/** `leaseTtl` of a lease that was gone (expired or revoked) when the archiver first asked: etcd's own answer. */
export const LEASE_GONE = -1;

export const padRevision = (revision: number): string => {
  if (!Number.isSafeInteger(revision) || revision < 0)
    throw new Error(`revision ${revision} is not a non-negative safe integer`);
  return String(revision).padStart(REVISION_DIGITS, '0');
};

/** `2026-11-25T10:32:00.123Z` -> `20261125T103200123Z`: sorts as time does and needs no escaping in a key. */
export function compactTime(iso: string): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) throw new Error(`${JSON.stringify(iso)} is not a time`);
  return new Date(t).toISOString().replace(/[-:.]/g, '');
}

function isoOfCompact(compact: string): string | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})Z$/.exec(compact);
  if (!m) return undefined;
  const iso = `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}.${m[7]}Z`;
  return Number.isNaN(Date.parse(iso)) ? undefined : iso;
}

/** `<prefix>/continuous/<uid>/`: a reused cluster name gets a new uid, so two clusters' archives never mix. */
export function archiveRoot(prefix: string, clusterUid: string): string {
  if (!/^[A-Za-z0-9-]+$/.test(clusterUid))
    throw new Error(`cluster uid ${JSON.stringify(clusterUid)} is not a uid`);
  const p = prefix.replace(/\/+$/, '');
  return `${p === '' ? '' : `${p}/`}continuous/${clusterUid}/`;
}

/** A chain's id: its snapshot's revision, then the snapshot's time (two chains may start at one revision). */
export function chainId(snapshotRevision: number, snapshotTime: string): string {
  return `${padRevision(snapshotRevision)}-${compactTime(snapshotTime)}`;
}

export const chainPrefix = (root: string, chain: string) => `${root}${chain}/`;
export const snapshotKey = (root: string, chain: string) => `${chainPrefix(root, chain)}snapshot.db`;
export const manifestKey = (root: string, chain: string) => `${chainPrefix(root, chain)}chain.json`;
/** The archiver's place: what is safe in the store and the gaps it recorded, rewritten when it changes. */
export const stateKey = (root: string) => `${root}state.json`;

export function chunkKey(root: string, chain: string, first: number, last: number): string {
  if (last < first) throw new Error(`chunk ${first}..${last} is empty`);
  return `${chainPrefix(root, chain)}chunks/${padRevision(first)}-${padRevision(last)}.chunk`;
}

/** What one object of the archive is, read from its key alone (relative to the root); undefined for a stranger. */
export type ArchiveObject =
  | { kind: 'snapshot'; chain: string; snapshotRevision: number; snapshotTime: string }
  | { kind: 'manifest'; chain: string; snapshotRevision: number; snapshotTime: string }
  | { kind: 'chunk'; chain: string; first: number; last: number }
  | { kind: 'state' };

const CHAIN_RE = /^(\d{16})-(\d{8}T\d{9}Z)$/;

export function parseChainId(chain: string): { snapshotRevision: number; snapshotTime: string } | undefined {
  const m = CHAIN_RE.exec(chain);
  const time = m?.[2] !== undefined ? isoOfCompact(m[2]) : undefined;
  if (!m?.[1] || time === undefined) return undefined;
  return { snapshotRevision: Number(m[1]), snapshotTime: time };
}

export function parseArchiveKey(root: string, key: string): ArchiveObject | undefined {
  if (!key.startsWith(root)) return undefined;
  const rest = key.slice(root.length);
  if (rest === 'state.json') return { kind: 'state' };
  const parts = rest.split('/');
  const chain = parts[0] ?? '';
  const head = parseChainId(chain);
  if (!head) return undefined;
  if (parts.length === 2 && parts[1] === 'snapshot.db') return { kind: 'snapshot', chain, ...head };
  if (parts.length === 2 && parts[1] === 'chain.json') return { kind: 'manifest', chain, ...head };
  const m =
    parts.length === 3 && parts[1] === 'chunks' ? /^(\d{16})-(\d{16})\.chunk$/.exec(parts[2] ?? '') : null;
  if (m?.[1] && m[2]) {
    const first = Number(m[1]);
    const last = Number(m[2]);
    if (first <= last && first > head.snapshotRevision) return { kind: 'chunk', chain, first, last };
  }
  return undefined;
}

/** One change as the watch delivered it; values and keys are base64 (etcd keys and values are bytes). */
export interface ArchivedChange {
  type: 'put' | 'delete';
  /** base64 */
  key: string;
  /** base64; absent for a delete. */
  value?: string;
  /** The change's revision (etcd's mod revision of a put; the delete's revision). */
  revision: number;
  createRevision: number;
  version: number;
  /** Decimal lease id, "0" without one (lease ids exceed 2^53). */
  lease: string;
  /**
   * Chunk format 2, on the first put naming a lease that the archiver wrote in this chain: the lease's granted TTL in
   * seconds as etcd answered when the change arrived, or LEASE_GONE. A restore grants the lease with this id and TTL
   * before replaying that put, unless its snapshot already holds the lease.
   */
  leaseTtl?: number;
  /** RFC 3339: when the archiver received it from the watch. */
  receivedAt: string;
}

/** The manifest of one chain: its full snapshot (complete and uploaded), and the gap that started it, if any. */
export interface ChainManifest {
  format: typeof CONTINUOUS_FORMAT;
  clusterUid: string;
  chain: string;
  snapshotRevision: number;
  snapshotTime: string;
  snapshotSha256: string;
  snapshotSize: number;
  etcdVersion: string;
  /** Why this chain started: the first one, a scheduled full snapshot, or a gap it closes. */
  cause: 'first' | 'scheduled' | 'gap';
}

/** A stretch no chain can reach: revisions (exclusive bounds are reachable) and the times around it. */
export interface ArchiveGap {
  /** The last revision reachable before it. */
  afterRevision: number;
  /** The first revision reachable after it (the next chain's snapshot). */
  beforeRevision: number;
  afterTime: string;
  beforeTime: string;
  /** compacted: the watch fell behind a compaction; store: the store could not be written; restart: the archiver was down longer than etcd kept history. */
  reason: 'compacted' | 'store' | 'restart';
}

/** The archiver's place, as stored at stateKey; the operator's status.backup is read from it. */
export interface ArchiveState {
  format: typeof CONTINUOUS_FORMAT;
  clusterUid: string;
  chain: string;
  /** Every change up to this revision is in the store. */
  latestRevision: number;
  /** RFC 3339: when the archiver knew that (the store held everything etcd had at that time). */
  latestTime: string;
  /** Recorded gaps, oldest first (retention drops those before the oldest kept chain). */
  gaps: ArchiveGap[];
}

/** One chain as read from a listing plus its chunks' first change times (for points in time). */
export interface ChainView {
  chain: string;
  snapshotRevision: number;
  snapshotTime: string;
  /** Whether chain.json exists: without it the snapshot may be half-written and the chain is not usable. */
  complete: boolean;
  chunks: Array<{ first: number; last: number; key: string }>;
}

/** Groups a listing of the archive by chain, chunks sorted by revision; strangers and the state object are left out. */
export function chainsOfListing(root: string, keys: string[]): ChainView[] {
  const byChain = new Map<string, ChainView>();
  for (const key of keys) {
    const o = parseArchiveKey(root, key);
    if (!o || o.kind === 'state') continue;
    const head = parseChainId(o.chain)!;
    const view = byChain.get(o.chain) ?? { chain: o.chain, ...head, complete: false, chunks: [] };
    byChain.set(o.chain, view);
    if (o.kind === 'manifest') view.complete = true;
    if (o.kind === 'chunk') view.chunks.push({ first: o.first, last: o.last, key });
  }
  for (const v of byChain.values()) v.chunks.sort((a, b) => a.first - b.first || a.last - b.last);
  return [...byChain.values()].sort((a, b) => (a.chain < b.chain ? -1 : a.chain > b.chain ? 1 : 0));
}

/**
 * The revisions a chain reaches without a hole: from its snapshot to the end of the chunks that follow on one
 * another (a chunk whose first revision is not the previous last + 1 ends the reach; later ones cannot be used).
 * Overlapping chunks (a retried upload cut differently) are fine as long as they continue the reach.
 */
export function chainReach(view: ChainView): { from: number; to: number; holeAfter?: number } {
  let to = view.snapshotRevision;
  for (const c of view.chunks) {
    if (c.last <= to) continue;
    if (c.first > to + 1) return { from: view.snapshotRevision, to, holeAfter: to };
    to = c.last;
  }
  return { from: view.snapshotRevision, to };
}

/** The chunks, in order, that carry a chain from its snapshot to `revision`; undefined when the chain cannot reach it. */
export function chunksToRevision(view: ChainView, revision: number): ChainView['chunks'] | undefined {
  const reach = chainReach(view);
  if (revision < reach.from || revision > reach.to) return undefined;
  const picked: ChainView['chunks'] = [];
  let at = view.snapshotRevision;
  for (const c of view.chunks) {
    if (at >= revision) break;
    if (c.last <= at || c.first > at + 1) continue;
    picked.push(c);
    at = c.last;
  }
  return picked;
}

/** A point to restore to: a revision, a time (RFC 3339), or the newest the archive holds. */
export type PointInTime = { revision: number } | { time: string } | 'newest';

export interface ReachableRange {
  chain: string;
  fromRevision: number;
  toRevision: number;
}

/** Ranges the complete chains reach, oldest first; what a refusal lists as "what can be reached". */
export function reachableRanges(chains: ChainView[]): ReachableRange[] {
  return chains
    .filter((c) => c.complete)
    .map((c) => ({ chain: c.chain, fromRevision: c.snapshotRevision, toRevision: chainReach(c).to }));
}

export type RevisionPlan =
  | { ok: true; chain: string; revision: number; chunks: ChainView['chunks'] }
  | { ok: false; message: string; nearest: number[] };

/**
 * The chain that reaches `revision` with the fewest changes to replay (the newest complete chain whose snapshot
 * is at or before it and whose chunks reach it); else a refusal naming the nearest reachable revisions.
 */
export function planRevision(chains: ChainView[], revision: number): RevisionPlan {
  const complete = chains.filter((c) => c.complete);
  const candidates = complete
    .filter((c) => c.snapshotRevision <= revision)
    .sort((a, b) => b.snapshotRevision - a.snapshotRevision);
  for (const c of candidates) {
    const chunks = chunksToRevision(c, revision);
    if (chunks) return { ok: true, chain: c.chain, revision, chunks };
  }
  const ranges = reachableRanges(chains);
  if (ranges.length === 0) return { ok: false, message: 'the archive holds no complete chain', nearest: [] };
  const below = ranges.filter((r) => r.toRevision < revision).map((r) => r.toRevision);
  const above = ranges.filter((r) => r.fromRevision > revision).map((r) => r.fromRevision);
  const nearest = [
    ...(below.length ? [Math.max(...below)] : []),
    ...(above.length ? [Math.min(...above)] : []),
  ];
  const where =
    revision < Math.min(...ranges.map((r) => r.fromRevision))
      ? 'before the oldest retained point'
      : revision > Math.max(...ranges.map((r) => r.toRevision))
        ? 'after the newest archived point'
        : 'in a gap of the archive';
  // A chain that would reach the point but for a chunk that is not there: say which, so the loss can be traced.
  const holed = candidates.find((c) => chainReach(c).holeAfter !== undefined);
  const hole = holed
    ? `; chain ${holed.chain} has no chunk starting at revision ${chainReach(holed).to + 1} (missing)`
    : '';
  return {
    ok: false,
    message: `revision ${revision} is ${where}; the nearest reachable revisions are ${nearest.join(' and ')}${hole}`,
    nearest,
  };
}

/** The newest revision any complete chain reaches, with that chain; undefined for an empty archive. */
export function newestPoint(chains: ChainView[]): { chain: string; revision: number } | undefined {
  let best: { chain: string; revision: number } | undefined;
  for (const r of reachableRanges(chains))
    if (!best || r.toRevision > best.revision || (r.toRevision === best.revision && r.chain > best.chain))
      best = { chain: r.chain, revision: r.toRevision };
  return best;
}

/**
 * The revision a time reaches: the last change received at or before `time`, looked up in the changes of the chain
 * that spans it. `changeTimes` are the (revision, receivedAt) of a chain's changes in revision order; a time before
 * the chain's snapshot or after `knownUntil` (when the archive last knew it held everything) is not reachable here.
 */
export function revisionAtTime(
  snapshot: { revision: number; time: string },
  changeTimes: Array<{ revision: number; receivedAt: string }>,
  time: string,
  knownUntil: string,
): number | undefined {
  const t = Date.parse(time);
  if (t < Date.parse(snapshot.time) || t > Date.parse(knownUntil)) return undefined;
  let revision = snapshot.revision;
  for (const c of changeTimes) {
    if (Date.parse(c.receivedAt) > t) break;
    revision = Math.max(revision, c.revision);
  }
  return revision;
}

/**
 * Gaps between chains: revisions strictly between one reach's end and the next chain's snapshot. Chains that
 * overlap, or whose next snapshot is the revision right after the reach, leave none.
 */
export function findGaps(chains: ChainView[]): Array<{ afterRevision: number; beforeRevision: number }> {
  const ranges = reachableRanges(chains).sort((a, b) => a.fromRevision - b.fromRevision);
  const gaps: Array<{ afterRevision: number; beforeRevision: number }> = [];
  let reached: number | undefined;
  for (const r of ranges) {
    if (reached !== undefined && r.fromRevision > reached + 1)
      gaps.push({ afterRevision: reached, beforeRevision: r.fromRevision });
    reached = reached === undefined ? r.toRevision : Math.max(reached, r.toRevision);
  }
  return gaps;
}

/**
 * The chains retention may delete, given the oldest time that must stay reachable (now - retention): a chain goes
 * only when a newer complete chain starts at or before that time, so every kept point is reached by a kept chain.
 * An incomplete chain (no manifest) older than the newest such chain is a leftover of a failed start and goes too;
 * the newest chain, complete or not, always stays (the archiver may be writing it).
 */
export function chainsToDelete(chains: ChainView[], keepFrom: string): string[] {
  const cutoff = Date.parse(keepFrom);
  const sorted = [...chains].sort((a, b) => Date.parse(a.snapshotTime) - Date.parse(b.snapshotTime));
  const newest = sorted[sorted.length - 1];
  const anchor = sorted.filter((c) => c.complete && Date.parse(c.snapshotTime) <= cutoff).pop();
  if (!anchor) return [];
  return sorted
    .filter(
      (c) => c !== newest && c !== anchor && Date.parse(c.snapshotTime) < Date.parse(anchor.snapshotTime),
    )
    .map((c) => c.chain);
}

/** What keepContinuousBackup found and did, for the cluster workflow's status.backup, condition and Events. */
export interface ContinuousBackupReport {
  /** What became of the archiver's Deployment on this look. */
  deployment: 'created' | 'replaced' | 'unchanged' | 'deleted' | 'absent' | 'waiting';
  /** The archiver's state object, when the store has one for this cluster. */
  state?: Pick<ArchiveState, 'latestRevision' | 'latestTime' | 'gaps'>;
  /** Why the store could not be read (no secrets in it): the operator cannot tell what is stored. */
  storeProblem?: string;
}
