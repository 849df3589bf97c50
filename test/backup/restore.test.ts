// End-to-end: a new EtcdCluster restored from an EtcdSnapshot in the stack's MinIO, and a corrupted object refused, through the operator the stack runs.
import { execFileSync } from 'node:child_process';
import type { Harness } from '../support/cluster-harness';
import {
  clientEndpoint,
  connect,
  createCluster,
  eventually,
  expectClusterData,
  freshNamespace,
  getCluster,
  waitConverged,
  writeKeys,
} from '../support/cluster-harness';
import {
  createCredentialsSecret,
  createSnapshot,
  eventsFor,
  hashObject,
  minioDestination,
  podS3Endpoint,
  putObject,
  s3Client,
  s3Location,
  waitFinished,
} from './backup-harness';

let h: Harness;
let ns: string;
let artifact: { uri: string; sha256: string; revision: number };
let written: Map<string, string>;

/** The revision etcd serves now, as `etcdctl get` reports it in the response header. */
function currentRevision(endpoint: string): number {
  const etcdctl = `${Object.values(h.stack.tools.etcdBinDirs).find((d) => d.includes('3.6')) ?? ''}/etcdctl`;
  const out = execFileSync(
    etcdctl,
    ['--endpoints', endpoint, '--command-timeout=5s', 'get', 'none', '-w', 'json'],
    {
      encoding: 'utf8',
    },
  );
  return (JSON.parse(out) as { header: { revision: number } }).header.revision;
}

beforeAll(async () => {
  h = connect();
  ns = await freshNamespace(h, 'restore');
  await createCluster(h, ns, 'src', { replicas: 3 });
  await waitConverged(h, ns, 'src', 3, 300_000);
  written = await writeKeys(ns, 'src', 'known', 40);
  await createCredentialsSecret(h, ns, 's3-credentials');
  await createSnapshot(h, ns, 'snap', {
    clusterRef: { name: 'src' },
    destination: minioDestination(h, 's3-credentials', `e2e/${ns}`),
  });
  const done = await waitFinished(h, ns, 'snap');
  expect(done.status?.phase).toBe('Succeeded');
  const a = done.status?.artifact;
  if (!a) throw new Error('the snapshot has no artifact');
  artifact = a;
}, 600_000);

describe('restore from an EtcdSnapshot', () => {
  test('a new 3-member cluster restored from snapshotRef holds the same keys and values at a revision not lower than the snapshot, every member with the same hashKV', async () => {
    await createCluster(h, ns, 'copy', {
      replicas: 3,
      bootstrap: { restore: { source: { snapshotRef: { name: 'snap' } } } },
    });
    const c = await waitConverged(h, ns, 'copy', 3, 300_000);
    const src = await getCluster(h, ns, 'src');
    // A new cluster (new token, new id), not a member of the old one.
    expect(c.status?.clusterId).toBeTruthy();
    expect(c.status?.clusterId).not.toBe(src.status?.clusterId);
    expect(c.status?.lastOperation).toMatchObject({ type: 'Bootstrap', result: 'Succeeded' });
    await expectClusterData(h, ns, 'copy', 'known', written);
    expect(currentRevision(clientEndpoint(ns, 'copy'))).toBeGreaterThanOrEqual(artifact.revision);
    // status.restore: the snapshot's revision (etcdutl snapshot status: exact, where the artifact's is a lower bound).
    const restored = await eventually(
      'status.restore of copy',
      async () => (await getCluster(h, ns, 'copy')).status?.restore,
      120_000,
      1000,
    );
    expect(restored.revision).toBeGreaterThanOrEqual(artifact.revision);
    expect(restored.revision).toBeLessThan(currentRevision(clientEndpoint(ns, 'copy')));
    expect(restored.time).toBeUndefined();

    // Only the seed ran the restore; the others joined as usual.
    const pods = await h.core.listNamespacedPod({
      namespace: ns,
      labelSelector: 'etcd.conductor.dev/cluster=copy',
    });
    const withInit = pods.items.filter((p) =>
      (p.spec?.initContainers ?? []).some((i) => i.name === 'restore'),
    );
    expect(withInit.map((p) => p.metadata?.name)).toEqual(['copy-0']);
    // Credentials reach the init container only by reference.
    const init = withInit[0]?.spec?.initContainers?.[0];
    expect(JSON.stringify(init)).not.toContain(h.stack.s3.secretAccessKey);
    expect(init?.env?.map((e) => e.valueFrom?.secretKeyRef?.name)).toEqual([
      's3-credentials',
      's3-credentials',
    ]);
  });

  test('a 1-member cluster restored from the object named directly (s3 key + sha256) holds the same keys', async () => {
    const { bucket, key } = s3Location(artifact.uri);
    await createCluster(h, ns, 'direct', {
      replicas: 1,
      bootstrap: {
        restore: {
          source: {
            s3: {
              endpoint: podS3Endpoint(h),
              bucket,
              key,
              region: h.stack.s3.region,
              forcePathStyle: true,
              credentialsSecretRef: { name: 's3-credentials' },
            },
            sha256: artifact.sha256.toUpperCase(),
          },
        },
      },
    });
    await waitConverged(h, ns, 'direct', 1, 300_000);
    await expectClusterData(h, ns, 'direct', 'known', written);
  });

  test('an object that does not exist is refused with SourceNotFound in status', async () => {
    await createCluster(h, ns, 'missing', {
      replicas: 3,
      bootstrap: {
        restore: {
          source: {
            s3: {
              endpoint: podS3Endpoint(h),
              bucket: h.stack.s3.bucket,
              key: `e2e/${ns}/no-such-snapshot.db`,
              region: h.stack.s3.region,
              forcePathStyle: true,
              credentialsSecretRef: { name: 's3-credentials' },
            },
            sha256: artifact.sha256,
          },
        },
      },
    });
    const refused = await eventually(
      'the restore to be refused',
      async () => {
        const c = await getCluster(h, ns, 'missing');
        const degraded = c.status?.conditions?.find((x) => x.type === 'Degraded');
        return degraded?.reason === 'RestoreFailed' ? degraded : undefined;
      },
      240_000,
      1000,
    );
    expect(refused.message).toContain('SourceNotFound');
    const pods = await h.core.listNamespacedPod({
      namespace: ns,
      labelSelector: 'etcd.conductor.dev/cluster=missing',
    });
    expect(pods.items.map((p) => p.metadata?.name)).toEqual(['missing-0']);
  });

  test('a corrupted object (bytes flipped in MinIO) is refused: RestoreFailed with ChecksumMismatch in status and an Event, and no other member is created', async () => {
    const s3 = s3Client(h);
    const stored = await hashObject(s3, artifact.uri);
    const flipped = Buffer.from(stored.bytes);
    for (const at of [100, Math.floor(flipped.length / 2), flipped.length - 40])
      flipped[at] = (flipped[at] ?? 0) ^ 0xff;
    await putObject(s3, artifact.uri, flipped);

    await createCluster(h, ns, 'bad', {
      replicas: 3,
      bootstrap: { restore: { source: { snapshotRef: { name: 'snap' } } } },
    });
    const refused = await eventually(
      'the restore to be refused',
      async () => {
        const c = await getCluster(h, ns, 'bad');
        const degraded = c.status?.conditions?.find((x) => x.type === 'Degraded');
        return degraded?.reason === 'RestoreFailed' && c.status?.lastOperation ? c : undefined;
      },
      240_000,
      1000,
    );
    const degraded = refused.status?.conditions?.find((x) => x.type === 'Degraded');
    expect(degraded).toMatchObject({ status: 'True' });
    expect(degraded?.message).toContain('ChecksumMismatch');
    expect(refused.status?.lastOperation).toMatchObject({ type: 'Bootstrap', result: 'Failed' });
    expect(refused.status?.conditions?.find((x) => x.type === 'Progressing')?.reason).toBe('OperationFailed');
    const events = await eventsFor(h, ns, 'bad');
    expect(events.filter((e) => e.reason === 'RestoreFailed' && e.type === 'Warning').length).toBeGreaterThan(
      0,
    );
    expect(events.find((e) => e.reason === 'RestoreFailed')?.message).toContain('ChecksumMismatch');

    const pods = await h.core.listNamespacedPod({
      namespace: ns,
      labelSelector: 'etcd.conductor.dev/cluster=bad',
    });
    expect(pods.items.map((p) => p.metadata?.name)).toEqual(['bad-0']);
    const claims = await h.core.listNamespacedPersistentVolumeClaim({
      namespace: ns,
      labelSelector: 'etcd.conductor.dev/cluster=bad',
    });
    expect(claims.items.map((p) => p.metadata?.name)).toEqual(['data-bad-0']);
  });
});
