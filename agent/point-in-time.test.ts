// Point-in-time restore against a real etcd 3.6: an archive made by the archiver, restored to a revision R, holds exactly
// the keys and values `get --rev=R` gave on the source; the newest point likewise; a corrupt chunk fails naming it; a
// missing chunk or a point outside the archive is refused with the nearest points.
import { Etcd3 } from 'etcd3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { AgentError } from './agent-error';
import { buildPointSnapshot, type PointRestoreInput } from './point-in-time';
import { restoreSingleMember, startRestoredEtcd } from './verify';
import { AgentFailureReasons } from '../contracts/agent-result';
import { archiveRoot, chainReach, chainsOfListing } from '../contracts/continuous-backup';
import { binaryPath, cacheRoot, ETCD_TOOLS } from '../localcluster/tool-cache';
import { startLocalEtcd, type LocalEtcd } from '../test/support/local-etcd';
import { MemoryArchiveStore } from '../test/support/memory-archive-store';
import { testArchiver } from '../test/support/test-archiver';

jest.setTimeout(180_000);

const UID = '9d1c2a9e-0b1d-4c55-9a3e-2f0d8e7b1c44';
const PREFIX = 'etcd/src';
const root = archiveRoot(PREFIX, UID);
const env = {
  PATH: `${dirname(binaryPath(cacheRoot(), ETCD_TOOLS['3.6.16'], 'etcd'))}:${process.env.PATH ?? ''}`,
};

let etcd: LocalEtcd;
let client: Etcd3;
let work: string;
const store = new MemoryArchiveStore();
/** The revision noted mid-way, and what the source held at it and at the end. */
let R: number;
let TR: string;
let newest: number;

const ALL = { key: Buffer.from([0]), range_end: Buffer.from([0]) };
async function dump(c: Etcd3, revision?: number): Promise<Record<string, string>> {
  const res = await c.kv.range({ ...ALL, ...(revision ? { revision: String(revision) } : {}) });
  return Object.fromEntries(res.kvs.map((kv) => [kv.key.toString('base64'), kv.value.toString('base64')]));
}

const reach = () => {
  const newestChain = chainsOfListing(root, [...store.objects.keys()])
    .filter((c) => c.complete)
    .pop();
  return newestChain ? chainReach(newestChain).to : 0;
};

async function until(what: string, f: () => boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!f()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'pit-test-'));
  etcd = await startLocalEtcd('pit-etcd-');
  client = new Etcd3({ hosts: etcd.url });
  for (let i = 0; i < 20; i++) await client.put(`before/${i}`).value(`v${i}`);
  const stop = new AbortController();
  const archiver = testArchiver({
    store,
    client,
    etcdUrl: etcd.url,
    workDir: work,
    env,
    clusterUid: UID,
    prefix: PREFIX,
  });
  const running = archiver.run(stop.signal);
  await until('the first chain', () => reach() > 0);
  // Puts, overwrites, deletes, a transaction of several keys and a binary value, then R, then more of the same.
  for (let i = 0; i < 30; i++) await client.put(`k/${i % 7}`).value(`a${i}`);
  await client.delete().key('k/3');
  await client
    .if('k/tx', 'Version', '==', 0)
    .then(
      client.put('k/tx').value('1'),
      client.put('k/tx2').value(Buffer.from([0, 1, 255])),
      client.delete().key('k/4'),
    )
    .commit();
  R = Number((await client.kv.range({ key: Buffer.from('x') })).header.revision);
  // Archived before going on, so the archive has a chunk boundary at R (and at least two chunks).
  await until('the first half archived', () => reach() >= R);
  // A time after every change up to R was received and before any later one: restoring to it reaches R.
  await new Promise((r) => setTimeout(r, 50));
  TR = new Date().toISOString();
  await new Promise((r) => setTimeout(r, 50));
  for (let i = 0; i < 30; i++) await client.put(`k/${i % 5}`).value(`b${i}`);
  await client.delete().prefix('before/');
  newest = Number((await client.kv.range({ key: Buffer.from('x') })).header.revision);
  await until('every change archived', () => reach() >= newest);
  stop.abort();
  await running;
});

afterAll(() => {
  client?.close();
  etcd?.stop();
  rmSync(work, { recursive: true, force: true });
});

const input = (point: PointRestoreInput['point'], s = store, dir = 'w'): PointRestoreInput => ({
  store: s,
  prefix: PREFIX,
  clusterUid: UID,
  point,
  workDir: join(work, dir),
  env,
  signal: new AbortController().signal,
});

/** Restores the point snapshot into a fresh etcd and reads every key. */
async function restoredDump(
  file: string,
  dir: string,
): Promise<{ keys: Record<string, string>; revision: number }> {
  const data = join(work, dir);
  const signal = new AbortController().signal;
  await restoreSingleMember(file, data, env, signal, 60_000);
  const { etcd: restored, first } = await startRestoredEtcd(data, env, signal);
  try {
    const { revision } = first;
    return { keys: await dump(restored.client), revision };
  } finally {
    await restored.stop();
  }
}

async function failure(p: Promise<unknown>): Promise<AgentError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!(e instanceof AgentError)) throw new Error(`expected an AgentError, got ${String(e)}`);
  return e;
}

test('restored to revision R, the new store holds exactly what get --rev=R gave, at revision R', async () => {
  const point = await buildPointSnapshot(input({ revision: R }));
  expect(point.revision).toBe(R);
  const got = await restoredDump(point.file, 'restored-r');
  const want = await dump(client, R);
  expect(Object.keys(want).length).toBeGreaterThan(20);
  expect(got.keys).toEqual(want);
  expect(got.revision).toBe(R);
});

test('restored to the newest point, it holds what the source holds now', async () => {
  const point = await buildPointSnapshot(input('newest', store, 'w2'));
  expect(point.revision).toBe(newest);
  // The time the point stands for: when the archiver received its last change, after the time TR stands between.
  expect(Date.parse(point.time)).toBeGreaterThan(Date.parse(TR));
  const got = await restoredDump(point.file, 'restored-newest');
  expect(got.keys).toEqual(await dump(client));
});

test('a corrupt chunk fails the restore, naming the chunk', async () => {
  const damaged = new MemoryArchiveStore();
  for (const [k, v] of store.objects) damaged.objects.set(k, Buffer.from(v));
  const chunk = [...damaged.objects.keys()].find((k) => k.endsWith('.chunk'))!;
  const bytes = damaged.objects.get(chunk)!;
  bytes[bytes.length - 10] = (bytes[bytes.length - 10] ?? 0) ^ 0x01;
  const e = await failure(buildPointSnapshot(input({ revision: newest }, damaged, 'w3')));
  expect(e.reason).toBe(AgentFailureReasons.ChecksumMismatch);
  expect(e.message).toContain(chunk);
  expect(e.message).toMatch(/corrupt or truncated/);
});

test('a missing chunk makes the points after it unreachable, naming where the chain breaks', async () => {
  const holed = new MemoryArchiveStore();
  for (const [k, v] of store.objects) holed.objects.set(k, v);
  const chunks = [...holed.objects.keys()].filter((k) => k.endsWith('.chunk')).sort();
  expect(chunks.length).toBeGreaterThan(1);
  holed.objects.delete(chunks[0]!);
  const e = await failure(buildPointSnapshot(input({ revision: newest }, holed, 'w4')));
  expect(e.reason).toBe(AgentFailureReasons.InvalidArguments);
  expect(e.message).toMatch(/has no chunk starting at revision \d+ \(missing\)/);
});

test('a point past the newest change is refused with the newest reachable revision', async () => {
  const e = await failure(buildPointSnapshot(input({ revision: newest + 100 }, store, 'w5')));
  expect(e.message).toContain(
    `revision ${newest + 100} is after the newest archived point; the nearest reachable revisions are ${newest}`,
  );
});

test('restored to a time, it reaches the last change received at or before it', async () => {
  const point = await buildPointSnapshot(input({ time: TR }, store, 'w6'));
  expect(point.revision).toBe(R);
  // The point's own time: when revision R arrived, at or before the time asked for.
  expect(Date.parse(point.time)).toBeLessThanOrEqual(Date.parse(TR));
  expect(Date.parse(point.time)).toBeGreaterThan(Date.parse(TR) - 60_000);
  const got = await restoredDump(point.file, 'restored-time');
  expect(got.keys).toEqual(await dump(client, R));
});

test.each([
  ['before the oldest snapshot', '2000-01-01T00:00:00Z', /is before the oldest retained point/],
  [
    'after the newest archived point',
    '2999-01-01T00:00:00Z',
    /is after the newest archived point; the nearest reachable times are /,
  ],
])('a time %s is refused with the reachable times', async (_name, time, message) => {
  const e = await failure(buildPointSnapshot(input({ time }, store, 'w7')));
  expect(e.reason).toBe(AgentFailureReasons.InvalidArguments);
  expect(e.message).toMatch(message);
});
