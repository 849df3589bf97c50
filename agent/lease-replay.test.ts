// Leases of replayed keys. What a replayed change does about its lease, as a table (attach to a lease the throwaway etcd
// has, grant one the archiver recorded, restore without a lease one that was gone or never recorded); then against a
// real etcd 3.6, an archive restored to a point: keys keep their leases with the same id and granted TTL.
import { Etcd3 } from 'etcd3';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { LeaseReplay, leaseStep, type LeaseStep } from './lease-replay';
import { buildPointSnapshot } from './point-in-time';
import { restoreSingleMember, startRestoredEtcd } from './verify';
import {
  archiveRoot,
  chainReach,
  chainsOfListing,
  LEASE_GONE,
  type ArchivedChange,
} from '../contracts/continuous-backup';
import { binaryPath, cacheRoot, ETCD_TOOLS } from '../localcluster/tool-cache';
import { startLocalEtcd, type LocalEtcd } from '../test/support/local-etcd';
import { MemoryArchiveStore } from '../test/support/memory-archive-store';
import { testArchiver } from '../test/support/test-archiver';

jest.setTimeout(180_000);

type Given = Pick<ArchivedChange, 'type' | 'lease'>;

test.each<[string, Given, boolean, number | undefined, LeaseStep]>([
  [
    'a put without a lease is replayed without one',
    { type: 'put', lease: '0' },
    false,
    undefined,
    { kind: 'none' },
  ],
  ['a delete has nothing to do with leases', { type: 'delete', lease: '7' }, false, 30, { kind: 'none' }],
  [
    'a put naming a lease the snapshot holds is attached to it, whatever was recorded',
    { type: 'put', lease: '7' },
    true,
    undefined,
    { kind: 'attach' },
  ],
  [
    'a put naming a lease granted earlier in the replay is attached to it',
    { type: 'put', lease: '7' },
    true,
    30,
    { kind: 'attach' },
  ],
  [
    'a put naming a lease the replay does not have yet grants it with the recorded TTL',
    { type: 'put', lease: '7' },
    false,
    30,
    { kind: 'grant', ttl: 30 },
  ],
  [
    'a put naming a lease that was gone when the archiver first saw it is restored without a lease',
    { type: 'put', lease: '7' },
    false,
    LEASE_GONE,
    { kind: 'without', why: 'gone' },
  ],
  [
    'a put naming a lease no chunk recorded (chunk format 1) is restored without a lease',
    { type: 'put', lease: '7' },
    false,
    undefined,
    { kind: 'without', why: 'unrecorded' },
  ],
])('%s', (_name, change, exists, recorded, want) => {
  expect(leaseStep(change, exists, recorded)).toEqual(want);
});

// Against a real etcd 3.6: an archive made by the archiver, restored to a point, keeps the leases of replayed keys.
describe('a point-in-time restore keeps the leases of replayed keys (real etcd)', () => {
  const UID = '5b3f1f0e-2a7c-4d19-8c11-6e2f7a9d4b21';
  const PREFIX = 'etcd/leases';
  const root = archiveRoot(PREFIX, UID);
  const env = {
    PATH: `${dirname(binaryPath(cacheRoot(), ETCD_TOOLS['3.6.16'], 'etcd'))}:${process.env.PATH ?? ''}`,
  };
  const store = new MemoryArchiveStore();
  let etcd: LocalEtcd;
  let client: Etcd3;
  let work: string;
  /** Leases: in the snapshot, granted during the archive, gone before the archiver saw it. */
  let inSnapshot: string;
  let granted: string;
  /** R: k/leased is attached to `granted`; RG: k/gone is put with a lease the archiver found gone; newest. */
  let R: number;
  let RG: number;
  let newest: number;

  const revisionOf = async () => Number((await client.kv.range({ key: Buffer.from('x') })).header.revision);
  const reach = () => {
    const c = chainsOfListing(root, [...store.objects.keys()])
      .filter((x) => x.complete)
      .pop();
    return c ? chainReach(c).to : 0;
  };
  async function until(what: string, f: () => boolean, ms = 30_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!f()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  /** Runs an archiver over `client` until `done` resolves. */
  async function archiveWhile(done: () => Promise<void>): Promise<void> {
    const stop = new AbortController();
    const running = testArchiver({
      store,
      client,
      etcdUrl: etcd.url,
      workDir: work,
      env,
      clusterUid: UID,
      prefix: PREFIX,
    }).run(stop.signal);
    try {
      await done();
    } finally {
      stop.abort();
      await running;
    }
  }

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'lease-replay-test-'));
    etcd = await startLocalEtcd('lease-replay-etcd-');
    client = new Etcd3({ hosts: etcd.url });
    inSnapshot = await client.lease(600, { autoKeepAlive: false }).grant();
    await client.put('snap/leased').value('s').lease(inSnapshot);
    await archiveWhile(async () => {
      await until('the first chain', () => reach() > 0);
      granted = await client.lease(300, { autoKeepAlive: false }).grant();
      await client.put('k/leased').value('1').lease(granted);
      await client.put('k/on-snapshot-lease').value('2').lease(inSnapshot);
      await client.put('k/plain').value('3');
      R = await revisionOf();
      await until('R archived', () => reach() >= R);
    });
    // While no archiver runs, a lease is granted, named and revoked: the next archiver finds it gone.
    const gone = await client.lease(200, { autoKeepAlive: false }).grant();
    await client.put('k/gone').value('4').lease(gone);
    RG = await revisionOf();
    await client.leaseClient.leaseRevoke({ ID: gone });
    await client.put('k/leased').value('5').lease(granted);
    newest = await revisionOf();
    await archiveWhile(() => until('every change archived', () => reach() >= newest));
  });

  afterAll(() => {
    client?.close();
    etcd?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  /** Builds the point's snapshot, restores it into a fresh etcd, and reads each key with its lease and the leases. */
  async function restore(point: { revision: number } | 'newest', dir: string) {
    const built = await buildPointSnapshot({
      store,
      prefix: PREFIX,
      clusterUid: UID,
      point,
      workDir: join(work, `${dir}-work`),
      env,
      signal: new AbortController().signal,
    });
    const data = join(work, dir);
    const signal = new AbortController().signal;
    await restoreSingleMember(built.file, data, env, signal, 60_000);
    const { etcd: restored, first } = await startRestoredEtcd(data, env, signal);
    try {
      const { revision } = first;
      const all = await restored.client.kv.range({ key: Buffer.from([0]), range_end: Buffer.from([0]) });
      const keys = Object.fromEntries(all.kvs.map((kv) => [kv.key.toString(), String(kv.lease)]));
      const ttls: Record<string, { TTL: number; grantedTTL: number }> = {};
      for (const lease of new Set(Object.values(keys).filter((l) => l !== '0'))) {
        const res = await restored.client.leaseClient.leaseTimeToLive({ ID: lease });
        ttls[lease] = { TTL: Number(res.TTL), grantedTTL: Number(res.grantedTTL) };
      }
      return { built, revision, keys, ttls };
    } finally {
      await restored.stop();
    }
  }

  test('restored to R, a key leased at R is attached to a lease with the same id and a TTL at most the granted one', async () => {
    const got = await restore({ revision: R }, 'at-r');
    expect(got.revision).toBe(R);
    expect(got.keys).toEqual({
      'snap/leased': inSnapshot,
      'k/leased': granted,
      'k/on-snapshot-lease': inSnapshot,
      'k/plain': '0',
    });
    expect(got.ttls[granted]!.grantedTTL).toBe(300);
    expect(got.ttls[granted]!.TTL).toBeGreaterThan(0);
    expect(got.ttls[granted]!.TTL).toBeLessThanOrEqual(300);
    expect(got.ttls[inSnapshot]!.grantedTTL).toBe(600);
    expect(got.built.leases).toEqual({ leasesGranted: 1, keysWithoutLease: 0 });
  });

  test('a key whose lease was gone when the archiver first saw it is restored without a lease, and counted', async () => {
    const got = await restore({ revision: RG }, 'at-rg');
    expect(got.keys['k/gone']).toBe('0');
    expect(got.keys['k/leased']).toBe(granted);
    expect(got.built.leases).toEqual({ leasesGranted: 1, keysWithoutLease: 1 });
  });

  test('restored to the newest point, the revoked lease took its key; the others keep theirs', async () => {
    const got = await restore('newest', 'newest');
    expect(got.revision).toBe(newest);
    expect(got.keys).toEqual({
      'snap/leased': inSnapshot,
      'k/leased': granted,
      'k/on-snapshot-lease': inSnapshot,
      'k/plain': '0',
    });
    expect(got.built.leases).toEqual({ leasesGranted: 1, keysWithoutLease: 0 });
  });

  test('an archive of format 1 chunks (no lease TTLs) still restores: the keys come back without their granted lease', async () => {
    const old = new MemoryArchiveStore();
    for (const [key, bytes] of store.objects) {
      const text = bytes.toString('utf8');
      old.objects.set(key, key.endsWith('.chunk') ? asFormat1(text) : bytes);
    }
    const built = await buildPointSnapshot({
      store: old,
      prefix: PREFIX,
      clusterUid: UID,
      point: { revision: R },
      workDir: join(work, 'old-work'),
      env,
      signal: new AbortController().signal,
    });
    expect(built.revision).toBe(R);
    // k/leased named a lease granted after the snapshot; k/on-snapshot-lease's lease is in the snapshot.
    expect(built.leases).toEqual({ leasesGranted: 0, keysWithoutLease: 1 });
  });
});

/** A format 2 chunk rewritten as format 1 would have been: no leaseTtl, a checksum over the body without it. */
function asFormat1(text: string): Buffer {
  const [header, ...lines] = text.split('\n');
  const body = lines
    .filter((l) => l !== '')
    .map((l) => {
      const { leaseTtl: _ttl, ...change } = JSON.parse(l) as ArchivedChange;
      return `${JSON.stringify(change)}\n`;
    })
    .join('');
  const h = JSON.parse(header!) as { format: number; sha256: string };
  h.format = 1;
  h.sha256 = createHash('sha256').update(body).digest('hex');
  return Buffer.from(`${JSON.stringify(h)}\n${body}`, 'utf8');
}

describe('LeaseReplay against a real etcd', () => {
  let etcd: LocalEtcd;
  let client: Etcd3;
  beforeAll(async () => {
    etcd = await startLocalEtcd('lease-keepalive-etcd-');
    client = new Etcd3({ hosts: etcd.url });
  });
  afterAll(() => {
    client?.close();
    etcd?.stop();
  });

  const ttlOf = async (id: string) => Number((await client.leaseClient.leaseTimeToLive({ ID: id })).TTL);
  const put = (lease: string, leaseTtl?: number): ArchivedChange => ({
    type: 'put',
    key: Buffer.from(`k/${lease}`).toString('base64'),
    value: 'dg==',
    revision: 2,
    createRevision: 2,
    version: 1,
    lease,
    receivedAt: '2026-11-27T03:00:00.000Z',
    ...(leaseTtl !== undefined ? { leaseTtl } : {}),
  });

  test('no lease expires while the replay runs: one it found and one it granted outlive their 2 s TTL', async () => {
    const found = await client.lease(2, { autoKeepAlive: false }).grant();
    const replay = await LeaseReplay.start(client);
    try {
      const change = put('7000000000000000123', 2);
      replay.learn([change]);
      expect(await replay.leasesFor([change])).toEqual(['7000000000000000123']);
      // Three times the TTL: without the keepalive both would be gone (etcd answers TTL -1).
      await new Promise((r) => setTimeout(r, 6000));
      expect(await ttlOf(found)).toBeGreaterThan(0);
      const granted = await client.leaseClient.leaseTimeToLive({ ID: '7000000000000000123' });
      expect(Number(granted.TTL)).toBeGreaterThan(0);
      expect(Number(granted.grantedTTL)).toBe(2);
      expect(replay.result).toEqual({ leasesGranted: 1, keysWithoutLease: 0 });
    } finally {
      await replay.stop();
    }
  });
});
