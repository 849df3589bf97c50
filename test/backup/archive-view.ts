// What the e2e files about continuous backup read: the archive's objects in the stack's MinIO (keys, bytes, the
// changes its chunks hold), a cluster's keys at a revision, and a restore refused by the operator.
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import type { ArchivedChange } from '../../contracts/continuous-backup';
import type { EtcdCluster, PointInTime } from '../../crds/etcd-cluster';
import { memberClientURL } from '../../crds/names';
import type { Harness } from '../support/cluster-harness';
import { eventually, getCluster } from '../support/cluster-harness';
import { strictClient } from '../support/writer';
import { minioDestination } from './backup-harness';

export interface ArchiveView {
  /** Every object key under `prefix`, sorted. */
  listKeys(prefix: string): Promise<string[]>;
  getBytes(key: string): Promise<Buffer>;
  /** Every change the chunks under `root` hold, read from the stored lines (header first, then one change a line). */
  archivedChanges(root: string): Promise<ArchivedChange[]>;
}

export function archiveView(h: Harness, s3: S3Client): ArchiveView {
  const listKeys = async (prefix: string) => {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await s3.send(
        new ListObjectsV2Command({ Bucket: h.stack.s3.bucket, Prefix: prefix, ContinuationToken: token }),
      );
      for (const o of page.Contents ?? []) if (o.Key) keys.push(o.Key);
      token = page.NextContinuationToken;
    } while (token);
    return keys.sort();
  };
  const getBytes = async (key: string) => {
    const got = await s3.send(new GetObjectCommand({ Bucket: h.stack.s3.bucket, Key: key }));
    return Buffer.from(await got.Body!.transformToByteArray());
  };
  const archivedChanges = async (root: string) => {
    const changes: ArchivedChange[] = [];
    for (const key of (await listKeys(root)).filter((k) => k.endsWith('.chunk'))) {
      const lines = (await getBytes(key)).toString('utf8').split('\n').slice(1);
      for (const line of lines.filter((l) => l !== '')) changes.push(JSON.parse(line) as ArchivedChange);
    }
    return changes.sort((a, b) => a.revision - b.revision);
  };
  return { listKeys, getBytes, archivedChanges };
}

/** Every key and value of the cluster at `revision` (all of them when undefined), read from one member. */
export async function keysAt(
  namespace: string,
  name: string,
  member: string,
  revision?: number,
): Promise<{ revision: number; kvs: Map<string, string> }> {
  const c = strictClient([memberClientURL({ namespace, name }, member)], {}, 10_000);
  try {
    const res = await c.kv.range({
      key: Buffer.from([0]),
      range_end: Buffer.from([0]),
      ...(revision !== undefined ? { revision } : {}),
    });
    // With a revision asked for, the header still says the store's current one.
    return {
      revision: revision ?? Number(res.header.revision),
      kvs: new Map(res.kvs.map((kv) => [kv.key.toString(), kv.value.toString()])),
    };
  } finally {
    c.close();
  }
}

/** Waits until the restore of `name` was refused (RestoreFailed) and returns the cluster. */
export function waitRefused(h: Harness, namespace: string, name: string): Promise<EtcdCluster> {
  return eventually(
    `the restore of ${name} to be refused`,
    async () => {
      const c = await getCluster(h, namespace, name);
      const degraded = c.status?.conditions?.find((x) => x.type === 'Degraded');
      return degraded?.reason === 'RestoreFailed' && c.status?.lastOperation ? c : undefined;
    },
    240_000,
    1000,
  );
}

/** A one-member cluster's spec restored from the continuous backup of `src` (uid `sourceUid`) in `namespace`'s folder. */
export function continuousRestoreSpec(
  h: Harness,
  namespace: string,
  sourceUid: string,
  pointInTime?: PointInTime,
) {
  return {
    replicas: 1,
    bootstrap: {
      restore: {
        source: {
          continuous: {
            destination: minioDestination(h, 's3-credentials', `e2e/${namespace}`) as {
              s3: NonNullable<ReturnType<typeof minioDestination>['s3']>;
            },
            cluster: { name: 'src', uid: sourceUid },
          },
        },
        ...(pointInTime ? { pointInTime } : {}),
      },
    },
  };
}
