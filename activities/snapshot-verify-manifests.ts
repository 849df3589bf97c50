// Builds a snapshot's verification Job (the agent reading the stored object back, restoring it into an emptyDir and
// asking a throwaway loopback etcd for revision, key count and hashkv) as plain data; names derive from the EtcdSnapshot.
//
// Invariants: the Job never names the source cluster's members (it has no endpoint to reach them); credentials reach it
// only as env secretKeyRefs, as the snapshot Job's; a claim destination is mounted read-only.
import type { EtcdSnapshotSpec, SnapshotArtifact } from '../crds/etcd-snapshot';
import { API_VERSION } from '../crds/etcd-cluster';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { ETCD_SNAPSHOT, SnapshotLabels } from '../crds/etcd-snapshot';
import { VERIFY_JOB_DEADLINE_SECONDS } from '../contracts/snapshot';
import { jobWithAdditionalMetadata } from './additional-metadata';
import type { JobPlacement, SnapshotRef } from './snapshot-manifests';
import {
  AGENT_CONTAINER,
  AGENT_POD_FAILURE_POLICY,
  credentialEnv,
  RESTRICTED_CONTAINER_SECURITY,
  RESTRICTED_POD_SECURITY,
  SNAPSHOT_MOUNT,
  snapshotFileTarget,
  snapshotJobName,
  snapshotObjectKey,
} from './snapshot-manifests';

/** The emptyDir the verifier downloads, restores and runs etcd in. */
export const VERIFY_WORK_DIR = '/work';
/** A crashed Pod (killed, lost node) gets one more; a failure the agent reported ends the Job at once. */
export const VERIFY_JOB_BACKOFF_LIMIT = 1;
/** Download, restore and one etcd start of etcd's 8 GiB maximum fit well inside; a Pod never scheduled ends here too. */
export { VERIFY_JOB_DEADLINE_SECONDS };
/** The finished Job and its Pod go away on their own; the result is in the EtcdSnapshot's status by then. */
export const VERIFY_JOB_TTL_SECONDS = 600;
/** Room in the work dir beyond twice the snapshot: the restored WAL preallocates 64 MiB, etcd adds a little. */
const WORK_DIR_SLACK_BYTES = 256 * 1024 * 1024;

/** `<snapshot>-verify-<run>`, at most 63 characters; run 1 is the check after upload, later runs are re-checks. */
export function verifyJobName(snapshot: string, run: number): string {
  return snapshotJobName(`${snapshot}-verify`, run);
}

/** The agent's flags: where the object is, what its upload measured, the revision to hash. */
export function verifyArgs(
  spec: Pick<EtcdSnapshotSpec, 'destination'>,
  snapshot: string,
  artifact: Pick<SnapshotArtifact, 'sha256'>,
  hashRevision: number,
): string[] {
  const { s3, pvc } = spec.destination;
  const source: string[] = s3
    ? [
        '--s3-endpoint',
        s3.endpoint,
        '--s3-bucket',
        s3.bucket,
        '--s3-key',
        snapshotObjectKey(s3.key, snapshot),
        '--s3-region',
        s3.region,
        ...(s3.forcePathStyle ? ['--s3-force-path-style'] : []),
      ]
    : pvc
      ? ['--file', snapshotFileTarget(pvc, snapshot).file]
      : [];
  if (source.length === 0) throw new Error('a destination needs s3 or pvc');
  return [
    'verify',
    ...source,
    '--sha256',
    artifact.sha256,
    '--work-dir',
    VERIFY_WORK_DIR,
    '--hash-revision',
    String(hashRevision),
  ];
}

/** Twice the snapshot (the download, then the restored database) plus slack, in bytes. */
export function workDirSizeLimit(snapshotBytes: number): string {
  return String(2 * Math.max(0, snapshotBytes) + WORK_DIR_SLACK_BYTES);
}

export interface VerifyJobInput {
  snapshot: SnapshotRef;
  spec: Pick<EtcdSnapshotSpec, 'destination' | 'clusterRef'>;
  artifact: Pick<SnapshotArtifact, 'sha256' | 'size'>;
  /** The revision whose hashkv the source reported (the artifact's revision). */
  hashRevision: number;
  run: number;
  image: string;
  /** The cluster's placement (jobPlacement), as for the snapshot Job. */
  placement?: JobPlacement;
  metadata?: Pick<EtcdClusterSpec, 'additionalMetadata'>;
}

export function verifyJob(input: VerifyJobInput) {
  return jobWithAdditionalMetadata(verifyJobManifest(input), input.metadata);
}

function verifyJobManifest(input: VerifyJobInput) {
  const { snapshot, spec } = input;
  const pvc = spec.destination.pvc;
  const s3 = spec.destination.s3;
  const labels = {
    'app.kubernetes.io/name': 'etcd-snapshot-verify',
    'app.kubernetes.io/instance': spec.clusterRef.name,
    'app.kubernetes.io/managed-by': 'etcd-conductor',
    [SnapshotLabels.snapshot]: snapshot.name,
  };
  const sub = pvc?.subPath.replace(/^\/+|\/+$/g, '');
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: verifyJobName(snapshot.name, input.run),
      namespace: snapshot.namespace,
      labels,
      ownerReferences: [
        {
          apiVersion: API_VERSION,
          kind: ETCD_SNAPSHOT.kind,
          name: snapshot.name,
          uid: snapshot.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      backoffLimit: VERIFY_JOB_BACKOFF_LIMIT,
      activeDeadlineSeconds: VERIFY_JOB_DEADLINE_SECONDS,
      ttlSecondsAfterFinished: VERIFY_JOB_TTL_SECONDS,
      podFailurePolicy: AGENT_POD_FAILURE_POLICY,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          ...input.placement,
          securityContext: RESTRICTED_POD_SECURITY,
          containers: [
            {
              name: AGENT_CONTAINER,
              image: input.image,
              command: ['etcd-conductor'],
              args: verifyArgs(spec, snapshot.name, input.artifact, input.hashRevision),
              env: s3 ? credentialEnv(s3.credentialsSecretRef.name) : [],
              terminationMessagePath: '/dev/termination-log',
              terminationMessagePolicy: 'File',
              securityContext: RESTRICTED_CONTAINER_SECURITY,
              volumeMounts: [
                { name: 'work', mountPath: VERIFY_WORK_DIR },
                ...(pvc
                  ? [
                      {
                        name: 'destination',
                        mountPath: SNAPSHOT_MOUNT,
                        readOnly: true,
                        ...(sub ? { subPath: sub } : {}),
                      },
                    ]
                  : []),
              ],
            },
          ],
          volumes: [
            { name: 'work', emptyDir: { sizeLimit: workDirSizeLimit(input.artifact.size) } },
            ...(pvc
              ? [
                  {
                    name: 'destination',
                    persistentVolumeClaim: { claimName: pvc.claimName, readOnly: true },
                  },
                ]
              : []),
          ],
        },
      },
    },
  };
}
