// The continuous backup's objects in the store, as the archiver writes them: a chain (full snapshot, then its
// manifest), its chunks, the state object, and retention. No watch and no buffer here: these calls only read and
// write the store, so the archiver's loop (archiver.ts) keeps just its place and its timing.
import type { ArchiveStore } from './archive-store';
import type { FullSnapshot } from './archive-snapshot';
import { encodeChunk } from './change-chunk';
import {
  chainId,
  chainPrefix,
  chainsOfListing,
  chainsToDelete,
  chunkKey,
  CONTINUOUS_FORMAT,
  manifestKey,
  snapshotKey,
  stateKey,
  type ArchiveGap,
  type ArchiveState,
  type ArchivedChange,
  type ChainManifest,
} from '../contracts/continuous-backup';

export interface CurrentChain {
  chain: string;
  snapshotRevision: number;
  startedAt: number;
}

/** One cluster's archive: `root` is `<prefix>/continuous/<uid>`. */
export interface ArchiveAt {
  store: ArchiveStore;
  root: string;
  clusterUid: string;
}

export const iso = (ms: number) => new Date(ms).toISOString();

/** The state object, or undefined when it is missing, unreadable or another cluster's. */
export async function readArchiveState(a: ArchiveAt): Promise<ArchiveState | undefined> {
  const bytes = await a.store.get(stateKey(a.root));
  if (!bytes) return undefined;
  try {
    const s = JSON.parse(bytes.toString('utf8')) as ArchiveState;
    return s.format === CONTINUOUS_FORMAT && s.clusterUid === a.clusterUid ? s : undefined;
  } catch {
    return undefined;
  }
}

export async function writeArchiveState(a: ArchiveAt, state: Omit<ArchiveState, 'format' | 'clusterUid'>) {
  const full: ArchiveState = { format: CONTINUOUS_FORMAT, clusterUid: a.clusterUid, ...state };
  await a.store.put(stateKey(a.root), Buffer.from(`${JSON.stringify(full)}\n`));
}

/** Uploads a full snapshot, then its manifest: from then on the chain exists. The snapshot file is always discarded. */
export async function uploadChain(
  a: ArchiveAt,
  snapshot: FullSnapshot,
  cause: ChainManifest['cause'],
): Promise<CurrentChain> {
  try {
    const chain = chainId(snapshot.revision, snapshot.takenAt);
    await a.store.putFile(snapshotKey(a.root, chain), snapshot.path);
    const manifest: ChainManifest = {
      format: CONTINUOUS_FORMAT,
      clusterUid: a.clusterUid,
      chain,
      snapshotRevision: snapshot.revision,
      snapshotTime: snapshot.takenAt,
      snapshotSha256: snapshot.sha256,
      snapshotSize: snapshot.size,
      etcdVersion: snapshot.etcdVersion,
      cause,
    };
    await a.store.put(manifestKey(a.root, chain), Buffer.from(`${JSON.stringify(manifest)}\n`));
    return { chain, snapshotRevision: snapshot.revision, startedAt: Date.parse(snapshot.takenAt) };
  } finally {
    await snapshot.discard();
  }
}

export async function putChunk(
  a: ArchiveAt,
  chain: CurrentChain,
  changes: ArchivedChange[],
  closedAt: string,
): Promise<void> {
  const { bytes, header } = encodeChunk({ clusterUid: a.clusterUid, chain: chain.chain, closedAt }, changes);
  await a.store.put(chunkKey(a.root, chain.chain, header.first, header.last), bytes);
}

/**
 * Deletes whole chains older than the retention window that no kept point needs; returns the gaps still worth
 * reporting (those after the oldest kept chain's snapshot).
 */
export async function applyRetention(
  a: ArchiveAt,
  keepFrom: string,
  gaps: ArchiveGap[],
  log: (line: string) => void,
): Promise<ArchiveGap[]> {
  const chains = chainsOfListing(a.root, await a.store.list(a.root));
  const doomed = new Set(chainsToDelete(chains, keepFrom));
  for (const chain of doomed) {
    const keys = await a.store.list(chainPrefix(a.root, chain));
    // The manifest first: a chain without one is never used, so a deletion cut short leaves nothing usable half-gone.
    const manifest = manifestKey(a.root, chain);
    await a.store.delete(keys.filter((k) => k === manifest));
    await a.store.delete(keys.filter((k) => k !== manifest));
    log(`retention: deleted chain ${chain} (${keys.length} objects)`);
  }
  const oldestKept = chains.filter((c) => c.complete && !doomed.has(c.chain))[0];
  return oldestKept ? gaps.filter((g) => g.beforeRevision > oldestKept.snapshotRevision) : gaps;
}
