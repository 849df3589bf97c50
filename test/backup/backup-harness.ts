// What the backup journeys share: the stack's MinIO as an S3 client and a credentials Secret, EtcdSnapshot helpers, and hashing stored objects.
import { createHash } from 'node:crypto';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { API_GROUP, API_VERSION, API_VERSION_NAME } from '../../crds/etcd-cluster';
import type { EtcdSnapshot, EtcdSnapshotSpec, SnapshotDestination } from '../../crds/etcd-snapshot';
import { ETCD_SNAPSHOT } from '../../crds/etcd-snapshot';
import type { Harness } from '../support/cluster-harness';
import { eventually } from '../support/cluster-harness';

const snapshotCrd = { group: API_GROUP, version: API_VERSION_NAME, plural: ETCD_SNAPSHOT.plural };

export function s3Client(h: Harness): S3Client {
  const { endpoint, region, accessKeyId, secretAccessKey } = h.stack.s3;
  return new S3Client({
    endpoint,
    region,
    forcePathStyle: true,
    credentials: { accessKeyId, secretAccessKey },
  });
}

/** A Secret with the stack's MinIO credentials (or the given wrong ones) under the keys the agent reads. */
export async function createCredentialsSecret(
  h: Harness,
  namespace: string,
  name: string,
  override?: { accessKeyId: string; secretAccessKey: string },
): Promise<void> {
  const { accessKeyId, secretAccessKey } = override ?? h.stack.s3;
  await h.core.createNamespacedSecret({
    namespace,
    body: {
      metadata: { name },
      stringData: { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey },
    },
  });
}

/**
 * The stack's MinIO as Pods reach it: what an EtcdCluster or EtcdSnapshot names, since the snapshot Job and the
 * restore init container dial it from inside a Pod: the relay on the node bridge (inside a Pod, the host's 127.x
 * address is the Pod itself). The test's own S3 client (s3Client) keeps the host address.
 */
export function podS3Endpoint(h: Harness): string {
  return h.stack.podReachable.s3Endpoint;
}

/** An S3 destination in the stack's MinIO under `prefix`, at the address Pods reach. */
export function minioDestination(
  h: Harness,
  secret: string,
  prefix: string,
  bucket?: string,
): SnapshotDestination {
  return {
    s3: {
      endpoint: podS3Endpoint(h),
      bucket: bucket ?? h.stack.s3.bucket,
      key: prefix,
      region: h.stack.s3.region,
      forcePathStyle: true,
      credentialsSecretRef: { name: secret },
    },
  };
}

export async function createSnapshot(
  h: Harness,
  namespace: string,
  name: string,
  spec: EtcdSnapshotSpec,
): Promise<EtcdSnapshot> {
  return (await h.custom.createNamespacedCustomObject({
    ...snapshotCrd,
    namespace,
    body: { apiVersion: API_VERSION, kind: ETCD_SNAPSHOT.kind, metadata: { name, namespace }, spec },
  })) as EtcdSnapshot;
}

export async function getSnapshot(h: Harness, namespace: string, name: string): Promise<EtcdSnapshot> {
  return (await h.custom.getNamespacedCustomObject({ ...snapshotCrd, namespace, name })) as EtcdSnapshot;
}

export async function listSnapshots(h: Harness, namespace: string): Promise<EtcdSnapshot[]> {
  const list = (await h.custom.listNamespacedCustomObject({ ...snapshotCrd, namespace })) as {
    items: EtcdSnapshot[];
  };
  return list.items;
}

/** Waits until the snapshot's phase is Succeeded or Failed and returns it. */
export async function waitFinished(
  h: Harness,
  namespace: string,
  name: string,
  timeoutMs = 240_000,
): Promise<EtcdSnapshot> {
  return eventually(
    `EtcdSnapshot ${namespace}/${name} to finish`,
    async () => {
      const s = await getSnapshot(h, namespace, name);
      return s.status?.phase === 'Succeeded' || s.status?.phase === 'Failed' ? s : undefined;
    },
    timeoutMs,
    1000,
  );
}

/**
 * Waits until the check of the stored snapshot has ended (its Verified condition is True or False) and returns the
 * snapshot: after that, its verification Job exists beside the snapshot Job and no new one comes.
 */
export async function waitVerified(
  h: Harness,
  namespace: string,
  name: string,
  timeoutMs = 300_000,
): Promise<EtcdSnapshot> {
  return eventually(
    `EtcdSnapshot ${namespace}/${name} to be checked`,
    async () => {
      const s = await getSnapshot(h, namespace, name);
      const v = s.status?.conditions?.find((c) => c.type === 'Verified');
      return v && v.status !== 'Unknown' ? s : undefined;
    },
    timeoutMs,
    1000,
  );
}

/** `s3://bucket/key` split. */
export function s3Location(uri: string): { bucket: string; key: string } {
  const m = /^s3:\/\/([^/]+)\/(.+)$/.exec(uri);
  if (!m?.[1] || !m[2]) throw new Error(`not an s3:// URI: ${uri}`);
  return { bucket: m[1], key: m[2] };
}

/** Downloads the object and returns its size and sha256, computed here. */
export async function hashObject(
  s3: S3Client,
  uri: string,
): Promise<{ size: number; sha256: string; bytes: Buffer }> {
  const { bucket, key } = s3Location(uri);
  const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  const bytes = Buffer.from(await got.Body!.transformToByteArray());
  return { size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex'), bytes };
}

export async function putObject(s3: S3Client, uri: string, bytes: Buffer): Promise<void> {
  const { bucket, key } = s3Location(uri);
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes }));
}

/** Events whose involved object is `name`, as (reason, message) pairs. */
export async function eventsFor(
  h: Harness,
  namespace: string,
  name: string,
): Promise<{ reason: string; message: string; type: string }[]> {
  const events = await h.core.listNamespacedEvent({
    namespace,
    fieldSelector: `involvedObject.name=${name}`,
  });
  return events.items.map((e) => ({ reason: e.reason ?? '', message: e.message ?? '', type: e.type ?? '' }));
}
