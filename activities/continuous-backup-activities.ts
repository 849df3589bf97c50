// The continuous backup's one activity: keeps the archiver's Deployment as spec.backup.continuous says (created,
// replaced when what the archiver sees changed, deleted when it is unset) and reads the archiver's state object from
// the store. Idempotent: names derive from the cluster, and the template hash says whether a change is needed.
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { BackupS3Location, EtcdClusterSpec } from '../crds/etcd-cluster';
import {
  archiveRoot,
  CONTINUOUS_FORMAT,
  stateKey,
  type ArchiveState,
  type ContinuousBackupReport,
} from '../contracts/continuous-backup';
import type { ClusterRef } from '../contracts/cluster-ref';
import { ARCHIVER_TEMPLATE_HASH_ANNOTATION, archiverDeployment, archiverName } from './archiver-manifests';
import type { KubeObjects } from './kube-objects';
import type { S3Credentials } from './s3-store';

/** Reads one object; undefined when it does not exist. A fake stands in for it in unit tests. */
export type ReadObject = (
  location: Omit<BackupS3Location, 'key' | 'credentialsSecretRef'>,
  key: string,
  credentials: S3Credentials,
) => Promise<Buffer | undefined>;

export interface ContinuousBackupDeps {
  kube: KubeObjects;
  agentImage: string;
  readObject: ReadObject;
}

export const readS3Object: ReadObject = async (location, key, credentials) => {
  const client = new S3Client({
    endpoint: location.endpoint,
    region: location.region,
    forcePathStyle: location.forcePathStyle,
    credentials,
    maxAttempts: 1,
    requestHandler: { connectionTimeout: 5_000, requestTimeout: 20_000 },
  });
  try {
    const r = await client.send(new GetObjectCommand({ Bucket: location.bucket, Key: key }));
    return r.Body ? Buffer.from(await r.Body.transformToByteArray()) : Buffer.alloc(0);
  } catch (e) {
    const name = (e as { name?: string }).name ?? 'Error';
    if (name === 'NoSuchKey' || name === 'NotFound') return undefined;
    // The SDK's name says what S3 answered (AccessDenied, NoSuchBucket, ...); its message never carries the secret.
    throw new Error(`${name}: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`, { cause: e });
  } finally {
    client.destroy();
  }
};

type Deployment = KubernetesObject & { metadata?: { annotations?: Record<string, string> } };

export function createContinuousBackupActivities(deps: ContinuousBackupDeps) {
  const { kube } = deps;

  async function keepDeployment(
    ref: ClusterRef,
    spec: EtcdClusterSpec,
  ): Promise<ContinuousBackupReport['deployment']> {
    const objRef = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      namespace: ref.namespace,
      name: archiverName(ref.name),
    };
    if (!spec.backup?.continuous || !spec.backup.destination.s3) {
      return (await kube.deleteIfPresent(objRef)) === 'deleted' ? 'deleted' : 'absent';
    }
    const wanted = archiverDeployment(ref, spec, deps.agentImage);
    const existing = await kube.read<Deployment>(objRef);
    const wantedHash = wanted.metadata.annotations[ARCHIVER_TEMPLATE_HASH_ANNOTATION];
    if (existing && existing.metadata?.annotations?.[ARCHIVER_TEMPLATE_HASH_ANNOTATION] === wantedHash)
      return 'unchanged';
    if (existing) {
      // Delete, then create on this or the next look: with one Recreate replica nothing runs twice, and the new
      // archiver resumes from the store. A merge patch would keep map keys the new spec dropped.
      await kube.deleteIfPresent(objRef, existing.metadata?.uid ? { uid: existing.metadata.uid } : {});
      return (await kube.createIfAbsent(wanted)) === 'created' ? 'replaced' : 'waiting';
    }
    return (await kube.createIfAbsent(wanted)) === 'created' ? 'created' : 'waiting';
  }

  async function credentialsOf(namespace: string, secretName: string): Promise<S3Credentials | string> {
    const secret = await kube.read<KubernetesObject & { data?: Record<string, string> }>({
      apiVersion: 'v1',
      kind: 'Secret',
      namespace,
      name: secretName,
    });
    const id = secret?.data?.AWS_ACCESS_KEY_ID;
    const key = secret?.data?.AWS_SECRET_ACCESS_KEY;
    if (!id || !key)
      return `the Secret ${namespace}/${secretName} is missing or lacks AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY`;
    return {
      accessKeyId: Buffer.from(id, 'base64').toString('utf8'),
      secretAccessKey: Buffer.from(key, 'base64').toString('utf8'),
    };
  }

  async function readState(
    ref: ClusterRef,
    spec: EtcdClusterSpec,
  ): Promise<Pick<ContinuousBackupReport, 'state' | 'storeProblem'>> {
    const s3 = spec.backup?.destination.s3;
    if (!spec.backup?.continuous || !s3) return {};
    const creds = await credentialsOf(ref.namespace, s3.credentialsSecretRef.name);
    if (typeof creds === 'string') return { storeProblem: creds };
    const key = stateKey(archiveRoot(s3.key, ref.uid));
    let bytes: Buffer | undefined;
    try {
      bytes = await deps.readObject(s3, key, creds);
    } catch (e) {
      return {
        storeProblem:
          `reading s3://${s3.bucket}/${key} failed: ${e instanceof Error ? e.message : String(e)}`.slice(
            0,
            400,
          ),
      };
    }
    if (!bytes) return {};
    try {
      const s = JSON.parse(bytes.toString('utf8')) as ArchiveState;
      if (s.format !== CONTINUOUS_FORMAT || s.clusterUid !== ref.uid)
        throw new Error("not this cluster's state");
      return { state: { latestRevision: s.latestRevision, latestTime: s.latestTime, gaps: s.gaps ?? [] } };
    } catch (e) {
      return {
        storeProblem: `s3://${s3.bucket}/${key} is not an archiver state: ${e instanceof Error ? e.message : String(e)}`,
      };
    }
  }

  return {
    /** Makes the archiver's Deployment match spec.backup.continuous and reads what the store holds. */
    async keepContinuousBackup(input: {
      ref: ClusterRef;
      spec: EtcdClusterSpec;
    }): Promise<ContinuousBackupReport> {
      const deployment = await keepDeployment(input.ref, input.spec);
      return { deployment, ...(await readState(input.ref, input.spec)) };
    },
  };
}

export type ContinuousBackupActivities = ReturnType<typeof createContinuousBackupActivities>;
