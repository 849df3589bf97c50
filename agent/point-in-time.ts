// Point-in-time restore, the agent's half: from a continuous backup, builds a snapshot file of the store exactly at a
// revision. It restores the nearest full snapshot at or before the point into a throwaway etcd on loopback, replays the
// chunks up to the point (each source revision as one transaction, so the replayed store reaches the same revision
// numbers; puts keep their leases, lease-replay.ts), checks it arrived at exactly that revision, and streams a snapshot of it. The member's own restore then
// takes that file like any other snapshot.
//
// Invariant: nothing is replayed from a chunk that does not prove itself (checksum, names, contiguity); a missing or
// corrupt chunk fails the restore naming its object, and a point the archive cannot reach is refused with the nearest.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Etcd3 } from 'etcd3';
import { AgentError, describe } from './agent-error';
import type { ArchiveStore } from './archive-store';
import { ChunkError, decodeChunk, type Chunk } from './change-chunk';
import { LeaseReplay, type LeaseReplayResult } from './lease-replay';
import { takeSnapshot } from './snapshot';
import { etcdutlTimeoutMs, restoreSingleMember, startRestoredEtcd, type RunningEtcd } from './verify';
import { AgentFailureReasons } from '../contracts/agent-result';
import {
  archiveRoot,
  chainReach,
  chainsOfListing,
  manifestKey,
  newestPoint,
  planRevision,
  revisionAtTime,
  snapshotKey,
  stateKey,
  type ArchiveState,
  type ArchivedChange,
  type ChainManifest,
  type ChainView,
} from '../contracts/continuous-backup';

export interface PointSnapshot {
  /** A snapshot file (with etcd's hash trailer) of the store at `revision`. */
  file: string;
  sha256: string;
  size: number;
  revision: number;
  /**
   * RFC 3339: when the archiver received the change at `revision` (the chain's snapshot time when the point is the
   * snapshot itself): the time the point stands for.
   */
  time: string;
  chain: string;
  /** What became of the leases the replayed puts named. */
  leases: LeaseReplayResult;
}

export interface PointRestoreInput {
  store: ArchiveStore;
  prefix: string;
  clusterUid: string;
  point: { revision: number } | { time: string } | 'newest';
  workDir: string;
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
}

const fail = (reason: keyof typeof AgentFailureReasons, message: string) =>
  new AgentError(AgentFailureReasons[reason], message);

async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Applies one source revision's changes in one transaction, each put with its lease from `leases` ('0': none); the
 * store must then be at exactly that revision (granting a lease does not move it).
 */
async function applyRevision(client: Etcd3, changes: ArchivedChange[], leases: string[]): Promise<void> {
  const revision = changes[0]!.revision;
  const ops = changes.map((c, i) =>
    c.type === 'put'
      ? {
          request_put: {
            key: Buffer.from(c.key, 'base64'),
            value: Buffer.from(c.value ?? '', 'base64'),
            ...(leases[i] !== '0' ? { lease: leases[i] } : {}),
          },
        }
      : { request_delete_range: { key: Buffer.from(c.key, 'base64') } },
  );
  const res = await client.kv.txn({ compare: [], success: ops, failure: [] });
  const reached = Number(res.header.revision);
  if (reached !== revision)
    throw fail(
      'SnapshotCorrupt',
      `replaying revision ${revision} left the store at revision ${reached}: the archive does not match its snapshot`,
    );
}

/** Decodes a chain's chunk, turning damage into ChecksumMismatch naming the object. */
async function readChunk(
  store: ArchiveStore,
  clusterUid: string,
  chain: string,
  c: ChainView['chunks'][number],
): Promise<Chunk> {
  const bytes = await store.get(c.key);
  if (!bytes) throw fail('SourceNotFound', `chunk ${store.where}/${c.key} is missing`);
  try {
    return decodeChunk(`${store.where}/${c.key}`, bytes, { clusterUid, chain, first: c.first, last: c.last });
  } catch (e) {
    throw e instanceof ChunkError ? fail('ChecksumMismatch', e.message) : e;
  }
}

/**
 * The revision a time reaches: in the newest complete chain whose snapshot is at or before it, the last change
 * received at or before the time, provided the chain was known to hold everything until then (a chunk's cut time, or
 * for the newest chain the archiver's state). Else refused with the times that can be reached.
 */
async function revisionOfTime(
  store: ArchiveStore,
  root: string,
  chains: ChainView[],
  clusterUid: string,
  time: string,
): Promise<number> {
  const t = Date.parse(time);
  if (Number.isNaN(t)) throw fail('InvalidArguments', `${JSON.stringify(time)} is not a time`);
  const complete = chains.filter((c) => c.complete);
  const candidate = complete.filter((c) => Date.parse(c.snapshotTime) <= t).pop();
  const oldest = complete[0];
  if (!candidate)
    throw fail(
      'InvalidArguments',
      oldest
        ? `${time} is before the oldest retained point (${oldest.snapshotTime})`
        : `${store.where}/${root} holds no complete chain`,
    );
  const changeTimes: Array<{ revision: number; receivedAt: string }> = [];
  let knownUntil = candidate.snapshotTime;
  const reach = chainReach(candidate).to;
  for (const c of candidate.chunks) {
    if (c.first > reach) break;
    const { header, changes } = await readChunk(store, clusterUid, candidate.chain, c);
    if (Date.parse(header.closedAt) > Date.parse(knownUntil)) knownUntil = header.closedAt;
    for (const ch of changes) changeTimes.push({ revision: ch.revision, receivedAt: ch.receivedAt });
    if (changes.some((ch) => Date.parse(ch.receivedAt) > t)) break;
  }
  const stateBytes = await store.get(stateKey(root));
  if (stateBytes) {
    const state = JSON.parse(stateBytes.toString('utf8')) as ArchiveState;
    if (state.chain === candidate.chain && Date.parse(state.latestTime) > Date.parse(knownUntil))
      knownUntil = state.latestTime;
  }
  const revision = revisionAtTime(
    { revision: candidate.snapshotRevision, time: candidate.snapshotTime },
    changeTimes,
    time,
    knownUntil,
  );
  if (revision === undefined) {
    const next = complete.find((c) => Date.parse(c.snapshotTime) > t);
    throw fail(
      'InvalidArguments',
      `${time} is ${next ? 'in a gap of the archive' : 'after the newest archived point'}; the nearest reachable times are ${knownUntil}${next ? ` and ${next.snapshotTime}` : ''}`,
    );
  }
  return revision;
}

export async function buildPointSnapshot(input: PointRestoreInput): Promise<PointSnapshot> {
  const { store, workDir, env, signal } = input;
  const root = archiveRoot(input.prefix, input.clusterUid);
  const where = `${store.where}/${root}`;
  const chains = chainsOfListing(root, await store.list(root));
  const target =
    input.point === 'newest'
      ? newestPoint(chains)?.revision
      : 'time' in input.point
        ? await revisionOfTime(store, root, chains, input.clusterUid, input.point.time)
        : input.point.revision;
  if (target === undefined)
    throw fail(
      'SourceNotFound',
      `${where} holds no complete chain (no continuous backup of cluster ${input.clusterUid})`,
    );
  const plan = planRevision(chains, target);
  if (!plan.ok)
    throw fail('InvalidArguments', `cannot restore ${where} to revision ${target}: ${plan.message}`);

  await mkdir(workDir, { recursive: true });
  const base = join(workDir, 'base.db');
  const dataDir = join(workDir, 'replay');
  const out = join(workDir, 'point.db');
  await rm(dataDir, { recursive: true, force: true });
  let etcd: RunningEtcd | undefined;
  let leases: LeaseReplay | undefined;
  try {
    const manifestBytes = await store.get(manifestKey(root, plan.chain));
    if (!manifestBytes) throw fail('SourceNotFound', `${where}${plan.chain}/chain.json is missing`);
    const manifest = JSON.parse(manifestBytes.toString('utf8')) as ChainManifest;
    const snapKey = snapshotKey(root, plan.chain);
    if (!(await store.download(snapKey, base)))
      throw fail('SourceNotFound', `${store.where}/${snapKey} is missing`);
    const sha = await sha256OfFile(base);
    if (sha !== manifest.snapshotSha256)
      throw fail(
        'ChecksumMismatch',
        `${store.where}/${snapKey} has sha256 ${sha}, its manifest says ${manifest.snapshotSha256}`,
      );

    await restoreSingleMember(base, dataDir, env, signal, etcdutlTimeoutMs(manifest.snapshotSize));
    await rm(base, { force: true });
    const started = await startRestoredEtcd(dataDir, env, signal);
    etcd = started.etcd;
    const start = started.first;
    if (start.revision !== manifest.snapshotRevision)
      throw fail(
        'SnapshotCorrupt',
        `${store.where}/${snapKey} restores to revision ${start.revision}, its manifest says ${manifest.snapshotRevision}`,
      );

    leases = await LeaseReplay.start(etcd.client);
    let time = manifest.snapshotTime;
    for (const c of plan.chunks) {
      if (signal.aborted)
        throw fail('DestinationUnavailable', `stopped by ${String(signal.reason ?? 'a signal')}`);
      const { changes } = await readChunk(store, input.clusterUid, plan.chain, c);
      leases.learn(changes);
      // A chunk may overlap what earlier ones applied (a retried upload cut differently): only what is new counts.
      const reached = Number(
        (await etcd.client.kv.range({ key: Buffer.from([0]), count_only: true })).header.revision,
      );
      let i = 0;
      while (i < changes.length) {
        const revision = changes[i]!.revision;
        let j = i;
        while (j < changes.length && changes[j]!.revision === revision) j++;
        if (revision <= target) time = changes[j - 1]!.receivedAt;
        if (revision > reached && revision <= target) {
          const group = changes.slice(i, j);
          await applyRevision(etcd.client, group, await leases.leasesFor(group));
        }
        i = j;
      }
    }
    const end = Number(
      (await etcd.client.kv.range({ key: Buffer.from([0]), count_only: true })).header.revision,
    );
    if (end !== target) throw fail('SnapshotCorrupt', `the replay ended at revision ${end}, not ${target}`);

    const { artifact } = await takeSnapshot(
      {
        command: 'snapshot',
        endpoint: etcd.clientURL,
        destination: { kind: 'file', path: out },
        uri: `file://${out}`,
        resultFile: join(workDir, 'unused-result'),
      },
      {},
      signal,
    );
    return {
      file: out,
      sha256: artifact.sha256,
      size: artifact.size,
      revision: target,
      time,
      chain: plan.chain,
      leases: leases.result,
    };
  } catch (e) {
    await rm(out, { force: true }).catch(() => undefined);
    throw e instanceof AgentError
      ? e
      : fail('DestinationUnavailable', `point-in-time restore from ${where} failed: ${describe(e)}`);
  } finally {
    // Kept alive until the point's snapshot was taken: a lease expiring before would have moved the revision.
    await leases?.stop();
    await etcd?.stop().catch(() => undefined);
    await rm(base, { force: true }).catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true }).catch(() => undefined);
  }
}
