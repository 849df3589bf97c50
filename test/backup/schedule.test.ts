// End-to-end: an EtcdSnapshotSchedule runs as a Temporal Schedule, creates EtcdSnapshots in the stack's MinIO, and retention prunes the oldest objects and CRs.
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { API_GROUP, API_VERSION, API_VERSION_NAME } from '../../crds/etcd-cluster';
import { ETCD_SNAPSHOT_SCHEDULE } from '../../crds/etcd-snapshot-schedule';
import type { EtcdSnapshotScheduleSpec } from '../../crds/etcd-snapshot-schedule';
import type { Harness } from '../support/cluster-harness';
import {
  connect,
  createCluster,
  eventually,
  freshNamespace,
  temporalCli,
  waitConverged,
} from '../support/cluster-harness';
import {
  createCredentialsSecret,
  eventsFor,
  listSnapshots,
  minioDestination,
  s3Client,
  s3Location,
} from './backup-harness';

const scheduleCrd = { group: API_GROUP, version: API_VERSION_NAME, plural: ETCD_SNAPSHOT_SCHEDULE.plural };

let h: Harness;
beforeAll(() => {
  h = connect();
});

async function objectExists(uri: string): Promise<boolean> {
  const { bucket, key } = s3Location(uri);
  try {
    await s3Client(h).send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return true;
  } catch (err) {
    if ((err as { name?: string }).name === 'NotFound') return false;
    throw err;
  }
}

describe('EtcdSnapshotSchedule', () => {
  test('a schedule every 20 s runs at least three times; keepLast 2 prunes the oldest objects and EtcdSnapshots and keeps the newest two', async () => {
    const ns = await freshNamespace(h, 'sched');
    await createCluster(h, ns, 'main', { replicas: 1 });
    await waitConverged(h, ns, 'main', 1, 300_000);
    await createCredentialsSecret(h, ns, 's3-credentials');
    // Every snapshot the schedule creates carries its jobPlacement: here, one chosen node.
    const nodes = (await h.core.listNode()).items.map((n) => n.metadata?.name ?? '').sort();
    const jobPlacement = { nodeSelector: { 'kubernetes.io/hostname': nodes[0] ?? 'no node' } };
    const spec: Partial<EtcdSnapshotScheduleSpec> = {
      clusterRef: { name: 'main' },
      // Temporal's interval form, which the CRD documents for users; cron's floor would be one minute.
      schedule: '@every 20s',
      destination: minioDestination(h, 's3-credentials', `e2e/${ns}`),
      retention: { keepLast: 2 },
      jobPlacement,
    };
    await h.custom.createNamespacedCustomObject({
      ...scheduleCrd,
      namespace: ns,
      body: {
        apiVersion: API_VERSION,
        kind: ETCD_SNAPSHOT_SCHEDULE.kind,
        metadata: { name: 'every20s' },
        spec,
      },
    });

    const scheduleId = `etcdsnapshotschedule/${ns}/every20s`;
    await eventually('the Temporal Schedule to be listed', async () =>
      temporalCli(h, ['schedule', 'list']).includes(scheduleId) ? true : undefined,
    );

    // Every snapshot ever seen, with its object's URI once it succeeded.
    const seen = new Map<string, string | undefined>();
    const settled = await eventually(
      'three runs and retention down to the newest two',
      async () => {
        const now = await listSnapshots(h, ns);
        for (const s of now) {
          if (!seen.has(s.metadata.name) || s.status?.artifact)
            seen.set(s.metadata.name, s.status?.artifact?.uri);
        }
        if (seen.size < 3) return undefined;
        const succeeded = now
          .filter((s) => s.status?.phase === 'Succeeded')
          .map((s) => s.metadata.name)
          .sort();
        const pruned = [...seen.keys()].filter((n) => !now.some((s) => s.metadata.name === n));
        // Names sort by creation time (<schedule>-<yyyymmddhhmmss>).
        const newestSeenSucceeded = [...seen.entries()]
          .filter(([, uri]) => uri)
          .map(([n]) => n)
          .sort()
          .slice(-2);
        if (succeeded.length !== 2 || pruned.length === 0) return undefined;
        if (JSON.stringify(succeeded) !== JSON.stringify(newestSeenSucceeded)) return undefined;
        return { now, succeeded, pruned };
      },
      240_000,
      2000,
    );

    // Owned and labelled by the schedule, and placed as it says.
    for (const s of settled.now) {
      expect(s.spec.jobPlacement).toEqual(jobPlacement);
      expect(s.metadata.labels?.['etcd.conductor.dev/snapshot-schedule']).toBe('every20s');
      expect(s.metadata.ownerReferences?.[0]).toMatchObject({
        kind: 'EtcdSnapshotSchedule',
        name: 'every20s',
      });
    }
    // The kept ones' objects are stored; the pruned ones' objects (those that had one) are gone.
    for (const name of settled.succeeded) expect(await objectExists(seen.get(name) ?? '')).toBe(true);
    const prunedWithObjects = settled.pruned.filter((n) => seen.get(n));
    expect(prunedWithObjects.length).toBeGreaterThan(0);
    for (const name of prunedWithObjects) {
      await eventually(`${name}'s object to be deleted`, async () =>
        (await objectExists(seen.get(name) ?? '')) ? undefined : true,
      );
    }
    // Every pruned one is older than every kept one.
    expect(settled.pruned.every((p) => settled.succeeded.every((k) => p < k))).toBe(true);
    // Each prune's Event is its own activity after the delete, so it may land a moment after the objects are gone
    // (Session 27's rehearsal read the Events once, right after, and found none yet).
    await eventually(
      'a SnapshotPruned Event on the schedule',
      async () =>
        (await eventsFor(h, ns, 'every20s')).some((e) => e.reason === 'SnapshotPruned') ? true : undefined,
      30_000,
    );

    // Deleting the schedule removes its Temporal Schedule, so nothing keeps running.
    await h.custom.deleteNamespacedCustomObject({ ...scheduleCrd, namespace: ns, name: 'every20s' });
    await eventually('the Temporal Schedule to be gone', async () =>
      temporalCli(h, ['schedule', 'list']).includes(scheduleId) ? undefined : true,
    );
  });
});
