// The continuous backup's Deployment (one archiver Pod per EtcdCluster with spec.backup.continuous) as plain data.
//
// Invariants: one replica and the Recreate strategy, so two archivers never write one archive at once; owned by the
// EtcdCluster, so it goes with it; credentials only as secretKeyRefs; the template's hash in an annotation, so a
// changed spec is seen without comparing what the apiserver defaulted.
import { createHash } from 'node:crypto';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { CONTINUOUS_BACKUP_DEFAULTS } from '../crds/etcd-cluster';
import { clientEndpointFor, tlsSecretNames } from '../crds/tls-names';
import { jobWithAdditionalMetadata } from './additional-metadata';
import { ownerReference } from './member-manifests';
import { parseDuration } from './auto-tls-certificates';
import {
  AGENT_CONTAINER,
  AGENT_TLS_DIR,
  agentTLSArgs,
  credentialEnv,
  etcdAuthEnv,
  jobPlacement,
  RESTRICTED_CONTAINER_SECURITY,
  RESTRICTED_POD_SECURITY,
} from './snapshot-manifests';

export const ARCHIVER_TEMPLATE_HASH_ANNOTATION = 'etcd.conductor.dev/archiver-template-hash';
/** Where the full snapshot passes through on its way to the store. */
export const ARCHIVER_WORK_DIR = '/work';

export interface ArchiverRef {
  namespace: string;
  name: string;
  uid: string;
}

/** `<cluster>-archiver`: the cluster name is at most 63 characters, so the Deployment's is at most 72 (< 253). */
export const archiverName = (cluster: string) => `${cluster}-archiver`;

const seconds = (duration: string, fallback: string) =>
  Math.floor((parseDuration(duration) ?? parseDuration(fallback)!) / 1000);

/** The archiver's command line for this spec (agent/archive-args.ts reads it); undefined without spec.backup.continuous or s3. */
export function archiverArgs(ref: ArchiverRef, spec: EtcdClusterSpec): string[] | undefined {
  const continuous = spec.backup?.continuous;
  const s3 = spec.backup?.destination.s3;
  if (!continuous || !s3) return undefined;
  const tls = tlsSecretNames(spec, ref.name).operator;
  return [
    'archive',
    '--endpoint',
    clientEndpointFor(spec, ref),
    ...(tls ? agentTLSArgs() : []),
    '--s3-endpoint',
    s3.endpoint,
    '--s3-bucket',
    s3.bucket,
    '--s3-key',
    s3.key,
    '--s3-region',
    s3.region,
    ...(s3.forcePathStyle ? ['--s3-force-path-style'] : []),
    '--cluster-uid',
    ref.uid,
    '--work-dir',
    ARCHIVER_WORK_DIR,
    '--full-snapshot-interval-seconds',
    String(seconds(continuous.fullSnapshotInterval, CONTINUOUS_BACKUP_DEFAULTS.fullSnapshotInterval)),
    '--max-lag-seconds',
    String(continuous.maxLagSeconds ?? CONTINUOUS_BACKUP_DEFAULTS.maxLagSeconds),
    '--retention-seconds',
    String(seconds(continuous.retention, CONTINUOUS_BACKUP_DEFAULTS.retention)),
  ];
}

export function archiverDeployment(ref: ArchiverRef, spec: EtcdClusterSpec, image: string) {
  const args = archiverArgs(ref, spec);
  if (!args) throw new Error('the archiver needs spec.backup.continuous and spec.backup.destination.s3');
  const s3 = spec.backup!.destination.s3!;
  const tls = tlsSecretNames(spec, ref.name).operator;
  const auth = spec.auth?.rootSecretRef.name;
  const labels = {
    'app.kubernetes.io/name': 'etcd-archiver',
    'app.kubernetes.io/instance': ref.name,
    'app.kubernetes.io/managed-by': 'etcd-conductor',
  };
  const template = {
    metadata: { labels },
    spec: {
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      ...jobPlacement(spec),
      securityContext: RESTRICTED_POD_SECURITY,
      // A SIGTERM ends the watch and lets the upload in flight finish or abort; what was not uploaded is read again.
      terminationGracePeriodSeconds: 30,
      containers: [
        {
          name: AGENT_CONTAINER,
          image,
          command: ['etcd-conductor'],
          args,
          env: [...credentialEnv(s3.credentialsSecretRef.name), ...(auth ? etcdAuthEnv(auth) : [])],
          securityContext: RESTRICTED_CONTAINER_SECURITY,
          volumeMounts: [
            { name: 'work', mountPath: ARCHIVER_WORK_DIR },
            ...(tls ? [{ name: 'etcd-tls', mountPath: AGENT_TLS_DIR, readOnly: true }] : []),
          ],
        },
      ],
      volumes: [
        { name: 'work', emptyDir: {} },
        ...(tls ? [{ name: 'etcd-tls', secret: { secretName: tls, defaultMode: 0o440 } }] : []),
      ],
    },
  };
  const hash = createHash('sha256')
    .update(JSON.stringify({ image, template, metadata: spec.additionalMetadata ?? {} }))
    .digest('hex')
    .slice(0, 16);
  return jobWithAdditionalMetadata(
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: {
        name: archiverName(ref.name),
        namespace: ref.namespace,
        labels,
        annotations: { [ARCHIVER_TEMPLATE_HASH_ANNOTATION]: hash },
        ownerReferences: [ownerReference(ref)],
      },
      spec: {
        replicas: 1,
        // Never two archivers at once: the old Pod is gone before the new one starts (it resumes from the store).
        strategy: { type: 'Recreate' },
        selector: { matchLabels: labels },
        template,
      },
    },
    spec,
  );
}
