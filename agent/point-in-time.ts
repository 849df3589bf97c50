// Point-in-time restore, the agent's half: from a continuous backup, builds a snapshot file of the store exactly at a
// revision. It restores the nearest full snapshot at or before the point into a throwaway etcd on loopback, replays the
// chunks up to the point (each source revision as one transaction, so the replayed store reaches the same revision
// numbers), checks it arrived at exactly that revision, and streams a snapshot of it. The member's own restore then
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
import { ChunkError, decodeChunk } from './change-chunk';
import { takeSnapshot } from './snapshot';
import { etcdutl, etcdutlTimeoutMs, firstRead, freePort, startEtcd, type RunningEtcd } from './verify';
import { AgentFailureReasons } from '../contracts/agent-result';
import {
  archiveRoot,
  chainsOfListing,
  manifestKey,
  newestPoint,
  planRevision,
  snapshotKey,
  type ArchivedChange,
  type ChainManifest,
} from '../contracts/continuous-backup';

export interface PointSnapshot {
  /** A snapshot file (with etcd's hash trailer) of the store at `revision`. */
  file: string;
  sha256: string;
  size: number;
  revision: number;
  chain: string;
}

export interface PointRestoreInput {
  store: ArchiveStore;
  prefix: string;
  clusterUid: string;
  point: { revision: number } | 'newest';
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

/** Applies one source revision's changes in one transaction; the store must then be at exactly that revision. */
async function applyRevision(client: Etcd3, changes: ArchivedChange[]): Promise<void> {
  const revision = changes[0]!.revision;
  const ops = changes.map((c) =>
    c.type === 'put'
      ? { request_put: { key: Buffer.from(c.key, 'base64'), value: Buffer.from(c.value ?? '', 'base64') } }
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

export async function buildPointSnapshot(input: PointRestoreInput): Promise<PointSnapshot> {
  const { store, workDir, env, signal } = input;
  const root = archiveRoot(input.prefix, input.clusterUid);
  const where = `${store.where}/${root}`;
  const chains = chainsOfListing(root, await store.list(root));
  const target = input.point === 'newest' ? newestPoint(chains)?.revision : input.point.revision;
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

    const [clientPort, peerPort] = [await freePort(), await freePort()];
    const peer = `http://127.0.0.1:${peerPort}`;
    await etcdutl(
      [
        'snapshot',
        'restore',
        base,
        '--data-dir',
        dataDir,
        '--name',
        'verify',
        '--initial-cluster',
        `verify=${peer}`,
        '--initial-advertise-peer-urls',
        peer,
      ],
      env,
      signal,
      etcdutlTimeoutMs(manifest.snapshotSize),
    );
    await rm(base, { force: true });
    etcd = startEtcd(dataDir, clientPort, peerPort, env);
    const start = await firstRead(etcd, signal);
    if (start.revision !== manifest.snapshotRevision)
      throw fail(
        'SnapshotCorrupt',
        `${store.where}/${snapKey} restores to revision ${start.revision}, its manifest says ${manifest.snapshotRevision}`,
      );

    for (const c of plan.chunks) {
      if (signal.aborted)
        throw fail('DestinationUnavailable', `stopped by ${String(signal.reason ?? 'a signal')}`);
      const bytes = await store.get(c.key);
      if (!bytes) throw fail('SourceNotFound', `chunk ${store.where}/${c.key} is missing`);
      let changes: ArchivedChange[];
      try {
        changes = decodeChunk(`${store.where}/${c.key}`, bytes, {
          clusterUid: input.clusterUid,
          chain: plan.chain,
          first: c.first,
          last: c.last,
        }).changes;
      } catch (e) {
        throw e instanceof ChunkError ? fail('ChecksumMismatch', e.message) : e;
      }
      // A chunk may overlap what earlier ones applied (a retried upload cut differently): only what is new counts.
      const reached = Number(
        (await etcd.client.kv.range({ key: Buffer.from([0]), count_only: true })).header.revision,
      );
      let i = 0;
      while (i < changes.length) {
        const revision = changes[i]!.revision;
        let j = i;
        while (j < changes.length && changes[j]!.revision === revision) j++;
        if (revision > reached && revision <= target) await applyRevision(etcd.client, changes.slice(i, j));
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
        endpoint: `http://127.0.0.1:${clientPort}`,
        destination: { kind: 'file', path: out },
        uri: `file://${out}`,
        resultFile: join(workDir, 'unused-result'),
      },
      {},
      signal,
    );
    return { file: out, sha256: artifact.sha256, size: artifact.size, revision: target, chain: plan.chain };
  } catch (e) {
    await rm(out, { force: true }).catch(() => undefined);
    throw e instanceof AgentError
      ? e
      : fail('DestinationUnavailable', `point-in-time restore from ${where} failed: ${describe(e)}`);
  } finally {
    await etcd?.stop().catch(() => undefined);
    await rm(base, { force: true }).catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true }).catch(() => undefined);
  }
}
