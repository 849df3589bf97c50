// Restore as plain data: resolves spec.bootstrap.restore.source to a location and sha256, builds the seed member's `restore` init container, and reads its result.
//
// Invariant: credentials reach the agent only as env secretKeyRefs to the user's Secret; the container built
// here holds Secret names, never values, so workflow inputs, history and status hold none either.
import type { AgentFailureReason } from '../contracts/agent-result';
import { AgentFailureReasons, parseAgentResult } from '../contracts/agent-result';
import type { ContinuousRestoreSource, PointInTime, RestoreSource } from '../crds/etcd-cluster';
import type { EtcdSnapshot } from '../crds/etcd-snapshot';
import { parseS3URI } from './s3-store';
import { credentialEnv, RESTRICTED_CONTAINER_SECURITY, snapshotFileTarget } from './snapshot-manifests';

/** The init container's name; the observer finds its status by it. */
export const RESTORE_CONTAINER = 'restore';
/** Where a claim holding the snapshot file is mounted (read-only) in the init container. */
export const RESTORE_SOURCE_MOUNT = '/restore-source';
const SOURCE_VOLUME = 'restore-source';

/** A restore source with everything the agent needs: where the bytes are and what their sha256 must be. */
export type ResolvedRestoreSource =
  | {
      kind: 's3';
      endpoint: string;
      bucket: string;
      key: string;
      region: string;
      forcePathStyle: boolean;
      secretName: string;
      sha256: string;
      /** For messages and Events. */
      uri: string;
    }
  | { kind: 'pvc'; claimName: string; path: string; sha256: string; uri: string }
  | {
      kind: 'continuous';
      endpoint: string;
      bucket: string;
      /** The backup destination's key prefix; the archive is under <prefix>/continuous/<clusterUid>/. */
      prefix: string;
      region: string;
      forcePathStyle: boolean;
      secretName: string;
      clusterUid: string;
      point: { revision: number } | { time: string } | 'newest';
      uri: string;
    };

/** A source ready to restore, or why not yet (`waiting`) or never (`refused`: the named snapshot failed). */
export type RestoreResolution =
  | { state: 'ready'; source: ResolvedRestoreSource }
  | { state: 'waiting'; message: string }
  | { state: 'refused'; message: string };

/**
 * Resolves the source. For `snapshotRef`, `snapshot` is the EtcdSnapshot read from the same namespace
 * (undefined when it does not exist): only a Succeeded one with an artifact is restorable, and its own
 * destination says how to reach the stored bytes.
 */
export function resolveRestoreSource(
  namespace: string,
  source: RestoreSource,
  snapshot: EtcdSnapshot | undefined,
  continuous?: { pointInTime?: PointInTime; sourceUid?: string },
): RestoreResolution {
  if (source.continuous) return resolveContinuous(namespace, source.continuous, continuous ?? {});
  if (source.s3) {
    const s3 = source.s3;
    return {
      state: 'ready',
      source: {
        kind: 's3',
        endpoint: s3.endpoint,
        bucket: s3.bucket,
        key: s3.key,
        region: s3.region,
        forcePathStyle: s3.forcePathStyle,
        secretName: s3.credentialsSecretRef.name,
        sha256: (source.sha256 ?? '').toLowerCase(),
        uri: `s3://${s3.bucket}/${s3.key}`,
      },
    };
  }
  if (source.pvc) {
    const path = source.pvc.subPath.replace(/^\/+/, '');
    return {
      state: 'ready',
      source: {
        kind: 'pvc',
        claimName: source.pvc.claimName,
        path,
        sha256: (source.sha256 ?? '').toLowerCase(),
        uri: `pvc://${source.pvc.claimName}/${path}`,
      },
    };
  }
  const name = source.snapshotRef?.name ?? '';
  const ref = `EtcdSnapshot ${namespace}/${name}`;
  if (!snapshot)
    return { state: 'waiting', message: `${ref} does not exist (yet); the restore waits for it` };
  const phase = snapshot.status?.phase;
  const ready = snapshot.status?.conditions?.find((c) => c.type === 'Ready');
  if (phase === 'Failed') {
    return {
      state: 'refused',
      message: `${ref} Failed (${ready?.reason ?? 'no reason'}: ${ready?.message ?? ''}); a restore needs a Succeeded snapshot: create a new EtcdCluster that names another one`,
    };
  }
  const artifact = snapshot.status?.artifact;
  if (phase !== 'Succeeded' || !artifact) {
    return {
      state: 'waiting',
      message: `${ref} is ${phase ?? 'not started'}; the restore starts once it has Succeeded`,
    };
  }
  const { s3, pvc } = snapshot.spec.destination;
  const inS3 = parseS3URI(artifact.uri);
  if (s3 && inS3) {
    return {
      state: 'ready',
      source: {
        kind: 's3',
        endpoint: s3.endpoint,
        bucket: inS3.bucket,
        key: inS3.key,
        region: s3.region,
        forcePathStyle: s3.forcePathStyle,
        secretName: s3.credentialsSecretRef.name,
        sha256: artifact.sha256,
        uri: artifact.uri,
      },
    };
  }
  if (pvc) {
    const { uri } = snapshotFileTarget(pvc, snapshot.metadata.name);
    const path = uri.slice(`pvc://${pvc.claimName}/`.length);
    return {
      state: 'ready',
      source: { kind: 'pvc', claimName: pvc.claimName, path, sha256: artifact.sha256, uri: artifact.uri },
    };
  }
  return {
    state: 'refused',
    message: `${ref} records ${artifact.uri}, which its destination does not explain`,
  };
}

/**
 * A continuous backup as a source: the archive of the source cluster's uid (given, or read from the EtcdCluster while
 * it exists) and the point (a revision, a time, or the newest; the agent resolves a time against the archive).
 */
function resolveContinuous(
  namespace: string,
  source: ContinuousRestoreSource,
  found: { pointInTime?: PointInTime; sourceUid?: string },
): RestoreResolution {
  const { s3 } = source.destination;
  const cluster = `EtcdCluster ${source.cluster.namespace ?? namespace}/${source.cluster.name}`;
  // A uid given wins: after a name was reused, the older cluster's archive is the one asked for.
  const uid = source.cluster.uid ?? found.sourceUid;
  if (!uid)
    return {
      state: 'refused',
      message: `${cluster} does not exist, so its uid (which names its archive) is unknown: create a new EtcdCluster that gives restore.source.continuous.cluster.uid`,
    };
  const p = found.pointInTime;
  const prefix = s3.key.replace(/\/+$/, '');
  return {
    state: 'ready',
    source: {
      kind: 'continuous',
      endpoint: s3.endpoint,
      bucket: s3.bucket,
      prefix: s3.key,
      region: s3.region,
      forcePathStyle: s3.forcePathStyle,
      secretName: s3.credentialsSecretRef.name,
      clusterUid: uid,
      point:
        p?.revision !== undefined
          ? { revision: p.revision }
          : p?.time !== undefined
            ? { time: p.time }
            : 'newest',
      uri: `s3://${s3.bucket}/${prefix ? `${prefix}/` : ''}continuous/${uid}/@${p?.revision ?? p?.time ?? 'newest'}`,
    },
  };
}

const CREDENTIAL_KEYS = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'];

/**
 * Why the credentials Secret cannot serve the restore yet, or undefined when it can. Only key names are
 * looked at. A missing Secret is waited for (it may be applied together with the EtcdCluster): an init
 * container started without it would only hang in CreateContainerConfigError.
 */
export function credentialsProblem(
  namespace: string,
  name: string,
  secret: { data?: Record<string, string> } | undefined,
): string | undefined {
  if (!secret)
    return `the credentials Secret ${namespace}/${name} does not exist (yet); the restore waits for it`;
  const missing = CREDENTIAL_KEYS.filter((k) => !secret.data?.[k]);
  return missing.length > 0
    ? `the credentials Secret ${namespace}/${name} lacks ${missing.join(' and ')}; the restore waits for it`
    : undefined;
}

export interface RestoreInitInput {
  member: string;
  peerURL: string;
  /** The same token the seed's etcd is started with (unique per cluster uid). */
  token: string;
  /** etcd's --data-dir in the member Pod; a subdirectory of the data volume, as the agent requires. */
  dataDir: string;
  /** The data volume's name and mount path in the member Pod. */
  dataVolume: { name: string; mountPath: string };
  image: string;
  source: ResolvedRestoreSource;
}

/** The seed member's `restore` init container and any volume it needs beside the member's own. */
export function restoreInit(input: RestoreInitInput) {
  const { source } = input;
  if (source.kind === 'continuous') return restorePointInit(input, source);
  const location =
    source.kind === 's3'
      ? [
          '--s3-endpoint',
          source.endpoint,
          '--s3-bucket',
          source.bucket,
          '--s3-key',
          source.key,
          '--s3-region',
          source.region,
          ...(source.forcePathStyle ? ['--s3-force-path-style'] : []),
        ]
      : ['--file', `${RESTORE_SOURCE_MOUNT}/${source.path}`];
  const container = {
    name: RESTORE_CONTAINER,
    image: input.image,
    command: ['etcd-conductor'],
    args: ['restore', ...location, '--sha256', source.sha256, ...memberArgs(input)],
    env: source.kind === 's3' ? credentialEnv(source.secretName) : [],
    // The agent's one-line JSON result; the observer reads it from the Pod's status, never from logs.
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
    securityContext: RESTRICTED_CONTAINER_SECURITY,
    volumeMounts: [
      { name: input.dataVolume.name, mountPath: input.dataVolume.mountPath },
      ...(source.kind === 'pvc'
        ? [{ name: SOURCE_VOLUME, mountPath: RESTORE_SOURCE_MOUNT, readOnly: true }]
        : []),
    ],
  };
  const volumes =
    source.kind === 'pvc'
      ? [{ name: SOURCE_VOLUME, persistentVolumeClaim: { claimName: source.claimName, readOnly: true } }]
      : [];
  return { container, volumes };
}

/** Who the restored member is, for `restore` and `restore-point` alike: its data dir and its place in the new cluster. */
const memberArgs = (input: RestoreInitInput): string[] => [
  '--data-dir',
  input.dataDir,
  '--name',
  input.member,
  '--initial-cluster',
  `${input.member}=${input.peerURL}`,
  '--initial-advertise-peer-urls',
  input.peerURL,
  '--initial-cluster-token',
  input.token,
];

/** The seed's init container for a continuous source: `restore-point`, its work dir on the data volume beside the data dir. */
function restorePointInit(
  input: RestoreInitInput,
  source: Extract<ResolvedRestoreSource, { kind: 'continuous' }>,
) {
  const container = {
    name: RESTORE_CONTAINER,
    image: input.image,
    command: ['etcd-conductor'],
    args: [
      'restore-point',
      '--s3-endpoint',
      source.endpoint,
      '--s3-bucket',
      source.bucket,
      '--s3-key',
      source.prefix,
      '--s3-region',
      source.region,
      ...(source.forcePathStyle ? ['--s3-force-path-style'] : []),
      '--cluster-uid',
      source.clusterUid,
      ...(source.point === 'newest'
        ? ['--newest']
        : 'time' in source.point
          ? ['--time', source.point.time]
          : ['--revision', String(source.point.revision)]),
      '--work-dir',
      `${input.dataVolume.mountPath.replace(/\/+$/, '')}/restore-point`,
      ...memberArgs(input),
    ],
    env: credentialEnv(source.secretName),
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
    securityContext: RESTRICTED_CONTAINER_SECURITY,
    volumeMounts: [{ name: input.dataVolume.name, mountPath: input.dataVolume.mountPath }],
  };
  return {
    container,
    volumes: [] as Array<{ name: string; persistentVolumeClaim: { claimName: string; readOnly: boolean } }>,
  };
}

export type RestoreInit = ReturnType<typeof restoreInit>;

/**
 * Agent reasons no restart of the init container can fix: the bytes are wrong or missing, the store refuses
 * the credentials, the bucket is gone, or the command line is wrong. DestinationUnavailable (a full or broken
 * disk, a store hiccup) may pass, so the kubelet's restarts are left to try again.
 */
const PERMANENT: ReadonlySet<AgentFailureReason> = new Set([
  AgentFailureReasons.ChecksumMismatch,
  AgentFailureReasons.SourceNotFound,
  AgentFailureReasons.InvalidCredentials,
  AgentFailureReasons.BucketNotFound,
  AgentFailureReasons.InvalidArguments,
]);

/** What a failed restore said, for the planner: the agent's reason, its message, and whether waiting can help. */
export interface RestoreFailure {
  reason: string;
  message: string;
  permanent: boolean;
}

interface TerminatedState {
  exitCode?: number;
  message?: string;
  reason?: string;
}

/**
 * The restore init container's latest failure, if its latest run failed: the current state when it has
 * terminated, else the last one while the kubelet waits to restart it. A run in progress is no failure (yet).
 */
export function restoreFailureOf(
  status:
    | {
        state?: { terminated?: TerminatedState; running?: object };
        lastState?: { terminated?: TerminatedState };
      }
    | undefined,
): RestoreFailure | undefined {
  if (!status || status.state?.running) return undefined;
  const terminated = status.state?.terminated ?? status.lastState?.terminated;
  if (!terminated || terminated.exitCode === 0) return undefined;
  let parsed: ReturnType<typeof parseAgentResult> | undefined;
  try {
    parsed = terminated.message ? parseAgentResult(terminated.message) : undefined;
  } catch {
    parsed = undefined;
  }
  if (parsed && !parsed.ok) {
    return { reason: parsed.reason, message: parsed.message, permanent: PERMANENT.has(parsed.reason) };
  }
  return {
    reason: 'AgentCrashed',
    message: `the restore init container exited with code ${terminated.exitCode ?? '?'} (${terminated.reason ?? 'no reason'}) without a result`,
    permanent: false,
  };
}

/**
 * What the seed's restore reached, once its init container succeeded and restored (a re-run that found the data dir
 * already holding a member says nothing): the revision and, for a point-in-time restore, the time and the leases its
 * replay granted or could not find, as the agent wrote them in its result. Undefined while it runs, after a failure, or when the result names neither.
 */
export function restoredPointOf(
  status: { state?: { terminated?: TerminatedState } } | undefined,
): { revision?: number; time?: string; leasesGranted?: number; keysWithoutLease?: number } | undefined {
  const terminated = status?.state?.terminated;
  if (terminated?.exitCode !== 0 || !terminated.message) return undefined;
  let parsed: ReturnType<typeof parseAgentResult>;
  try {
    parsed = parseAgentResult(terminated.message);
  } catch {
    return undefined;
  }
  if (!parsed.ok || !('restored' in parsed) || !parsed.restored) return undefined;
  if (parsed.revision === undefined && parsed.time === undefined) return undefined;
  return {
    ...(parsed.revision !== undefined ? { revision: parsed.revision } : {}),
    ...(parsed.time !== undefined ? { time: parsed.time } : {}),
    ...(parsed.leasesGranted !== undefined ? { leasesGranted: parsed.leasesGranted } : {}),
    ...(parsed.keysWithoutLease !== undefined ? { keysWithoutLease: parsed.keysWithoutLease } : {}),
  };
}
