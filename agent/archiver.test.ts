// The archiver against a real etcd 3.6 and an in-memory store: every change after the snapshot lands in contiguous
// chunks within the lag, a restart goes on from the store's place, a compaction or a store that stays down makes a
// recorded gap and a new chain, a scheduled full snapshot continues without one, and retention keeps what is needed.
import { Etcd3 } from 'etcd3';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { takeFullSnapshot } from './archive-snapshot';
import { Archiver, ARCHIVER_DEFAULTS, type ArchiverSettings } from './archiver';
import { decodeChunk } from './change-chunk';
import {
  archiveRoot,
  chainReach,
  chainsOfListing,
  findGaps,
  manifestKey,
  parseArchiveKey,
  stateKey,
  type ArchiveState,
  type ArchivedChange,
  type ChainManifest,
} from '../contracts/continuous-backup';
import { RESTORE_BUMP_REVISION } from '../contracts/agent-result';
import { binaryPath, cacheRoot, ETCD_TOOLS } from '../localcluster/tool-cache';
import { startLocalEtcd, type LocalEtcd } from '../test/support/local-etcd';
import { MemoryArchiveStore } from '../test/support/memory-archive-store';

jest.setTimeout(120_000);

const execFileAsync = promisify(execFile);

const UID = '0b7e4b1e-7c1f-4f7e-a7a4-1f6c8f3d2a10';
const root = archiveRoot('etcd/src', UID);
const env = {
  PATH: `${dirname(binaryPath(cacheRoot(), ETCD_TOOLS['3.6.16'], 'etcd'))}:${process.env.PATH ?? ''}`,
};
const SETTINGS: ArchiverSettings = {
  ...ARCHIVER_DEFAULTS,
  clusterUid: UID,
  prefix: 'etcd/src',
  fullSnapshotIntervalMs: 3_600_000,
  maxLagMs: 1000,
  retentionMs: 7 * 24 * 3_600_000,
  stateRefreshMs: 500,
  tickMs: 50,
};

let etcd: LocalEtcd;
let client: Etcd3;
let work: string;

beforeEach(async () => {
  work = mkdtempSync(join(tmpdir(), 'archiver-test-'));
  etcd = await startLocalEtcd('archiver-etcd-');
  client = new Etcd3({ hosts: etcd.url });
});

afterEach(() => {
  client?.close();
  etcd?.stop();
  rmSync(work, { recursive: true, force: true });
});

interface Running {
  archiver: Archiver;
  logs: string[];
  stop(): Promise<void>;
}

/** The running archiver's log, for the message of a wait that timed out. */
let lastLogs: string[] = [];

function start(store: MemoryArchiveStore, settings: Partial<ArchiverSettings> = {}): Running {
  const logs: string[] = [];
  lastLogs = logs;
  const archiver = new Archiver(
    { ...SETTINGS, ...settings },
    {
      store,
      etcd: client,
      fullSnapshot: (signal) => takeFullSnapshot(etcd.url, undefined, join(work, 'snap'), env, signal),
      now: () => Date.now(),
      log: (line) => logs.push(line),
    },
  );
  const stop = new AbortController();
  const done = archiver.run(stop.signal);
  return {
    archiver,
    logs,
    stop: async () => {
      stop.abort();
      await done;
    },
  };
}

async function until<T>(
  what: string,
  f: () => T | undefined | false | Promise<T | undefined | false>,
  ms = 30_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; archiver said: ${lastLogs.join(' | ')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const revisionOf = async () => Number((await client.kv.range({ key: Buffer.from('x') })).header.revision);

/** Every change in a chain's chunks, decoded (checksums checked), in revision order. */
function changesOf(store: MemoryArchiveStore, chain: string): ArchivedChange[] {
  const view = chainsOfListing(root, [...store.objects.keys()]).find((c) => c.chain === chain)!;
  const out: ArchivedChange[] = [];
  for (const c of view.chunks) {
    const { changes } = decodeChunk(c.key, store.objects.get(c.key)!, {
      clusterUid: UID,
      chain,
      first: c.first,
      last: c.last,
    });
    out.push(...changes.filter((x) => x.revision > (out[out.length - 1]?.revision ?? 0)));
  }
  return out;
}

const chains = (store: MemoryArchiveStore) => chainsOfListing(root, [...store.objects.keys()]);
const stateOf = (store: MemoryArchiveStore) =>
  JSON.parse(store.objects.get(stateKey(root))?.toString('utf8') ?? 'null') as ArchiveState | null;
const manifestOf = (store: MemoryArchiveStore, chain: string) =>
  JSON.parse(store.objects.get(manifestKey(root, chain))!.toString('utf8')) as ChainManifest;
const reachOf = (store: MemoryArchiveStore) => {
  const newest = chains(store)
    .filter((c) => c.complete)
    .pop();
  return newest ? chainReach(newest).to : 0;
};

test('every change after the full snapshot reaches the store within the lag, contiguous, with what etcd had', async () => {
  const store = new MemoryArchiveStore();
  for (let i = 0; i < 5; i++) await client.put(`before/${i}`).value(`v${i}`);
  const a = start(store);
  await until('the first chain', () => chains(store).some((c) => c.complete));
  const [first] = chains(store);
  expect(manifestOf(store, first!.chain)).toMatchObject({
    cause: 'first',
    snapshotRevision: 6,
    clusterUid: UID,
  });

  const lease = client.lease(60, { autoKeepAlive: false });
  const leaseId = await lease.grant();
  await client.put('k/a').value('1');
  await client.put('k/b').value(Buffer.from([0, 255, 7]));
  await client.put('k/lease').value('leased').lease(leaseId);
  await client.delete().key('k/a');
  await client
    .if('k/tx1', 'Version', '==', 0)
    .then(client.put('k/tx1').value('one'), client.put('k/tx2').value('two'))
    .commit();
  const wroteAt = Date.now();
  const revision = await revisionOf();
  await until('the changes in the store', () => reachOf(store) >= revision);
  // maxLag 1 s, plus the tick; generous for a loaded machine, and still far from what a missing flush would take.
  expect(Date.now() - wroteAt).toBeLessThan(3000);

  const changes = changesOf(store, first!.chain);
  expect(changes[0]!.revision).toBe(7);
  expect(changes[changes.length - 1]!.revision).toBe(revision);
  for (const c of changes) {
    const kv = await client.kv.range({ key: Buffer.from(c.key, 'base64'), revision: String(c.revision) });
    if (c.type === 'put') expect(kv.kvs[0]?.value.toString('base64')).toBe(c.value);
    else expect(kv.kvs).toHaveLength(0);
  }
  // The lease id, and on this first put naming it, the lease's granted TTL (what a restore grants it with).
  expect(changes.find((c) => Buffer.from(c.key, 'base64').toString() === 'k/lease')).toMatchObject({
    lease: leaseId,
    leaseTtl: 60,
  });
  expect(changes.filter((c) => c.leaseTtl !== undefined)).toHaveLength(1);
  // The transaction's two puts share one revision.
  const tx = changes.filter((c) => Buffer.from(c.key, 'base64').toString().startsWith('k/tx'));
  expect(tx.map((c) => c.revision)).toEqual([revision, revision]);

  await until('the state at the newest revision', () => stateOf(store)?.latestRevision === revision);
  expect(stateOf(store)).toMatchObject({ chain: first!.chain, gaps: [] });
  await a.stop();
  await lease.revoke();
});

test('a restarted archiver goes on from the last uploaded revision, read from the store, with no new chain', async () => {
  const store = new MemoryArchiveStore();
  const a = start(store);
  await until('the first chain', () => chains(store).some((c) => c.complete));
  await client.put('k/1').value('1');
  await until('k/1 archived', async () => reachOf(store) >= (await revisionOf()));
  await a.stop();

  for (let i = 0; i < 20; i++) await client.put(`while-down/${i}`).value(String(i));
  const b = start(store);
  const revision = await revisionOf();
  await until('the writes made while it was down', () => reachOf(store) >= revision);
  await b.stop();
  expect(chains(store)).toHaveLength(1);
  expect(findGaps(chains(store))).toEqual([]);
  // An empty etcd is at revision 1: the snapshot holds 1, k/1 is 2, the writes while it was down 3..22.
  expect(b.logs[0]).toMatch(/^resuming chain 0000000000000001-\S+ after revision 2$/);
  const changes = changesOf(store, chains(store)[0]!.chain);
  expect(revision).toBe(22);
  expect(changes.map((c) => c.revision)).toEqual(Array.from({ length: 21 }, (_, i) => i + 2));
});

test('a watch that falls behind a compaction records the gap and starts a new chain with a full snapshot', async () => {
  const store = new MemoryArchiveStore();
  const a = start(store);
  await until('the first chain', () => chains(store).some((c) => c.complete));
  await client.put('k/1').value('1');
  const archived = await revisionOf();
  await until('k/1 archived', () => reachOf(store) >= archived);
  await a.stop();

  for (let i = 0; i < 10; i++) await client.put(`lost/${i}`).value(String(i));
  const compactAt = await revisionOf();
  await client.kv.compact({ revision: String(compactAt), physical: true });
  const b = start(store);
  await until('a second chain', () => chains(store).filter((c) => c.complete).length === 2);
  await client.put('after').value('x');
  const revision = await revisionOf();
  await until('the change after the gap', () => reachOf(store) >= revision);
  await until('the gap in the state', () => (stateOf(store)?.gaps.length ?? 0) > 0);
  await b.stop();

  const [, second] = chains(store);
  expect(manifestOf(store, second!.chain)).toMatchObject({ cause: 'gap', snapshotRevision: compactAt });
  expect(stateOf(store)!.gaps).toEqual([
    expect.objectContaining({ afterRevision: archived, beforeRevision: compactAt, reason: 'compacted' }),
  ]);
  expect(findGaps(chains(store))).toEqual([{ afterRevision: archived, beforeRevision: compactAt }]);
  expect(b.logs.some((l) => /^gap: revision \d+ was compacted/.test(l))).toBe(true);
});

test('a cluster rolled back under a running archiver (restored, revisions bumped, marked compacted) gets a new chain after a gap; nothing after the rollback is lost', async () => {
  const store = new MemoryArchiveStore();
  const a = start(store);
  await until('the first chain', () => chains(store).some((c) => c.complete));
  for (let i = 0; i < 5; i++) await client.put(`before/${i}`).value(String(i));
  // The point the rollback returns to: a snapshot file, as the Rebuild's restore init container gets it.
  const point = await takeFullSnapshot(
    etcd.url,
    undefined,
    join(work, 'point'),
    env,
    new AbortController().signal,
  );
  for (let i = 0; i < 10; i++) await client.put(`given-up/${i}`).value(String(i));
  const archived = await revisionOf();
  await until('the writes before the rollback archived', () => reachOf(store) >= archived);

  // The rollback: the member's data replaced by the point, revisions bumped as agent/restore.ts bumps them, at the
  // same URLs, while the archiver keeps running.
  const { ports, peerUrl } = etcd;
  etcd.stop();
  const dataDir = join(work, 'rolled-back');
  await execFileAsync(binaryPath(cacheRoot(), ETCD_TOOLS['3.6.16'], 'etcdutl'), [
    'snapshot',
    'restore',
    point.path,
    `--data-dir=${dataDir}`,
    '--name=a',
    `--initial-cluster=a=${peerUrl}`,
    `--initial-advertise-peer-urls=${peerUrl}`,
    `--bump-revision=${RESTORE_BUMP_REVISION}`,
    '--mark-compacted',
  ]);
  await point.discard();
  etcd = await startLocalEtcd('archiver-rolled-back-', 60_000, { ports, dataDir });
  // The client's circuit breaker opened while etcd was down (the archiver's too): it answers again after a while.
  await until(
    'a write after the rollback',
    () =>
      client
        .put('after-rollback')
        .value('x')
        .then(
          () => true,
          () => false,
        ),
    60_000,
  );
  expect(await revisionOf()).toBeGreaterThan(RESTORE_BUMP_REVISION);
  await until('a second chain', () => chains(store).filter((c) => c.complete).length === 2, 60_000);
  await client.put('on-the-new-chain').value('y');
  const revision = await revisionOf();
  await until('the write on the new chain archived', () => reachOf(store) >= revision, 60_000);
  await until('the gap in the state', () => (stateOf(store)?.gaps.length ?? 0) > 0);
  await a.stop();

  const [first, second] = chains(store);
  const manifest = manifestOf(store, second!.chain);
  expect(manifest.cause).toBe('gap');
  expect(manifest.snapshotRevision).toBeGreaterThan(RESTORE_BUMP_REVISION);
  // The old chain keeps the timeline up to the rollback; the new one starts past every revision of it.
  expect(chainReach(first!).to).toBe(archived);
  expect(stateOf(store)!.gaps).toEqual([
    expect.objectContaining({ afterRevision: archived, reason: 'compacted' }),
  ]);
  const keysAfter = changesOf(store, second!.chain).map((c) => Buffer.from(c.key, 'base64').toString());
  expect(keysAfter).toContain('on-the-new-chain');
  // The first write after the rollback is in the new chain: in its full snapshot, or among its changes.
  const afterRollback = await client.kv.range({ key: Buffer.from('after-rollback') });
  const modRevision = Number(afterRollback.kvs[0]?.mod_revision);
  expect(modRevision <= manifest.snapshotRevision || keysAfter.includes('after-rollback')).toBe(true);
});

test('a store that refuses writes briefly loses nothing; one that stays down past the buffer makes a gap', async () => {
  const store = new MemoryArchiveStore();
  const a = start(store, { maxBufferBytes: 20_000 });
  await until('the first chain', () => chains(store).some((c) => c.complete));

  store.failWrites = new Error('503 SlowDown');
  await client.put('brief/1').value('1');
  await new Promise((r) => setTimeout(r, 1500));
  expect(a.logs.some((l) => /store refused chunk \d+\.\.\d+: 503 SlowDown; keeping it/.test(l))).toBe(true);
  store.failWrites = undefined;
  const revision = await revisionOf();
  await until('the kept change', () => reachOf(store) >= revision);
  expect(findGaps(chains(store))).toEqual([]);

  store.failWrites = new Error('bucket gone');
  for (let i = 0; i < 200; i++) await client.put(`lost/${i}`).value('x'.repeat(100));
  await until('the gap', () => a.logs.some((l) => /^gap: the store refused writes since/.test(l)));
  store.failWrites = undefined;
  await until('a second chain', () => chains(store).filter((c) => c.complete).length === 2);
  await until('the gap in the state', () => (stateOf(store)?.gaps.length ?? 0) > 0);
  await a.stop();
  expect(stateOf(store)!.gaps).toEqual([
    expect.objectContaining({ afterRevision: revision, reason: 'store' }),
  ]);
  const [gap] = findGaps(chains(store));
  expect(gap?.afterRevision).toBe(revision);
});

test('a scheduled full snapshot starts a new chain that continues the old one with no gap, and retention drops old chains', async () => {
  const store = new MemoryArchiveStore();
  const a = start(store, { fullSnapshotIntervalMs: 1500, retentionMs: 2500 });
  const writer = (async () => {
    for (let i = 0; i < 400 && chains(store).filter((c) => c.complete).length < 4; i++) {
      await client.put(`w/${i % 10}`).value(String(i));
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  await writer;
  const revision = await revisionOf();
  await until('the last writes', () => reachOf(store) >= revision);
  await a.stop();

  const all = chains(store);
  // Each kept chain starts where the one before reaches, so every revision from the oldest kept snapshot on is reachable.
  expect(findGaps(all)).toEqual([]);
  expect(
    all
      .filter((c) => c.complete)
      .slice(1)
      .every((c) => manifestOf(store, c.chain).cause === 'scheduled'),
  ).toBe(true);
  for (const c of all.filter((x) => x.complete)) {
    const changes = changesOf(store, c.chain);
    if (changes.length === 0) continue;
    expect(changes[0]!.revision).toBe(c.snapshotRevision + 1);
    changes.forEach((x, i) => i > 0 && expect(x.revision - changes[i - 1]!.revision).toBeLessThanOrEqual(1));
  }
  // Four or more chains were made in ~6 s with a 2.5 s window: the oldest went, whole (no object of it is left).
  expect(a.logs.some((l) => /^retention: deleted chain/.test(l))).toBe(true);
  const deleted = a.logs.filter((l) => l.startsWith('retention')).map((l) => /chain (\S+)/.exec(l)![1]!);
  for (const chain of deleted)
    expect(
      [...store.objects.keys()].filter(
        (k) => parseArchiveKey(root, k)?.kind !== 'state' && k.includes(chain),
      ),
    ).toEqual([]);
});
