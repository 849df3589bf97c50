// The verification Job as data: the object it reads, the agent's flags, the bounds (deadline, retries, TTL), the
// work dir's size, placement and security like the snapshot Job's, and no way to the source cluster.
import { SnapshotLabels } from '../crds/etcd-snapshot';
import { jobPlacement, RESTRICTED_CONTAINER_SECURITY, RESTRICTED_POD_SECURITY } from './snapshot-manifests';
import {
  VERIFY_JOB_BACKOFF_LIMIT,
  VERIFY_JOB_DEADLINE_SECONDS,
  VERIFY_JOB_TTL_SECONDS,
  verifyArgs,
  verifyJob,
  verifyJobName,
  workDirSizeLimit,
} from './snapshot-verify-manifests';

const s3 = {
  endpoint: 'http://minio.minio.svc:9000',
  bucket: 'backups',
  key: 'prod/main/',
  region: 'us-east-1',
  forcePathStyle: true,
  credentialsSecretRef: { name: 's3-creds' },
};
const SHA = 'cd'.repeat(32);
const snapshot = { namespace: 'ns', name: 'main-20260301', uid: 'snap-uid' };
const artifact = { sha256: SHA, size: 1_000_000 };

describe('verifyArgs', () => {
  test.each<[string, Parameters<typeof verifyArgs>[0], string[]]>([
    [
      'an S3 object under a prefix, path style',
      { destination: { s3 } },
      [
        '--s3-endpoint',
        'http://minio.minio.svc:9000',
        '--s3-bucket',
        'backups',
        '--s3-key',
        'prod/main/main-20260301.db',
        '--s3-region',
        'us-east-1',
        '--s3-force-path-style',
      ],
    ],
    [
      'an S3 object with virtual-host addressing',
      { destination: { s3: { ...s3, key: '', forcePathStyle: false } } },
      [
        '--s3-endpoint',
        'http://minio.minio.svc:9000',
        '--s3-bucket',
        'backups',
        '--s3-key',
        'main-20260301.db',
        '--s3-region',
        'us-east-1',
      ],
    ],
    [
      'a file on a claim (the subPath is the mount, not the file)',
      { destination: { pvc: { claimName: 'backup', subPath: 'etcd/main' } } },
      ['--file', '/snapshots/main-20260301.db'],
    ],
  ])('%s', (_name, spec, source) => {
    expect(verifyArgs(spec, snapshot.name, artifact, 456)).toEqual([
      'verify',
      ...source,
      '--sha256',
      SHA,
      '--work-dir',
      '/work',
      '--hash-revision',
      '456',
    ]);
  });

  test('no destination is a programming error, not a Job', () => {
    expect(() => verifyArgs({ destination: {} }, 'x', artifact, 1)).toThrow(/s3 or pvc/);
  });
});

describe('verifyJobName', () => {
  test.each([
    ['the check after upload', 'main-daily', 1, 'main-daily-verify-1'],
    ['a re-check', 'main-daily', 3, 'main-daily-verify-3'],
  ])('%s', (_n, name, run, want) => {
    expect(verifyJobName(name, run)).toBe(want);
  });
  test('a long snapshot name is cut to 63 characters and keeps its run', () => {
    const name = verifyJobName('s'.repeat(70), 2);
    expect(name.length).toBeLessThanOrEqual(63);
    expect(name).toMatch(/-2$/);
  });
});

describe('workDirSizeLimit', () => {
  test.each([
    [0, String(256 * 1024 * 1024)],
    [1_000_000, String(2_000_000 + 256 * 1024 * 1024)],
    [8 * 1024 ** 3, String(16 * 1024 ** 3 + 256 * 1024 * 1024)],
  ])('a snapshot of %p bytes gets %p bytes of work dir', (size, limit) => {
    expect(workDirSizeLimit(size)).toBe(limit);
  });
});

describe('verifyJob', () => {
  const placement = jobPlacement({
    nodeSelector: { disk: 'ssd' },
    tolerations: [{ key: 'etcd', operator: 'Exists', effect: 'NoSchedule' }],
    imagePullSecrets: [{ name: 'pull' }],
  });
  const base = {
    snapshot,
    artifact,
    hashRevision: 456,
    run: 1,
    image: 'ghcr.io/etcd-conductor/etcd-conductor:0.1.0',
    placement,
  };
  const s3Job = verifyJob({ ...base, spec: { clusterRef: { name: 'main' }, destination: { s3 } } });
  const pvcJob = verifyJob({
    ...base,
    spec: { clusterRef: { name: 'main' }, destination: { pvc: { claimName: 'backup', subPath: 'etcd/' } } },
  });
  const podOf = (job: typeof s3Job) => job.spec.template.spec;
  const agentOf = (job: typeof s3Job) => {
    const c = job.spec.template.spec.containers[0];
    if (!c) throw new Error('no container');
    return c;
  };

  test('is owned by the EtcdSnapshot and labelled so the watcher signals its workflow', () => {
    expect(s3Job.metadata.name).toBe('main-20260301-verify-1');
    expect(s3Job.metadata.ownerReferences).toEqual([
      expect.objectContaining({
        kind: 'EtcdSnapshot',
        name: snapshot.name,
        uid: 'snap-uid',
        controller: true,
      }),
    ]);
    expect(s3Job.metadata.labels[SnapshotLabels.snapshot]).toBe(snapshot.name);
    expect(s3Job.spec.template.metadata.labels[SnapshotLabels.snapshot]).toBe(snapshot.name);
  });

  test('is bounded in time, in retries and in how long it stays', () => {
    expect(s3Job.spec).toMatchObject({
      backoffLimit: VERIFY_JOB_BACKOFF_LIMIT,
      activeDeadlineSeconds: VERIFY_JOB_DEADLINE_SECONDS,
      ttlSecondsAfterFinished: VERIFY_JOB_TTL_SECONDS,
    });
    expect(s3Job.spec.podFailurePolicy.rules[0]).toMatchObject({
      action: 'FailJob',
      onExitCodes: { containerName: 'agent', operator: 'In', values: [1] },
    });
  });

  test('runs where the snapshot Job may, restricted, with the project image and its result in the termination log', () => {
    expect(podOf(s3Job)).toMatchObject({
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      nodeSelector: { disk: 'ssd' },
      tolerations: [{ key: 'etcd', operator: 'Exists', effect: 'NoSchedule' }],
      imagePullSecrets: [{ name: 'pull' }],
      securityContext: RESTRICTED_POD_SECURITY,
    });
    expect(agentOf(s3Job)).toMatchObject({
      image: base.image,
      command: ['etcd-conductor'],
      terminationMessagePath: '/dev/termination-log',
      securityContext: RESTRICTED_CONTAINER_SECURITY,
    });
  });

  test('reads S3 with the destination Secret by reference and works in a sized emptyDir', () => {
    expect(agentOf(s3Job).env).toEqual([
      {
        name: 'AWS_ACCESS_KEY_ID',
        valueFrom: { secretKeyRef: { name: 's3-creds', key: 'AWS_ACCESS_KEY_ID' } },
      },
      {
        name: 'AWS_SECRET_ACCESS_KEY',
        valueFrom: { secretKeyRef: { name: 's3-creds', key: 'AWS_SECRET_ACCESS_KEY' } },
      },
    ]);
    expect(podOf(s3Job).volumes).toEqual([
      { name: 'work', emptyDir: { sizeLimit: workDirSizeLimit(1_000_000) } },
    ]);
    expect(agentOf(s3Job).volumeMounts).toEqual([{ name: 'work', mountPath: '/work' }]);
  });

  test('mounts a claim destination read-only at its subPath', () => {
    expect(podOf(pvcJob).volumes).toContainEqual({
      name: 'destination',
      persistentVolumeClaim: { claimName: 'backup', readOnly: true },
    });
    expect(agentOf(pvcJob).volumeMounts).toContainEqual({
      name: 'destination',
      mountPath: '/snapshots',
      readOnly: true,
      subPath: 'etcd',
    });
    expect(agentOf(pvcJob).env).toEqual([]);
  });

  test('never names a member of the source cluster: the only etcd it reaches is its own', () => {
    const text = JSON.stringify([s3Job, pvcJob]);
    expect(text).not.toMatch(/--endpoint|:2379|main-peer/);
  });
});
