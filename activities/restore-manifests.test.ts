// Restore's pure parts as tables: resolving a source, the seed's init container, and reading the agent's result from its status.
import { encodeAgentResult } from '../contracts/agent-result';
import type { RestoreSource } from '../crds/etcd-cluster';
import type { EtcdSnapshot, SnapshotPhase } from '../crds/etcd-snapshot';
import type { ResolvedRestoreSource, RestoreResolution } from './restore-manifests';
import {
  credentialsProblem,
  resolveRestoreSource,
  restoreFailureOf,
  restoredPointOf,
  restoreInit,
} from './restore-manifests';
import { parseRestorePointArgs } from '../agent/restore-point';

const SHA = 'ab'.repeat(32);
const s3 = {
  endpoint: 'http://minio:9000',
  bucket: 'backups',
  key: 'etcd/main/snap.db',
  region: 'us-east-1',
  forcePathStyle: true,
  credentialsSecretRef: { name: 's3-credentials' },
};

function snapshot(
  phase: SnapshotPhase | undefined,
  destination: EtcdSnapshot['spec']['destination'],
): EtcdSnapshot {
  const uri = destination.s3 ? 's3://backups/etcd/main/snap.db' : 'pvc://backups-claim/main/snap.db';
  return {
    apiVersion: 'etcd.conductor.dev/v1alpha1',
    kind: 'EtcdSnapshot',
    metadata: { name: 'snap', namespace: 'prod' },
    spec: { clusterRef: { name: 'main' }, destination },
    ...(phase
      ? {
          status: {
            phase,
            conditions: [
              {
                type: 'Ready',
                status: phase === 'Succeeded' ? 'True' : 'False',
                reason: phase === 'Failed' ? 'InvalidCredentials' : 'SnapshotRunning',
                message: 'm',
                lastTransitionTime: '2026-11-21T00:00:00Z',
              },
            ],
            ...(phase === 'Succeeded'
              ? {
                  artifact: {
                    uri,
                    size: 10,
                    sha256: SHA,
                    revision: 7,
                    etcdVersion: '3.6.16',
                    takenAt: '2026-11-21T00:00:00Z',
                  },
                }
              : {}),
          },
        }
      : {}),
  };
}

const s3Dest = { s3: { ...s3, key: 'etcd/main' } };
const pvcDest = { pvc: { claimName: 'backups-claim', subPath: 'main' } };
const fromS3: ResolvedRestoreSource = {
  kind: 's3',
  endpoint: s3.endpoint,
  bucket: 'backups',
  key: 'etcd/main/snap.db',
  region: 'us-east-1',
  forcePathStyle: true,
  secretName: 's3-credentials',
  sha256: SHA,
  uri: 's3://backups/etcd/main/snap.db',
};

describe('resolveRestoreSource', () => {
  test.each<
    [string, RestoreSource, EtcdSnapshot | undefined, Partial<RestoreResolution> & { message?: unknown }]
  >([
    [
      'an s3 source is ready as written, its sha256 lowercased',
      { s3, sha256: SHA.toUpperCase() },
      undefined,
      { state: 'ready', source: fromS3 },
    ],
    [
      'a pvc source names the file on the claim',
      { pvc: { claimName: 'c', subPath: 'main/snap.db' }, sha256: SHA },
      undefined,
      {
        state: 'ready',
        source: {
          kind: 'pvc',
          claimName: 'c',
          path: 'main/snap.db',
          sha256: SHA,
          uri: 'pvc://c/main/snap.db',
        },
      },
    ],
    [
      'a snapshotRef to a Succeeded S3 snapshot takes the key from the artifact and the rest from its destination',
      { snapshotRef: { name: 'snap' } },
      snapshot('Succeeded', s3Dest),
      { state: 'ready', source: fromS3 },
    ],
    [
      'a snapshotRef to a Succeeded claim snapshot restores its file',
      { snapshotRef: { name: 'snap' } },
      snapshot('Succeeded', pvcDest),
      {
        state: 'ready',
        source: {
          kind: 'pvc',
          claimName: 'backups-claim',
          path: 'main/snap.db',
          sha256: SHA,
          uri: 'pvc://backups-claim/main/snap.db',
        },
      },
    ],
    [
      'a snapshotRef to a snapshot still running waits',
      { snapshotRef: { name: 'snap' } },
      snapshot('Running', s3Dest),
      { state: 'waiting', message: expect.stringContaining('is Running') },
    ],
    [
      'a snapshotRef to a snapshot with no status yet waits',
      { snapshotRef: { name: 'snap' } },
      snapshot(undefined, s3Dest),
      { state: 'waiting', message: expect.stringContaining('not started') },
    ],
    [
      'a snapshotRef to a snapshot that does not exist waits (it may be created after the cluster)',
      { snapshotRef: { name: 'snap' } },
      undefined,
      { state: 'waiting', message: expect.stringContaining('does not exist') },
    ],
    [
      'a snapshotRef to a Failed snapshot is refused with its reason',
      { snapshotRef: { name: 'snap' } },
      snapshot('Failed', s3Dest),
      { state: 'refused', message: expect.stringContaining('Failed (InvalidCredentials') },
    ],
  ])('%s', (_name, source, snap, expected) => {
    expect(resolveRestoreSource('prod', source, snap)).toEqual(expected);
  });
});

describe('restoreInit', () => {
  const base = {
    member: 'main-0',
    peerURL: 'http://main-0.main-peer.prod.svc:2380',
    token: 'prod/main/uid-1',
    dataDir: '/var/lib/etcd/data',
    dataVolume: { name: 'data', mountPath: '/var/lib/etcd' },
    image: 'ghcr.io/etcd-conductor/etcd-conductor:0.1.0',
  };

  test('from S3: the agent restores into the member data dir with the seed identity, credentials only by secretKeyRef', () => {
    const { container, volumes } = restoreInit({ ...base, source: fromS3 });
    expect(container.args).toEqual([
      'restore',
      '--s3-endpoint',
      'http://minio:9000',
      '--s3-bucket',
      'backups',
      '--s3-key',
      'etcd/main/snap.db',
      '--s3-region',
      'us-east-1',
      '--s3-force-path-style',
      '--sha256',
      SHA,
      '--data-dir',
      '/var/lib/etcd/data',
      '--name',
      'main-0',
      '--initial-cluster',
      'main-0=http://main-0.main-peer.prod.svc:2380',
      '--initial-advertise-peer-urls',
      'http://main-0.main-peer.prod.svc:2380',
      '--initial-cluster-token',
      'prod/main/uid-1',
    ]);
    expect(container.env).toEqual([
      {
        name: 'AWS_ACCESS_KEY_ID',
        valueFrom: { secretKeyRef: { name: 's3-credentials', key: 'AWS_ACCESS_KEY_ID' } },
      },
      {
        name: 'AWS_SECRET_ACCESS_KEY',
        valueFrom: { secretKeyRef: { name: 's3-credentials', key: 'AWS_SECRET_ACCESS_KEY' } },
      },
    ]);
    expect(container).toMatchObject({
      name: 'restore',
      image: base.image,
      command: ['etcd-conductor'],
      terminationMessagePolicy: 'File',
      volumeMounts: [{ name: 'data', mountPath: '/var/lib/etcd' }],
    });
    expect(volumes).toEqual([]);
  });

  test('from a claim: the claim is mounted read-only and the file given by path, with no credentials', () => {
    const { container, volumes } = restoreInit({
      ...base,
      source: { kind: 'pvc', claimName: 'c', path: 'main/snap.db', sha256: SHA, uri: 'pvc://c/main/snap.db' },
    });
    expect(container.args.slice(0, 3)).toEqual(['restore', '--file', '/restore-source/main/snap.db']);
    expect(container.env).toEqual([]);
    expect(container.volumeMounts).toContainEqual({
      name: 'restore-source',
      mountPath: '/restore-source',
      readOnly: true,
    });
    expect(volumes).toEqual([
      { name: 'restore-source', persistentVolumeClaim: { claimName: 'c', readOnly: true } },
    ]);
  });
});

describe('credentialsProblem', () => {
  test.each<[string, { data?: Record<string, string> } | undefined, string | undefined]>([
    [
      'a Secret with both keys serves',
      { data: { AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 'b' } },
      undefined,
    ],
    [
      'a missing Secret is waited for',
      undefined,
      'the credentials Secret prod/s3 does not exist (yet); the restore waits for it',
    ],
    [
      'a Secret lacking the secret key names it',
      { data: { AWS_ACCESS_KEY_ID: 'a' } },
      'the credentials Secret prod/s3 lacks AWS_SECRET_ACCESS_KEY; the restore waits for it',
    ],
  ])('%s', (_name, secret, expected) => {
    expect(credentialsProblem('prod', 's3', secret)).toBe(expected);
  });
});

describe('restoreFailureOf', () => {
  const fail = (reason: Parameters<typeof encodeAgentResult>[0] & { ok: false }) => encodeAgentResult(reason);
  test.each<[string, Parameters<typeof restoreFailureOf>[0], ReturnType<typeof restoreFailureOf>]>([
    ['no status yet: nothing failed', undefined, undefined],
    ['still running its first run: nothing failed', { state: {} }, undefined],
    [
      'running again after a failed run: not a failure until this run ends',
      { state: { running: {} }, lastState: { terminated: { exitCode: 1, message: 'x' } } },
      undefined,
    ],
    [
      'a successful run is no failure, even after an earlier failed one',
      {
        state: { terminated: { exitCode: 0 } },
        lastState: { terminated: { exitCode: 1, message: 'x' } },
      },
      undefined,
    ],
    [
      'ChecksumMismatch is permanent: no restart can fix the bytes',
      {
        state: {
          terminated: {
            exitCode: 1,
            message: fail({ ok: false, reason: 'ChecksumMismatch', message: 'sha256 differs' }),
          },
        },
      },
      { reason: 'ChecksumMismatch', message: 'sha256 differs', permanent: true },
    ],
    [
      'a failure read from the last state while the kubelet waits to restart it (SourceNotFound, permanent)',
      {
        state: {},
        lastState: {
          terminated: {
            exitCode: 1,
            message: fail({ ok: false, reason: 'SourceNotFound', message: 'NoSuchKey' }),
          },
        },
      },
      { reason: 'SourceNotFound', message: 'NoSuchKey', permanent: true },
    ],
    [
      'InvalidCredentials is permanent',
      {
        state: {
          terminated: {
            exitCode: 1,
            message: fail({ ok: false, reason: 'InvalidCredentials', message: '403' }),
          },
        },
      },
      { reason: 'InvalidCredentials', message: '403', permanent: true },
    ],
    [
      'DestinationUnavailable is left to the restarts',
      {
        state: {
          terminated: {
            exitCode: 1,
            message: fail({ ok: false, reason: 'DestinationUnavailable', message: 'disk full' }),
          },
        },
      },
      { reason: 'DestinationUnavailable', message: 'disk full', permanent: false },
    ],
    [
      'a crash without a result (killed, OOM) is not permanent',
      { state: { terminated: { exitCode: 137, reason: 'OOMKilled' } } },
      {
        reason: 'AgentCrashed',
        message: 'the restore init container exited with code 137 (OOMKilled) without a result',
        permanent: false,
      },
    ],
  ])('%s', (_name, status, expected) => {
    expect(restoreFailureOf(status)).toEqual(expected);
  });
});

describe('restoredPointOf', () => {
  const ok = (result: Parameters<typeof encodeAgentResult>[0]) => ({
    state: { terminated: { exitCode: 0, message: encodeAgentResult(result) } },
  });
  test.each<[string, Parameters<typeof restoredPointOf>[0], ReturnType<typeof restoredPointOf>]>([
    ['no status yet: nothing reached', undefined, undefined],
    ['still running: nothing reached', { state: {} }, undefined],
    [
      'a point-in-time restore says its revision and time',
      ok({
        ok: true,
        restored: true,
        sha256: SHA,
        size: 1,
        revision: 1200,
        time: '2026-11-25T10:32:00.123Z',
      }),
      { revision: 1200, time: '2026-11-25T10:32:00.123Z' },
    ],
    [
      'a continuous restore also says the leases its replay granted and the keys left without one',
      ok({
        ok: true,
        restored: true,
        sha256: SHA,
        size: 1,
        revision: 1200,
        time: '2026-11-25T10:32:00.123Z',
        leasesGranted: 3,
        keysWithoutLease: 0,
      }),
      { revision: 1200, time: '2026-11-25T10:32:00.123Z', leasesGranted: 3, keysWithoutLease: 0 },
    ],
    [
      'a snapshot restore says its revision only',
      ok({ ok: true, restored: true, sha256: SHA, size: 1, revision: 88 }),
      { revision: 88 },
    ],
    [
      'a restore whose result names no point reports none',
      ok({ ok: true, restored: true, sha256: SHA, size: 1 }),
      undefined,
    ],
    [
      'a re-run that found the member already there reports none (the first run did)',
      ok({ ok: true, restored: false }),
      undefined,
    ],
    [
      'a failed run reports none',
      {
        state: {
          terminated: {
            exitCode: 1,
            message: encodeAgentResult({ ok: false, reason: 'ChecksumMismatch', message: 'x' }),
          },
        },
      },
      undefined,
    ],
    [
      'a success without a readable result reports none',
      { state: { terminated: { exitCode: 0, message: 'done' } } },
      undefined,
    ],
  ])('%s', (_name, status, expected) => {
    expect(restoredPointOf(status)).toEqual(expected);
  });
});

describe('a continuous backup as the source', () => {
  const continuous = {
    destination: {
      s3: {
        endpoint: 'http://minio:9000',
        bucket: 'backups',
        key: 'etcd/src',
        region: 'us-east-1',
        forcePathStyle: true,
        credentialsSecretRef: { name: 's3' },
      },
    },
    cluster: { name: 'src' },
  };
  const UID = '5e0a7c3e-1111-4c55-9a3e-2f0d8e7b1c44';

  test.each<[string, Parameters<typeof resolveRestoreSource>[3], object]>([
    [
      'the uid read from the source cluster, a revision',
      { sourceUid: UID, pointInTime: { revision: 1200 } },
      {
        state: 'ready',
        source: { kind: 'continuous', clusterUid: UID, point: { revision: 1200 }, prefix: 'etcd/src' },
      },
    ],
    ['no point: the newest', { sourceUid: UID }, { state: 'ready', source: { point: 'newest' } }],
    [
      'the source cluster gone and no uid given: refused, saying to give it',
      {},
      {
        state: 'refused',
        message: expect.stringMatching(
          /EtcdCluster prod\/src does not exist.*gives restore\.source\.continuous\.cluster\.uid/,
        ),
      },
    ],
    [
      'a time, which the agent resolves against the archive',
      { sourceUid: UID, pointInTime: { time: '2026-11-25T10:32:00Z' } },
      { state: 'ready', source: { point: { time: '2026-11-25T10:32:00Z' } } },
    ],
  ])('%s', (_name, found, expected) => {
    expect(resolveRestoreSource('prod', { continuous }, undefined, found)).toMatchObject(expected);
  });

  test('a uid given wins over the one read (the name was reused)', () => {
    const r = resolveRestoreSource(
      'prod',
      { continuous: { ...continuous, cluster: { name: 'src', uid: 'old-uid' } } },
      undefined,
      { sourceUid: UID },
    );
    expect(r).toMatchObject({ state: 'ready', source: { clusterUid: 'old-uid' } });
  });

  test('the init container runs restore-point with the archive, the point and a work dir beside the data dir', () => {
    const r = resolveRestoreSource('prod', { continuous }, undefined, {
      sourceUid: UID,
      pointInTime: { revision: 1200 },
    });
    if (r.state !== 'ready') throw new Error('not ready');
    const { container, volumes } = restoreInit({
      member: 'main-0',
      peerURL: 'http://main-0.main-peer.prod.svc:2380',
      token: 'prod/main/uid-1',
      dataDir: '/var/lib/etcd/data',
      dataVolume: { name: 'data', mountPath: '/var/lib/etcd' },
      image: 'img',
      source: r.source,
    });
    expect(container.args).toEqual([
      'restore-point',
      '--s3-endpoint',
      'http://minio:9000',
      '--s3-bucket',
      'backups',
      '--s3-key',
      'etcd/src',
      '--s3-region',
      'us-east-1',
      '--s3-force-path-style',
      '--cluster-uid',
      UID,
      '--revision',
      '1200',
      '--work-dir',
      '/var/lib/etcd/restore-point',
      '--data-dir',
      '/var/lib/etcd/data',
      '--name',
      'main-0',
      '--initial-cluster',
      'main-0=http://main-0.main-peer.prod.svc:2380',
      '--initial-advertise-peer-urls',
      'http://main-0.main-peer.prod.svc:2380',
      '--initial-cluster-token',
      'prod/main/uid-1',
    ]);
    // The agent accepts exactly this command line.
    expect(parseRestorePointArgs(container.args.slice(1))).toMatchObject({
      point: { revision: 1200 },
      clusterUid: UID,
    });
    expect(container.env.map((e) => e.valueFrom.secretKeyRef.name)).toEqual(['s3', 's3']);
    expect(volumes).toEqual([]);
  });
});
