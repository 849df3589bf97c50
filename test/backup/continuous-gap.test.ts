// End-to-end: a gap in a continuous backup, made as it happens to users. The archiver of a running cluster stops (its
// container frozen, then killed) while the cluster writes on and compacts its history past the archiver's place. The
// archiver the kubelet starts again resumes from what the store holds, finds that place compacted, records the gap
// (revisions, times, reason) and closes it with a new full snapshot that starts a new chain. The operator shows it in
// status.backup.gaps and a BackupGapRecorded Event; a restore to a revision inside the gap is refused naming the
// nearest reachable revisions, and a restore to the newest point holds every key the source held, those written
// during the gap included. Then the cluster is rolled back in place to a revision of that backup, as approved.
import type { S3Client } from '@aws-sdk/client-s3';
import type { ChainManifest } from '../../contracts/continuous-backup';
import { setHeaderOptions, PatchStrategy } from '@kubernetes/client-node';
import type { BackupGap } from '../../crds/etcd-cluster';
import { API_GROUP, API_VERSION_NAME, ETCD_CLUSTER } from '../../crds/etcd-cluster';
import { clientServiceName, memberClientURL } from '../../crds/names';
import type { Harness } from '../support/cluster-harness';
import {
  connect,
  createCluster,
  eventually,
  freshNamespace,
  getCluster,
  waitConverged,
} from '../support/cluster-harness';
import { containerFaults } from '../support/container-faults';
import { startWriterRunning, strictClient } from '../support/writer';
import { archiveView, continuousRestoreSpec, keysAt, waitRefused, type ArchiveView } from './archive-view';
import { createCredentialsSecret, eventsFor, minioDestination, s3Client } from './backup-harness';

jest.setTimeout(900_000);

const MAX_LAG_SECONDS = 2;
const ARCHIVER_CONTAINER = 'agent';
const ROLLBACK_APPROVAL = 'etcd.conductor.dev/approve-rollback';

let h: Harness;
let ns: string;
let s3: S3Client;
let view: ArchiveView;
let sourceUid: string;
/** The archive's folder in the bucket: `<key>/continuous/<uid>/`. */
let root: string;

/** Puts each key with its own name as value; returns the revision of the last put. */
async function putKeys(keys: string[]): Promise<number> {
  const c = strictClient([memberClientURL({ namespace: ns, name: 'src' }, 'src-0')], {}, 10_000);
  try {
    let revision = 0;
    for (const k of keys) revision = Number((await c.put(k).value(k).exec()).header.revision);
    return revision;
  } finally {
    c.close();
  }
}

const waitArchived = (revision: number) =>
  eventually(
    `the archive to hold revision ${revision}`,
    async () => ((await view.archivedChanges(root)).some((x) => x.revision >= revision) ? true : undefined),
    120_000,
    500,
  );

beforeAll(async () => {
  h = connect();
  s3 = s3Client(h);
  view = archiveView(h, s3);
  ns = await freshNamespace(h, 'cgap');
  await createCredentialsSecret(h, ns, 's3-credentials');
  const created = await createCluster(h, ns, 'src', {
    replicas: 1,
    backup: {
      destination: minioDestination(h, 's3-credentials', `e2e/${ns}`),
      continuous: { fullSnapshotInterval: '1h', maxLagSeconds: MAX_LAG_SECONDS, retention: '168h' },
    },
  });
  sourceUid = created.metadata.uid ?? '';
  root = `e2e/${ns}/continuous/${sourceUid}/`;
  await waitConverged(h, ns, 'src', 1, 300_000);
}, 400_000);

describe('a gap in the continuous backup', () => {
  let gap: BackupGap;
  /** Revisions of the writes made while the archiver was stopped (all compacted before it came back). */
  let during: { first: number; last: number };

  test('an archiver stopped while etcd compacts past its place records the gap, closes it with a new chain, and status and an Event say which revisions are missing', async () => {
    await eventually(
      'status.backup to show a revision',
      async () =>
        (await getCluster(h, ns, 'src')).status?.backup?.latestRevision !== undefined ? true : undefined,
      240_000,
      1000,
    );
    const before = await putKeys(['before/1', 'before/2', 'before/3']);
    await waitArchived(before);

    const pods = await h.core.listNamespacedPod({
      namespace: ns,
      labelSelector: 'app.kubernetes.io/name=etcd-archiver,app.kubernetes.io/instance=src',
    });
    const archiver = pods.items.map((p) => p.metadata?.name ?? '');
    expect(archiver).toHaveLength(1);
    const pod = archiver[0] ?? '';
    const faults = containerFaults(h);
    // Frozen, it reads nothing more from its watch and uploads nothing; the kill is taken when it thaws, before it
    // runs again, so nothing written meanwhile reaches the store from this process.
    await faults.freezeContainer(ns, pod, ARCHIVER_CONTAINER);
    try {
      const first = await putKeys(['during/1']);
      const last = await putKeys(['during/2', 'during/3', 'during/4']);
      during = { first, last };
      const c = strictClient([memberClientURL({ namespace: ns, name: 'src' }, 'src-0')], {}, 10_000);
      try {
        await c.kv.compact({ revision: String(last), physical: true });
      } finally {
        c.close();
      }
      await faults.crashContainer(ns, pod, ARCHIVER_CONTAINER);
    } finally {
      await faults.thawContainer(ns, pod, ARCHIVER_CONTAINER);
    }

    // The operator reads the archiver's state at its next look (every 60 s while the backup is on).
    const backup = await eventually(
      'status.backup.gaps to list the gap',
      async () => {
        const b = (await getCluster(h, ns, 'src')).status?.backup;
        return b && b.gaps.length > 0 ? b : undefined;
      },
      240_000,
      1000,
    );
    expect(backup.gaps).toHaveLength(1);
    gap = backup.gaps[0]!;
    // Everything up to the last change stored before the stop stays reachable; the writes made while it was stopped
    // are the gap; the new chain's snapshot (at or past the compaction) is reachable again.
    expect(gap.reason).toBe('compacted');
    expect(gap.afterRevision).toBeGreaterThanOrEqual(before);
    expect(gap.afterRevision).toBeLessThan(during.first);
    expect(gap.beforeRevision).toBeGreaterThanOrEqual(during.last);
    expect(Date.parse(gap.beforeTime)).toBeGreaterThanOrEqual(Date.parse(gap.afterTime));
    expect(backup.latestRevision).toBeGreaterThanOrEqual(gap.beforeRevision);
    const condition = (await getCluster(h, ns, 'src')).status?.conditions?.find(
      (c) => c.type === 'ContinuousBackup',
    );
    expect(condition?.message).toContain(
      `revisions ${gap.afterRevision + 1}..${gap.beforeRevision - 1}, compacted`,
    );

    const events = await eventsFor(h, ns, 'src');
    const event = events.find((e) => e.reason === 'BackupGapRecorded');
    expect(event?.type).toBe('Warning');
    expect(event?.message).toContain(`revisions ${gap.afterRevision + 1}..${gap.beforeRevision - 1}`);
    expect(event?.message).toContain('compacted');

    // Two chains now: the first, and the one the gap started, whose manifest says so.
    const manifests = (await view.listKeys(root)).filter((k) => k.endsWith('/chain.json'));
    expect(manifests).toHaveLength(2);
    const newest = JSON.parse((await view.getBytes(manifests[1]!)).toString('utf8')) as ChainManifest;
    expect(newest).toMatchObject({ cause: 'gap', snapshotRevision: gap.beforeRevision });
  });

  test('a restore to a revision inside the gap is refused naming the nearest reachable revisions; one to the newest point holds every key, those written during the gap included', async () => {
    if (!gap) throw new Error('no gap was recorded by the test before');
    const after = await putKeys(['after/1', 'after/2']);
    await waitArchived(after);
    const source = await keysAt(ns, 'src', 'src-0', after);

    const restoreSpec = (pointInTime?: { revision: number }) =>
      continuousRestoreSpec(h, ns, sourceUid, pointInTime);
    await Promise.all([
      createCluster(h, ns, 'in-gap', restoreSpec({ revision: during.first })),
      createCluster(h, ns, 'newest', restoreSpec()),
    ]);
    const [refused, restored] = await Promise.all([
      waitRefused(h, ns, 'in-gap'),
      waitConverged(h, ns, 'newest', 1, 300_000),
    ]);
    const degraded = refused.status?.conditions?.find((x) => x.type === 'Degraded');
    expect(degraded?.message).toContain(`revision ${during.first} is in a gap of the archive`);
    expect(degraded?.message).toContain(
      `the nearest reachable revisions are ${gap.afterRevision} and ${gap.beforeRevision}`,
    );
    expect(refused.status?.lastOperation).toMatchObject({ type: 'Bootstrap', result: 'Failed' });
    expect(restored.status?.lastOperation).toMatchObject({ type: 'Bootstrap', result: 'Succeeded' });

    const got = await keysAt(ns, 'newest', 'newest-0');
    expect(Object.fromEntries(got.kvs)).toEqual(Object.fromEntries(source.kvs));
    for (const k of ['before/1', 'during/1', 'during/4', 'after/2']) expect(got.kvs.get(k)).toBe(k);
  }, 600_000);
  test('spec.rollback to a revision of the continuous backup, approved: the present data snapshotted first, then exactly the keys at that revision, under the same name and client Service', async () => {
    const point = await putKeys(['rollback/kept']);
    const atPoint = await keysAt(ns, 'src', 'src-0', point);
    await putKeys(['rollback/given-up']);
    await waitArchived(point);
    // A client writing after the point, stopped before the approval as in rollback.test.ts (the rollback itself
    // interrupts clients by design, docs/backup-restore.md): every write it had acknowledged must be in the
    // pre-rollback snapshot, and none of them in the rolled-back data.
    const writer = await startWriterRunning({ namespace: ns, name: 'src', prefix: '/rollback-writer' });
    await new Promise((r) => setTimeout(r, 3000));
    const report = await writer.stop();
    const acknowledged = report.records.filter((r) => r.ok);
    expect(acknowledged.length).toBeGreaterThan(0);
    const highest = Math.max(...acknowledged.map((r) => r.revision ?? 0));
    const before = await getCluster(h, ns, 'src');
    const uid = before.metadata.uid ?? '';
    const serviceBefore = await h.core.readNamespacedService({
      namespace: ns,
      name: clientServiceName('src'),
    });

    await h.custom.patchNamespacedCustomObject(
      {
        group: API_GROUP,
        version: API_VERSION_NAME,
        plural: ETCD_CLUSTER.plural,
        namespace: ns,
        name: 'src',
        body: {
          metadata: { annotations: { [ROLLBACK_APPROVAL]: uid } },
          spec: { rollback: { pointInTime: { revision: point } } },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const done = await eventually(
      'the Rebuild to end',
      async () => {
        const op = (await getCluster(h, ns, 'src')).status?.lastOperation;
        return op?.type === 'Rebuild' ? op : undefined;
      },
      600_000,
      1000,
    );
    expect(done.result).toBe('Succeeded');
    expect(done.message).toContain(
      `rebuilt in place from revision ${point} of the continuous backup (rolled back as approved)`,
    );
    expect(done.message).toContain(`recovered at revision ${point}`);
    const pre = /kept in snapshot (\S+) \(/.exec(done.message ?? '')?.[1] ?? '';
    expect(pre).toMatch(/^src-pre-rollback-\d+$/);
    const preSnapshot = (await h.custom.getNamespacedCustomObject({
      group: API_GROUP,
      version: API_VERSION_NAME,
      plural: 'etcdsnapshots',
      namespace: ns,
      name: pre,
    })) as { status?: { phase?: string; artifact?: { revision?: number } } };
    expect(preSnapshot.status?.phase).toBe('Succeeded');
    expect(preSnapshot.status?.artifact?.revision ?? 0).toBeGreaterThan(point);
    expect(preSnapshot.status?.artifact?.revision ?? 0).toBeGreaterThanOrEqual(highest);

    const back = await waitConverged(h, ns, 'src', 1, 300_000);
    expect(back.metadata.uid).toBe(uid);
    expect(back.metadata.annotations?.[ROLLBACK_APPROVAL]).toBeUndefined();
    const serviceAfter = await h.core.readNamespacedService({
      namespace: ns,
      name: clientServiceName('src'),
    });
    expect(serviceAfter.metadata?.uid).toBe(serviceBefore.metadata?.uid);
    expect(serviceAfter.spec?.clusterIP).toBe(serviceBefore.spec?.clusterIP);
    const now = await keysAt(ns, 'src', 'src-0');
    expect(Object.fromEntries(now.kvs)).toEqual(Object.fromEntries(atPoint.kvs));
    expect(now.kvs.has('rollback/kept')).toBe(true);
    expect(now.kvs.has('rollback/given-up')).toBe(false);
    expect([...now.kvs.keys()].filter((k) => k.startsWith('/rollback-writer'))).toEqual([]);
  }, 900_000);
});
