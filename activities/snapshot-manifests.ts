// Builds a snapshot's Job (the agent streaming one member's snapshot to S3 or a claim) as plain data; names derive from the EtcdSnapshot.
//
// Invariant: credentials reach the agent only as env secretKeyRefs to the user's Secret; no key or secret
// value is ever part of the manifest, so none is in workflow inputs, history or status either.
import type { EtcdClusterSpec, Toleration } from '../crds/etcd-cluster';
import { API_VERSION } from '../crds/etcd-cluster';
import type {
  JobPlacementOverride,
  PvcLocation,
  S3Location,
  SnapshotDestination,
} from '../crds/etcd-snapshot';
import { ETCD_SNAPSHOT, SnapshotLabels } from '../crds/etcd-snapshot';
import { jobWithAdditionalMetadata } from './additional-metadata';

/** The project's own image; it runs `etcd-conductor snapshot|restore` (agent/main.ts). */
export const DEFAULT_AGENT_IMAGE = 'ghcr.io/etcd-conductor/etcd-conductor:0.1.0';

/** Where the agent finds the destination claim inside its container. */
export const SNAPSHOT_MOUNT = '/snapshots';
export const AGENT_CONTAINER = 'agent';
/** The agent's exit code for a failure it reported in its result; any other non-zero exit is a crash. */
export const AGENT_REPORTED_FAILURE_EXIT_CODE = 1;
/** Pod restarts the Job itself allows for a crash (killed Pod, lost node); a reported failure ends it at once. */
export const SNAPSHOT_JOB_BACKOFF_LIMIT = 2;
/** Upper bound for one Job; a snapshot of etcd's 8 GiB maximum to a slow store fits well inside. */
export const SNAPSHOT_JOB_DEADLINE_SECONDS = 3600;

/** The EtcdSnapshot a Job works for. */
export interface SnapshotRef {
  namespace: string;
  name: string;
  uid: string;
}

/** `<prefix>/<snapshot>.db`; the prefix's trailing slashes do not double up. */
export function snapshotObjectKey(prefix: string, snapshot: string): string {
  const p = prefix.replace(/\/+$/, '');
  return p ? `${p}/${snapshot}.db` : `${snapshot}.db`;
}

/** The file on the claim, as mounted in the agent's container, and the URI status reports for it. */
export function snapshotFileTarget(pvc: PvcLocation, snapshot: string): { file: string; uri: string } {
  const sub = pvc.subPath.replace(/^\/+|\/+$/g, '');
  return {
    file: `${SNAPSHOT_MOUNT}/${snapshot}.db`,
    uri: `pvc://${pvc.claimName}/${sub ? `${sub}/` : ''}${snapshot}.db`,
  };
}

/** The URI status reports for a snapshot stored at this destination (what the agent reports too). */
export function snapshotURI(destination: SnapshotDestination, snapshot: string): string {
  if (destination.s3)
    return `s3://${destination.s3.bucket}/${snapshotObjectKey(destination.s3.key, snapshot)}`;
  if (destination.pvc) return snapshotFileTarget(destination.pvc, snapshot).uri;
  throw new Error('a destination needs s3 or pvc');
}

// 32-bit FNV-1a, base 36: a short, stable suffix that keeps truncated names apart.
function shortHash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(36);
}

/**
 * `<snapshot>-<attempt>`, at most 63 characters (the Job controller copies it into a label). A long
 * snapshot name is cut and given a hash of the whole, so two long names never share their Jobs.
 */
/**
 * A failure the agent reported (bad credentials, missing bucket, an altered object) ends the Job at once: retrying it
 * would only repeat it. A crash (killed, OOM, lost node) counts against backoffLimit and is retried.
 */
export const AGENT_POD_FAILURE_POLICY = {
  rules: [
    {
      action: 'FailJob',
      onExitCodes: {
        containerName: AGENT_CONTAINER,
        operator: 'In',
        values: [AGENT_REPORTED_FAILURE_EXIT_CODE],
      },
    },
  ],
};

export function snapshotJobName(snapshot: string, attempt: number): string {
  const suffix = `-${attempt}`;
  const plain = `${snapshot}${suffix}`;
  if (plain.length <= 63) return plain;
  const hash = `-${shortHash(snapshot)}`;
  return `${snapshot.slice(0, 63 - hash.length - suffix.length).replace(/[-.]+$/, '')}${hash}${suffix}`;
}

/** The agent's flags for the destination (agent contract, `etcd-conductor snapshot`). */
export function snapshotArgs(endpoint: string, destination: SnapshotDestination, snapshot: string): string[] {
  const args = ['snapshot', '--endpoint', endpoint];
  if (destination.s3) {
    const s3: S3Location = destination.s3;
    args.push(
      '--s3-endpoint',
      s3.endpoint,
      '--s3-bucket',
      s3.bucket,
      '--s3-key',
      snapshotObjectKey(s3.key, snapshot),
      '--s3-region',
      s3.region,
    );
    if (s3.forcePathStyle) args.push('--s3-force-path-style');
    return args;
  }
  if (destination.pvc) {
    const { file, uri } = snapshotFileTarget(destination.pvc, snapshot);
    return [...args, '--file', file, '--uri', uri];
  }
  throw new Error('a destination needs s3 or pvc');
}

/** AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY from the user's Secret, by reference only. */
export function credentialEnv(secretName: string) {
  return ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'].map((key) => ({
    name: key,
    valueFrom: { secretKeyRef: { name: secretName, key } },
  }));
}

/**
 * ETCD_USERNAME / ETCD_PASSWORD from the Secret spec.auth names, by reference only (the agent's
 * agent/etcd-source.ts reads them); the username key is optional, as in the Secret.
 */
export function etcdAuthEnv(secretName: string) {
  return [
    {
      name: 'ETCD_USERNAME',
      valueFrom: { secretKeyRef: { name: secretName, key: 'username', optional: true } },
    },
    { name: 'ETCD_PASSWORD', valueFrom: { secretKeyRef: { name: secretName, key: 'password' } } },
  ];
}

/** The restricted Pod Security Standard, as member Pods have it. */
export const RESTRICTED_POD_SECURITY = {
  runAsNonRoot: true,
  runAsUser: 65532,
  runAsGroup: 65532,
  fsGroup: 65532,
  seccompProfile: { type: 'RuntimeDefault' },
} as const;
export const RESTRICTED_CONTAINER_SECURITY = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  capabilities: { drop: ['ALL'] },
} as const;

/** Where a Job of the cluster's may run (the part of the cluster's placement that applies to a Pod that is no member), and the Secrets it pulls its image with. */
export interface JobPlacement {
  imagePullSecrets?: { name: string }[];
  nodeSelector?: Record<string, string>;
  tolerations?: Toleration[];
  priorityClassName?: string;
  affinity?: { nodeAffinity: unknown };
}

/**
 * The cluster's pull Secrets, nodeSelector, tolerations, priority class and node affinity, for its snapshot and prune Jobs: nodes
 * kept free of etcd for a reason (or the only ones it may use) are so for its Jobs too. The Pod (anti-)affinity of
 * spec.affinity is left out: it is written about members (keep them apart), and would keep a Job off the very nodes
 * a small cluster's members are on. An EtcdSnapshot's or schedule's jobPlacement replaces it field by field (an
 * empty field clears the cluster's); the pull Secrets are the cluster's, whatever the override.
 */
export function jobPlacement(
  spec: Partial<EtcdClusterSpec> | undefined,
  override?: JobPlacementOverride,
): JobPlacement {
  const nodeSelector = override?.nodeSelector ?? spec?.nodeSelector;
  const tolerations = override?.tolerations ?? spec?.tolerations;
  const priorityClassName = override?.priorityClassName ?? spec?.priorityClassName;
  const nodeAffinity = override?.nodeAffinity ?? spec?.affinity?.['nodeAffinity'];
  return {
    ...(spec?.imagePullSecrets?.length ? { imagePullSecrets: spec.imagePullSecrets } : {}),
    ...(nodeSelector && Object.keys(nodeSelector).length > 0 ? { nodeSelector } : {}),
    ...(tolerations && tolerations.length > 0 ? { tolerations } : {}),
    ...(priorityClassName ? { priorityClassName } : {}),
    ...(nodeAffinity && Object.keys(nodeAffinity).length > 0 ? { affinity: { nodeAffinity } } : {}),
  };
}

export interface SnapshotJobInput {
  snapshot: SnapshotRef;
  /** 1, 2, …: each attempt gets its own Job, so a retry never reads an older attempt's result. */
  attempt: number;
  image: string;
  /** Client URL of the member to stream from. */
  endpoint: string;
  destination: SnapshotDestination;
  /** The cluster's name, as a label for `kubectl get jobs -l`. */
  cluster: string;
  /** With the cluster's client TLS: the Secret (tls.crt, tls.key, ca.crt) with the client certificate the agent presents. */
  clientTLSSecret?: string;
  /** The Secret of the cluster's spec.auth: the agent authenticates as root with it. */
  authSecretName?: string;
  /** The cluster's placement (jobPlacement). */
  placement?: JobPlacement;
  /** The cluster's spec.additionalMetadata, for the Job and its Pod. */
  metadata?: Pick<EtcdClusterSpec, 'additionalMetadata'>;
}

/** Where a snapshot Job mounts the operator's client certificate Secret (whole, read-only). */
export const AGENT_TLS_DIR = '/etc/etcd-conductor/tls';

/** The agent's certificate flags for a Job that mounts the client certificate Secret at AGENT_TLS_DIR. */
export function agentTLSArgs(): string[] {
  return [
    '--cacert',
    `${AGENT_TLS_DIR}/ca.crt`,
    '--cert',
    `${AGENT_TLS_DIR}/tls.crt`,
    '--key',
    `${AGENT_TLS_DIR}/tls.key`,
  ];
}

export function snapshotJob(input: SnapshotJobInput) {
  return jobWithAdditionalMetadata(snapshotJobManifest(input), input.metadata);
}

function snapshotJobManifest(input: SnapshotJobInput) {
  const { snapshot, destination } = input;
  const name = snapshotJobName(snapshot.name, input.attempt);
  const labels = {
    'app.kubernetes.io/name': 'etcd-snapshot',
    'app.kubernetes.io/instance': input.cluster,
    'app.kubernetes.io/managed-by': 'etcd-conductor',
    [SnapshotLabels.snapshot]: snapshot.name,
  };
  const pvc = destination.pvc;
  const tls = input.clientTLSSecret;
  const mounts = [
    ...(pvc
      ? [
          {
            name: 'destination',
            mountPath: SNAPSHOT_MOUNT,
            ...(pvc.subPath ? { subPath: pvc.subPath.replace(/^\/+|\/+$/g, '') } : {}),
          },
        ]
      : []),
    ...(tls ? [{ name: 'etcd-tls', mountPath: AGENT_TLS_DIR, readOnly: true }] : []),
  ];
  const volumes = [
    ...(pvc ? [{ name: 'destination', persistentVolumeClaim: { claimName: pvc.claimName } }] : []),
    ...(tls ? [{ name: 'etcd-tls', secret: { secretName: tls, defaultMode: 0o440 } }] : []),
  ];
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
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
      backoffLimit: SNAPSHOT_JOB_BACKOFF_LIMIT,
      activeDeadlineSeconds: SNAPSHOT_JOB_DEADLINE_SECONDS,
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
              args: [
                ...snapshotArgs(input.endpoint, destination, snapshot.name),
                ...(tls ? agentTLSArgs() : []),
              ],
              env: [
                ...(destination.s3 ? credentialEnv(destination.s3.credentialsSecretRef.name) : []),
                ...(input.authSecretName ? etcdAuthEnv(input.authSecretName) : []),
              ],
              // The agent's one-line JSON result; the workflow reads it from the Pod's status, never from logs.
              terminationMessagePath: '/dev/termination-log',
              terminationMessagePolicy: 'File',
              securityContext: RESTRICTED_CONTAINER_SECURITY,
              ...(mounts.length > 0 ? { volumeMounts: mounts } : {}),
            },
          ],
          ...(volumes.length > 0 ? { volumes } : {}),
        },
      },
    },
  };
}
