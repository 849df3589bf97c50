// End-to-end: a cluster's continuous backup in the stack's MinIO, the cluster and its volumes deleted, and new clusters restored from the archive at a revision, at a time and at the newest point, each holding exactly what the source held there (a key leased during the run keeps its lease); a damaged chunk and an unreachable point are refused by name.
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import { parseChainId, type ArchivedChange } from '../../contracts/continuous-backup';
import type { EtcdCluster, PointInTime } from '../../crds/etcd-cluster';
import { memberClientURL } from '../../crds/names';
import { PLANNED_GAP_BOUND_MS, expectAvailability, verifyWrites } from '../support/availability';
import type { Harness } from '../support/cluster-harness';
import {
  connect,
  createCluster,
  eventually,
  freshNamespace,
  getCluster,
  waitConverged,
} from '../support/cluster-harness';
import type { WriterReport } from '../support/writer';
import { startWriter, strictClient } from '../support/writer';
import { createCredentialsSecret, eventsFor, minioDestination, s3Client } from './backup-harness';
import { archiveView, continuousRestoreSpec, keysAt, waitRefused, type ArchiveView } from './archive-view';

const MAX_LAG_SECONDS = 2;
/** What the archive holds is waited for this much past maxLagSeconds before the source is deleted. */
const MARGIN_SECONDS = 3;

let h: Harness;
let ns: string;
let s3: S3Client;
let sourceUid: string;
/** The archive's folder in the bucket: `<key>/continuous/<uid>/`. */
let root: string;
let report: WriterReport;
/** A revision in the middle of the writes, and every key and value the source held there. */
let atRevision: { revision: number; kvs: Map<string, string> };
/** A time between two acknowledged writes, the revision the archive maps it to, and the keys at that revision. */
let atTime: { time: string; revision: number; kvs: Map<string, string> };
/** When the archiver received each archived revision (the time status.restore reports for it). */
let receivedAt: Map<number, string>;
/** A key put during the run with a lease granted after the chain's full snapshot. */
const LEASED_KEY = 'leased/e2e';
const LEASE_TTL = 600;
let leased: { lease: string; revision: number };
let listKeys: ArchiveView['listKeys'];
let getBytes: ArchiveView['getBytes'];
/** Every change the source's archive holds. */
let archivedChanges: () => Promise<ArchivedChange[]>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const restoreSpec = (pointInTime?: PointInTime) => continuousRestoreSpec(h, ns, sourceUid, pointInTime);

/** Waits until status.restore of `name` says the point its restore reached. */
function waitRestoreStatus(
  name: string,
): Promise<NonNullable<NonNullable<EtcdCluster['status']>['restore']>> {
  return eventually(
    `status.restore of ${name}`,
    async () => (await getCluster(h, ns, name)).status?.restore,
    120_000,
    1000,
  );
}

beforeAll(async () => {
  h = connect();
  s3 = s3Client(h);
  ({ listKeys, getBytes } = archiveView(h, s3));
  archivedChanges = () => archiveView(h, s3).archivedChanges(root);
  ns = await freshNamespace(h, 'continuous');
  await createCredentialsSecret(h, ns, 's3-credentials');
  const created = await createCluster(h, ns, 'src', {
    replicas: 3,
    backup: {
      destination: minioDestination(h, 's3-credentials', `e2e/${ns}`),
      continuous: { fullSnapshotInterval: '1h', maxLagSeconds: MAX_LAG_SECONDS, retention: '168h' },
    },
  });
  sourceUid = created.metadata.uid ?? '';
  root = `e2e/${ns}/continuous/${sourceUid}/`;
  await waitConverged(h, ns, 'src', 3, 300_000);

  const writer = startWriter({ namespace: ns, name: 'src', prefix: 'cb' });
  try {
    // The operator reads the archiver's state every 60 s: a revision in status.backup means the archive works.
    const backedUp = await eventually(
      'status.backup to show a revision',
      async () => {
        const b = (await getCluster(h, ns, 'src')).status?.backup;
        return b?.latestRevision !== undefined ? b : undefined;
      },
      240_000,
      1000,
    );
    expect(backedUp.latestTime).toBeTruthy();
    expect(backedUp.gaps).toEqual([]);
    // A lease granted now is not in the chain's full snapshot: only the archived change can bring it back.
    const c = strictClient([memberClientURL({ namespace: ns, name: 'src' }, 'src-0')], {}, 10_000);
    try {
      const lease = await c.lease(LEASE_TTL, { autoKeepAlive: false }).grant();
      const put = await c.put(LEASED_KEY).value('kept').lease(lease).exec();
      leased = { lease, revision: Number(put.header.revision) };
    } finally {
      c.close();
    }
    // status.backup can show the chain's full snapshot before the archiver's watch delivers a change: the points
    // below are taken only once the store holds a change made now (in a CI run under load, every change of the
    // writer's 11 s arrived after the point in time, and none could be mapped to it).
    await eventually(
      'the archiver to store the leased put',
      async () => ((await archivedChanges()).some((x) => x.revision >= leased.revision) ? true : undefined),
      120_000,
      500,
    );
    // Writes on either side of the points: a revision, then (a few seconds later) a time.
    await sleep(4000);
    const revision = (await keysAt(ns, 'src', 'src-0')).revision;
    atRevision = await keysAt(ns, 'src', 'src-0', revision);
    await sleep(3000);
    const time = new Date().toISOString();
    await sleep(4000);
    report = await writer.stop();
    atTime = { time, revision: 0, kvs: new Map() };
  } catch (e) {
    await writer.stop();
    throw e;
  }
  // Past maxLagSeconds every acknowledged write is in the store.
  await sleep((MAX_LAG_SECONDS + MARGIN_SECONDS) * 1000);

  // The revision the archive maps the time to: the last change the archiver received at or before it.
  const changes = await archivedChanges();
  receivedAt = new Map(changes.map((c) => [c.revision, c.receivedAt]));
  const t = Date.parse(atTime.time);
  const mapped = changes.filter((c) => Date.parse(c.receivedAt) <= t).pop();
  if (!mapped) throw new Error(`no archived change received at or before ${atTime.time}`);
  atTime = { ...atTime, ...(await keysAt(ns, 'src', 'src-0', mapped.revision)), revision: mapped.revision };

  await expectAvailability(h, report, { what: 'continuous backup on', boundMs: PLANNED_GAP_BOUND_MS });

  // The whole cluster goes, claims included: only the archive is left.
  await h.custom.deleteNamespacedCustomObject({
    group: 'etcd.conductor.dev',
    version: 'v1alpha1',
    plural: 'etcdclusters',
    namespace: ns,
    name: 'src',
  });
  await eventually(
    'the source cluster, its Pods and claims to be gone',
    async () => {
      const [pods, claims] = await Promise.all([
        h.core.listNamespacedPod({ namespace: ns, labelSelector: 'etcd.conductor.dev/cluster=src' }),
        h.core.listNamespacedPersistentVolumeClaim({
          namespace: ns,
          labelSelector: 'etcd.conductor.dev/cluster=src',
        }),
      ]);
      if (pods.items.length + claims.items.length > 0) return undefined;
      return getCluster(h, ns, 'src').then(
        () => undefined,
        () => true,
      );
    },
    180_000,
    1000,
  );
}, 900_000);

describe('continuous backup and restore to a point in time', () => {
  test('the writes ran on both sides of both points, and the archive holds changes past each', () => {
    const acked = report.records.filter((r) => r.ok);
    const revisions = acked.map((r) => r.revision ?? 0);
    const t = Date.parse(atTime.time);
    expect(revisions.some((r) => r < atRevision.revision)).toBe(true);
    expect(revisions.some((r) => r > atRevision.revision)).toBe(true);
    expect(acked.some((r) => r.endedAt < t)).toBe(true);
    expect(acked.some((r) => r.startedAt > t)).toBe(true);
    // The time maps to a revision after the chosen one: the two restores are two different points.
    expect(atTime.revision).toBeGreaterThan(atRevision.revision);
    // Both points lie past the chain's full snapshot: reaching them replays archived changes.
    expect(receivedAt.has(atRevision.revision)).toBe(true);
    expect(receivedAt.has(atTime.revision)).toBe(true);
    // A write started after the time cannot have reached the archiver before it.
    const firstAfter = acked.find((r) => r.startedAt > t);
    expect(atTime.revision).toBeLessThan(firstAfter?.revision ?? Infinity);
  });

  test('three new clusters restored at a revision, at a time and at the newest point hold exactly the keys and values of the source there; a point past the newest or before the oldest is refused naming the nearest', async () => {
    // The newest revision the archive reaches: the last revision of its last chunk, as the object's name says.
    const lasts = (await listKeys(root))
      .map((k) => /\/chunks\/\d{16}-(\d{16})\.chunk$/.exec(k)?.[1])
      .filter((x): x is string => x !== undefined)
      .map(Number);
    const newest = Math.max(...lasts);
    expect(newest).toBeGreaterThanOrEqual(
      Math.max(...report.records.filter((r) => r.ok).map((r) => r.revision ?? 0)),
    );
    const beyond = newest + 100_000;
    // The oldest point the archive holds: its first chain's full snapshot, whose time the chain's folder names.
    const firstChain = (await listKeys(root))
      .map((k) => /\/([^/]+)\/chain\.json$/.exec(k)?.[1])
      .find((x) => x !== undefined);
    const oldest = parseChainId(firstChain ?? '');
    if (!oldest) throw new Error(`no chain under ${root}`);
    await Promise.all([
      createCluster(h, ns, 'at-rev', restoreSpec({ revision: atRevision.revision })),
      createCluster(h, ns, 'at-time', restoreSpec({ time: atTime.time })),
      createCluster(h, ns, 'newest', restoreSpec()),
      createCluster(h, ns, 'beyond', restoreSpec({ revision: beyond })),
      createCluster(h, ns, 'too-early', restoreSpec({ time: '2000-01-01T00:00:00Z' })),
    ]);
    const [rev, time, last, refused, early] = await Promise.all([
      waitConverged(h, ns, 'at-rev', 1, 300_000),
      waitConverged(h, ns, 'at-time', 1, 300_000),
      waitConverged(h, ns, 'newest', 1, 300_000),
      waitRefused(h, ns, 'beyond'),
      waitRefused(h, ns, 'too-early'),
    ]);
    for (const c of [rev, time, last])
      expect(c.status?.lastOperation).toMatchObject({ type: 'Bootstrap', result: 'Succeeded' });
    // status.restore: the revision reached and when the source applied it (as the archiver received it); the lease
    // granted during the run (before every point) granted again by the replay, and no key left without its lease.
    const leases = { leasesGranted: 1, keysWithoutLease: 0 };
    expect(await waitRestoreStatus('at-rev')).toEqual({
      revision: atRevision.revision,
      time: receivedAt.get(atRevision.revision),
      ...leases,
    });
    expect(await waitRestoreStatus('at-time')).toEqual({
      revision: atTime.revision,
      time: receivedAt.get(atTime.revision),
      ...leases,
    });
    expect(Date.parse(atTime.time)).toBeGreaterThanOrEqual(Date.parse(receivedAt.get(atTime.revision) ?? ''));
    expect(await waitRestoreStatus('newest')).toEqual({
      revision: newest,
      time: receivedAt.get(newest),
      ...leases,
    });

    // Every key and value, compared whole: nothing missing, nothing extra, nothing different.
    const restoredAtRev = await keysAt(ns, 'at-rev', 'at-rev-0');
    expect(Object.fromEntries(restoredAtRev.kvs)).toEqual(Object.fromEntries(atRevision.kvs));
    const restoredAtTime = await keysAt(ns, 'at-time', 'at-time-0');
    expect(Object.fromEntries(restoredAtTime.kvs)).toEqual(Object.fromEntries(atTime.kvs));
    expect(restoredAtTime.kvs.size).toBeGreaterThan(restoredAtRev.kvs.size);

    // The newest point: the writer stopped more than maxLagSeconds before the deletion, so every acknowledged write
    // is older than that and must be there, with its value, and nothing the writer did not write.
    const verified = await verifyWrites(
      h,
      { ...report, namespace: ns, name: 'newest' },
      { members: ['newest-0'] },
    );
    const copy = verified.members[0];
    expect({
      lost: copy?.lost.length,
      changed: copy?.changed.length,
      unexpected: copy?.unexpected.length,
    }).toEqual({ lost: 0, changed: 0, unexpected: 0 });
    expect(copy?.keys).toBe(report.records.filter((r) => r.ok).length);

    const degraded = refused.status?.conditions?.find((x) => x.type === 'Degraded');
    expect(degraded?.message).toContain('InvalidArguments');
    expect(degraded?.message).toContain(String(beyond));
    expect(degraded?.message).toContain(String(newest));
    expect(refused.status?.lastOperation).toMatchObject({ type: 'Bootstrap', result: 'Failed' });
    // A time before the oldest full snapshot is refused naming the oldest reachable time.
    const tooEarly = early.status?.conditions?.find((x) => x.type === 'Degraded');
    expect(tooEarly?.message).toContain('InvalidArguments');
    expect(tooEarly?.message).toContain(`before the oldest retained point (${oldest.snapshotTime})`);
    for (const c of [refused, early]) expect(c.status?.restore).toBeUndefined();
  }, 600_000);

  test('the key leased during the run, restored at the newest point, is attached to a lease with the same id and at most its granted TTL', async () => {
    // The archiver recorded the lease's granted TTL on the put that first named it.
    const change = (await archivedChanges()).find(
      (c) => c.revision === leased.revision && Buffer.from(c.key, 'base64').toString() === LEASED_KEY,
    );
    expect(change).toMatchObject({ lease: leased.lease, leaseTtl: LEASE_TTL });
    const c = strictClient([memberClientURL({ namespace: ns, name: 'newest' }, 'newest-0')], {}, 10_000);
    try {
      const got = await c.kv.range({ key: Buffer.from(LEASED_KEY) });
      expect(got.kvs.map((kv) => [kv.value.toString(), String(kv.lease)])).toEqual([['kept', leased.lease]]);
      const ttl = await c.leaseClient.leaseTimeToLive({ ID: leased.lease });
      expect(Number(ttl.grantedTTL)).toBe(LEASE_TTL);
      expect(Number(ttl.TTL)).toBeGreaterThan(0);
      expect(Number(ttl.TTL)).toBeLessThanOrEqual(LEASE_TTL);
    } finally {
      c.close();
    }
  });

  test('a chunk altered in the store makes a restore fail with ChecksumMismatch naming that chunk, in status and in an Event', async () => {
    const chunks = (await listKeys(root)).filter((k) => k.endsWith('.chunk'));
    const victim = chunks[chunks.length - 1];
    if (!victim) throw new Error(`no chunk under ${root}`);
    const bytes = await getBytes(victim);
    // One byte of the body (past the header line) changed: the header's sha256 no longer matches.
    const at = bytes.indexOf(0x0a) + 10;
    bytes[at] = bytes[at] === 0x41 ? 0x42 : 0x41;
    await s3.send(new PutObjectCommand({ Bucket: h.stack.s3.bucket, Key: victim, Body: bytes }));

    await createCluster(h, ns, 'damaged', restoreSpec());
    const refused = await waitRefused(h, ns, 'damaged');
    const degraded = refused.status?.conditions?.find((x) => x.type === 'Degraded');
    expect(degraded).toMatchObject({ status: 'True', reason: 'RestoreFailed' });
    expect(degraded?.message).toContain('ChecksumMismatch');
    expect(degraded?.message).toContain(victim);
    expect(refused.status?.lastOperation).toMatchObject({ type: 'Bootstrap', result: 'Failed' });
    const events = await eventsFor(h, ns, 'damaged');
    const event = events.find((e) => e.reason === 'RestoreFailed' && e.type === 'Warning');
    expect(event?.message).toContain(victim);
    // Nothing else was created for a cluster that never started.
    const pods = await h.core.listNamespacedPod({
      namespace: ns,
      labelSelector: 'etcd.conductor.dev/cluster=damaged',
    });
    expect(pods.items.map((p) => p.metadata?.name)).toEqual(['damaged-0']);
  }, 300_000);
});
