// End-to-end: every stored snapshot is read back, restored into a throwaway etcd by a Job and checked. A snapshot of a
// cluster with known keys is Verified with the cluster's revision, key count and hashkv; the same object altered in
// MinIO, then deleted, and checked again on request says Verified=False naming the cause; the snapshot stays.
import { execFileSync } from 'node:child_process';
import { BatchV1Api } from '@kubernetes/client-node';
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { API_GROUP, API_VERSION_NAME } from '../../crds/etcd-cluster';
import type { EtcdSnapshot } from '../../crds/etcd-snapshot';
import { ETCD_SNAPSHOT, VERIFY_REQUEST_ANNOTATION } from '../../crds/etcd-snapshot';
import { memberClientURL } from '../../crds/names';
import type { Harness } from '../support/cluster-harness';
import {
  clientEndpoint,
  connect,
  createCluster,
  etcdClient,
  eventually,
  freshNamespace,
  getCluster,
  waitConverged,
  writeKeys,
} from '../support/cluster-harness';
import {
  createCredentialsSecret,
  createSnapshot,
  eventsFor,
  getSnapshot,
  hashObject,
  minioDestination,
  putObject,
  s3Client,
  s3Location,
  waitFinished,
} from './backup-harness';

jest.setTimeout(900_000);

let h: Harness;
beforeAll(() => {
  h = connect();
});

const verified = (s: EtcdSnapshot) => s.status?.conditions?.find((c) => c.type === 'Verified');

/** Waits until the check answering `request` (undefined: the one after upload) has ended, and returns the snapshot. */
function waitChecked(ns: string, name: string, request?: string): Promise<EtcdSnapshot> {
  return eventually(
    `EtcdSnapshot ${ns}/${name} checked${request ? ` for request ${request}` : ''}`,
    async () => {
      const s = await getSnapshot(h, ns, name);
      const v = verified(s);
      if (!v || v.status === 'Unknown') return undefined;
      return s.status?.verification?.request === request ? s : undefined;
    },
    400_000,
    2000,
  );
}

async function requestCheck(ns: string, name: string, request: string): Promise<void> {
  const { setHeaderOptions, PatchStrategy } = await import('@kubernetes/client-node');
  await h.custom.patchNamespacedCustomObject(
    {
      group: API_GROUP,
      version: API_VERSION_NAME,
      plural: ETCD_SNAPSHOT.plural,
      namespace: ns,
      name,
      body: { metadata: { annotations: { [VERIFY_REQUEST_ANNOTATION]: request } } },
    },
    // A JSON merge patch: only the annotation changes.
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

/** hashkv of one member at `revision`, asked with etcdctl (the etcd3 client's call is broken), independent of the operator. */
function memberHashAt(ns: string, cluster: string, member: string, revision: number) {
  const etcdctl = `${Object.values(h.stack.tools.etcdBinDirs).find((d) => d.includes('3.6')) ?? ''}/etcdctl`;
  const out = execFileSync(
    etcdctl,
    [
      '--endpoints',
      memberClientURL({ namespace: ns, name: cluster }, member),
      '--command-timeout=10s',
      'endpoint',
      'hashkv',
      `--rev=${revision}`,
      '-w',
      'json',
    ],
    { encoding: 'utf8' },
  );
  const [row] = JSON.parse(out) as { HashKV: { hash: number; compact_revision?: number } }[];
  return { hash: row?.HashKV.hash, compactRevision: row?.HashKV.compact_revision ?? 0 };
}

test('a stored snapshot is Verified with the cluster revision, keys and hashkv; altered, then deleted in MinIO, a re-check says so', async () => {
  const ns = await freshNamespace(h, 'verify');
  await createCluster(h, ns, 'main', { replicas: 1 });
  await waitConverged(h, ns, 'main', 1, 300_000);
  await writeKeys(ns, 'main', 'known', 40);
  // What the cluster holds, with nothing writing: its key count and revision.
  const client = etcdClient([clientEndpoint(ns, 'main')]);
  const had = await client.kv
    .range({ key: Buffer.from([0]), range_end: Buffer.from([0]), count_only: true })
    .finally(() => client.close());
  const cluster = { revision: Number(had.header.revision), keys: Number(had.count) };
  expect(cluster.keys).toBeGreaterThanOrEqual(40);

  await createCredentialsSecret(h, ns, 's3-credentials');
  await createSnapshot(h, ns, 'checked', {
    clusterRef: { name: 'main' },
    destination: minioDestination(h, 's3-credentials', `verify/${ns}`),
  });
  const done = await waitFinished(h, ns, 'checked');
  expect(done.status?.phase).toBe('Succeeded');
  const artifact = done.status?.artifact;
  if (!artifact) throw new Error('no artifact');

  const first = await waitChecked(ns, 'checked');
  expect(verified(first)).toMatchObject({ status: 'True', reason: 'SnapshotVerified' });
  expect(verified(first)?.message).toContain("equals the source's");
  const v = first.status?.verification;
  expect(v).toMatchObject({
    run: 1,
    revision: cluster.revision,
    keys: cluster.keys,
    hashRevision: artifact.revision,
  });
  expect(v?.sourceHash).toBe(v?.hash);
  // The member's own hashkv at that revision, asked here, is what the restored copy answered.
  const member = (await getCluster(h, ns, 'main')).status?.members?.[0]?.name ?? 'main-0';
  const source = memberHashAt(ns, 'main', member, artifact.revision);
  expect(source.hash).toBe(v?.hash);
  expect(Number.isNaN(Date.parse(v?.verifiedAt ?? ''))).toBe(false);
  // The Event follows the status write (workflows/snapshot-verify-step.ts): wait for it, do not race it.
  await eventually('the SnapshotVerified Event', async () =>
    (await eventsFor(h, ns, 'checked')).some((e) => e.reason === 'SnapshotVerified') ? true : undefined,
  );
  const job = await h.kc
    .makeApiClient(BatchV1Api)
    .readNamespacedJob({ namespace: ns, name: v?.jobName ?? 'checked-verify-1' });
  expect(job.spec).toMatchObject({
    activeDeadlineSeconds: 1800,
    backoffLimit: 1,
    ttlSecondsAfterFinished: 600,
  });
  expect(JSON.stringify(job.spec?.template.spec)).not.toMatch(/main-peer|:2379/);

  // The stored object altered after upload (one byte of the middle flipped), then checked again on request.
  const s3 = s3Client(h);
  const stored = await hashObject(s3, artifact.uri);
  expect(stored.sha256).toBe(artifact.sha256);
  const bytes = Buffer.from(stored.bytes);
  const at = Math.floor(bytes.length / 2);
  bytes[at] = (bytes[at] ?? 0) ^ 0xff;
  await putObject(s3, artifact.uri, bytes);
  const alteredSha = (await hashObject(s3, artifact.uri)).sha256;
  await requestCheck(ns, 'checked', 'after-alter');
  const altered = await waitChecked(ns, 'checked', 'after-alter');
  expect(verified(altered)).toMatchObject({ status: 'False', reason: 'ObjectAltered' });
  expect(verified(altered)?.message).toContain(alteredSha);
  expect(verified(altered)?.message).toContain(artifact.sha256);
  expect(altered.status?.verification).toMatchObject({ run: 2, request: 'after-alter' });
  // Nothing was measured this time: no figure of the first check is left beside the new verdict.
  expect(altered.status?.verification?.hash).toBeUndefined();
  expect(altered.status?.verification?.revision).toBeUndefined();
  expect(altered.status?.verification?.sourceHash).toBe(v?.sourceHash);
  // The snapshot itself is untouched: still Succeeded and Ready, its object still there.
  expect(altered.status?.phase).toBe('Succeeded');
  expect(altered.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
  expect(altered.status?.artifact).toEqual(artifact);
  expect((await hashObject(s3, artifact.uri)).sha256).toBe(alteredSha);
  const warnings = await eventually('the SnapshotVerificationFailed Event', async () => {
    const found = (await eventsFor(h, ns, 'checked')).filter(
      (e) => e.reason === 'SnapshotVerificationFailed',
    );
    return found.length > 0 ? found : undefined;
  });
  expect(warnings.map((e) => e.type)).toContain('Warning');
  expect(warnings.some((e) => e.message.startsWith('ObjectAltered'))).toBe(true);

  // The object gone: a re-check names that.
  const { bucket, key } = s3Location(artifact.uri);
  await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
  await requestCheck(ns, 'checked', 'after-delete');
  const missing = await waitChecked(ns, 'checked', 'after-delete');
  expect(verified(missing)).toMatchObject({ status: 'False', reason: 'ObjectMissing' });
  expect(missing.status?.phase).toBe('Succeeded');
  expect(missing.status?.verification).toMatchObject({ run: 3, request: 'after-delete' });
  expect(missing.status?.verification?.keys).toBeUndefined();
});
