import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import type { JobPlacementOverride } from '../crds/etcd-snapshot';
import {
  credentialEnv,
  jobPlacement,
  snapshotArgs,
  snapshotFileTarget,
  snapshotJob,
  snapshotJobName,
  snapshotObjectKey,
  snapshotURI,
} from './snapshot-manifests';
import type { SourceCandidate } from './snapshot-source';
import { pickSnapshotSource } from './snapshot-source';

const s3 = {
  endpoint: 'http://minio.minio.svc:9000',
  bucket: 'backups',
  key: 'prod/main',
  region: 'us-east-1',
  forcePathStyle: true,
  credentialsSecretRef: { name: 's3-creds' },
};
const ref = { namespace: 'ns', name: 'main-20260301', uid: 'snap-uid' };
const endpoint = 'http://main-1.main-peer.ns.svc:2379';

describe('snapshot names and locations', () => {
  test.each([
    ['', 'snap', 'snap.db'],
    ['backups', 'snap', 'backups/snap.db'],
    ['backups/', 'snap', 'backups/snap.db'],
    ['a/b//', 'snap', 'a/b/snap.db'],
  ])('prefix %p and snapshot %p give the key %p', (prefix, name, key) => {
    expect(snapshotObjectKey(prefix, name)).toBe(key);
  });

  test.each([
    [{ claimName: 'backup', subPath: '' }, 'pvc://backup/snap.db'],
    [{ claimName: 'backup', subPath: 'etcd/main' }, 'pvc://backup/etcd/main/snap.db'],
    [{ claimName: 'backup', subPath: 'etcd/main/' }, 'pvc://backup/etcd/main/snap.db'],
  ])('a claim folder %o reports the URI %p and writes under the mount', (pvc, uri) => {
    expect(snapshotFileTarget(pvc, 'snap')).toEqual({ file: '/snapshots/snap.db', uri });
    expect(snapshotURI({ pvc }, 'snap')).toBe(uri);
  });

  test('an S3 destination reports s3://bucket/key', () => {
    expect(snapshotURI({ s3 }, 'snap')).toBe('s3://backups/prod/main/snap.db');
  });

  test.each([
    ['a short name keeps its name and gets the attempt', 'main-daily', 1, 'main-daily-1'],
    ['a name of 61 characters still fits with -2', 'x'.repeat(61), 2, `${'x'.repeat(61)}-2`],
  ])('%s', (_n, name, attempt, want) => {
    expect(snapshotJobName(name, attempt)).toBe(want);
  });

  test('long names are cut to 63 characters and stay apart by a hash of the whole name', () => {
    const a = snapshotJobName(`${'a'.repeat(80)}-one`, 3);
    const b = snapshotJobName(`${'a'.repeat(80)}-two`, 3);
    expect(a.length).toBeLessThanOrEqual(63);
    expect(b.length).toBeLessThanOrEqual(63);
    expect(a).not.toBe(b);
    expect(a).toMatch(/^a+-[0-9a-z]+-3$/);
    expect(snapshotJobName(`${'a'.repeat(80)}-one`, 3)).toBe(a);
  });
});

describe('snapshotArgs: the agent contract flags', () => {
  test.each([
    [
      'S3 with path-style addressing',
      { s3 },
      [
        'snapshot',
        '--endpoint',
        endpoint,
        '--s3-endpoint',
        'http://minio.minio.svc:9000',
        '--s3-bucket',
        'backups',
        '--s3-key',
        'prod/main/snap.db',
        '--s3-region',
        'us-east-1',
        '--s3-force-path-style',
      ],
    ],
    [
      'S3 with virtual-host addressing has no path-style flag',
      { s3: { ...s3, forcePathStyle: false, key: '' } },
      [
        'snapshot',
        '--endpoint',
        endpoint,
        '--s3-endpoint',
        'http://minio.minio.svc:9000',
        '--s3-bucket',
        'backups',
        '--s3-key',
        'snap.db',
        '--s3-region',
        'us-east-1',
      ],
    ],
    [
      'a claim gets --file under the mount and the pvc:// URI',
      { pvc: { claimName: 'backup', subPath: 'etcd' } },
      [
        'snapshot',
        '--endpoint',
        endpoint,
        '--file',
        '/snapshots/snap.db',
        '--uri',
        'pvc://backup/etcd/snap.db',
      ],
    ],
  ])('%s', (_n, destination, want) => {
    expect(snapshotArgs(endpoint, destination, 'snap')).toEqual(want);
  });

  test('a destination with neither s3 nor pvc is refused', () => {
    expect(() => snapshotArgs(endpoint, {}, 'snap')).toThrow('a destination needs s3 or pvc');
  });
});

describe('snapshotJob', () => {
  const job = (destination: Parameters<typeof snapshotJob>[0]['destination']) =>
    snapshotJob({ snapshot: ref, attempt: 2, image: 'img:1', endpoint, destination, cluster: 'main' });

  test('is owned by the EtcdSnapshot, labelled with it, and named after it and the attempt', () => {
    const j = job({ s3 });
    expect(j.metadata.name).toBe('main-20260301-2');
    expect(j.metadata.ownerReferences).toEqual([
      expect.objectContaining({
        kind: 'EtcdSnapshot',
        name: 'main-20260301',
        uid: 'snap-uid',
        controller: true,
      }),
    ]);
    expect(j.metadata.labels['etcd.conductor.dev/snapshot']).toBe('main-20260301');
    expect(j.spec.template.metadata.labels['etcd.conductor.dev/snapshot']).toBe('main-20260301');
  });

  test('never restarts in place, retries crashes a bounded number of times, and ends at once on a reported failure', () => {
    const j = job({ s3 });
    expect(j.spec.template.spec.restartPolicy).toBe('Never');
    expect(j.spec.backoffLimit).toBeLessThanOrEqual(3);
    expect(j.spec.podFailurePolicy.rules).toEqual([
      { action: 'FailJob', onExitCodes: { containerName: 'agent', operator: 'In', values: [1] } },
    ]);
    expect(j.spec.activeDeadlineSeconds).toBeGreaterThan(0);
  });

  test('S3 credentials come only as secretKeyRefs to the named Secret', () => {
    const c = job({ s3 }).spec.template.spec.containers[0];
    expect(c?.env).toEqual(credentialEnv('s3-creds'));
    expect(c?.env).toEqual([
      {
        name: 'AWS_ACCESS_KEY_ID',
        valueFrom: { secretKeyRef: { name: 's3-creds', key: 'AWS_ACCESS_KEY_ID' } },
      },
      {
        name: 'AWS_SECRET_ACCESS_KEY',
        valueFrom: { secretKeyRef: { name: 's3-creds', key: 'AWS_SECRET_ACCESS_KEY' } },
      },
    ]);
    expect(JSON.stringify(job({ s3 }))).not.toMatch(/"value"/);
  });

  test('a claim destination mounts the claim at its subPath and has no credentials', () => {
    const j = job({ pvc: { claimName: 'backup', subPath: '/etcd/main/' } });
    const c = j.spec.template.spec.containers[0];
    expect(j.spec.template.spec.volumes).toEqual([
      { name: 'destination', persistentVolumeClaim: { claimName: 'backup' } },
    ]);
    expect(c?.volumeMounts).toEqual([{ name: 'destination', mountPath: '/snapshots', subPath: 'etcd/main' }]);
    expect(c?.env).toEqual([]);
  });

  test('runs the agent of the given image, restricted, with its result in the termination message file', () => {
    const spec = job({ s3 }).spec.template.spec;
    const c = spec.containers[0];
    expect(c).toMatchObject({
      name: 'agent',
      image: 'img:1',
      command: ['etcd-conductor'],
      terminationMessagePath: '/dev/termination-log',
      securityContext: {
        allowPrivilegeEscalation: false,
        runAsNonRoot: true,
        capabilities: { drop: ['ALL'] },
      },
    });
    expect(c?.args.slice(0, 3)).toEqual(['snapshot', '--endpoint', endpoint]);
    expect(spec.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
  });
});

describe('pickSnapshotSource', () => {
  const m = (name: string, over: Partial<SourceCandidate> = {}): SourceCandidate => ({
    name,
    isLearner: false,
    reachable: true,
    leader: false,
    raftIndex: 100n,
    ...over,
  });
  test.each<[string, SourceCandidate[], string | undefined]>([
    ['a follower rather than the leader', [m('a', { leader: true }), m('b'), m('c')], 'b'],
    [
      'the follower with the highest raft index',
      [m('a', { leader: true }), m('b', { raftIndex: 90n }), m('c')],
      'c',
    ],
    ['the leader when it is the only voter', [m('a', { leader: true })], 'a'],
    ['the leader when no follower answers', [m('a', { leader: true }), m('b', { reachable: false })], 'a'],
    ['never a learner', [m('a', { leader: true }), m('l', { isLearner: true })], 'a'],
    ['nobody when no voter answers', [m('a', { reachable: false }), m('l', { isLearner: true })], undefined],
    ['nobody in an empty list', [], undefined],
  ])('picks %s', (_n, members, want) => {
    expect(pickSnapshotSource(members).member).toBe(want);
  });
});

describe('a snapshot Job of a cluster with client TLS', () => {
  const job = snapshotJob({
    snapshot: { namespace: 'prod', name: 'nightly', uid: 'u' },
    attempt: 1,
    image: 'agent:1',
    endpoint: 'http://main-0.main-peer.prod.svc:2379',
    destination: { pvc: { claimName: 'backups', subPath: 'etcd' } },
    cluster: 'main',
    clientTLSSecret: 'main-operator-tls',
  });
  const container = job.spec.template.spec.containers[0];

  it('mounts the client certificate Secret whole and passes its files to the agent', () => {
    expect(job.spec.template.spec.volumes).toContainEqual({
      name: 'etcd-tls',
      secret: { secretName: 'main-operator-tls', defaultMode: 0o440 },
    });
    expect(container?.volumeMounts).toContainEqual({
      name: 'etcd-tls',
      mountPath: '/etc/etcd-conductor/tls',
      readOnly: true,
    });
    expect(container?.args.slice(-6)).toEqual([
      '--cacert',
      '/etc/etcd-conductor/tls/ca.crt',
      '--cert',
      '/etc/etcd-conductor/tls/tls.crt',
      '--key',
      '/etc/etcd-conductor/tls/tls.key',
    ]);
  });

  it('keeps the destination claim mounted beside it', () => {
    expect(container?.volumeMounts?.map((m) => m.name)).toEqual(['destination', 'etcd-tls']);
  });
});

describe("jobPlacement: where the cluster's Jobs may run", () => {
  const toleration = {
    key: 'dedicated',
    operator: 'Equal' as const,
    value: 'etcd',
    effect: 'NoSchedule' as const,
  };
  const nodeAffinity = {
    requiredDuringSchedulingIgnoredDuringExecution: {
      nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: ['etcd'] }] }],
    },
  };
  const podAntiAffinity = {
    requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname' }],
  };
  test.each<{ case: string; spec: Partial<EtcdClusterSpec> | undefined; want: object }>([
    { case: 'no cluster (gone): anywhere', spec: undefined, want: {} },
    { case: 'no placement: anywhere', spec: {}, want: {} },
    {
      case: 'pull Secrets, nodeSelector, tolerations and priority class carry over',
      spec: {
        imagePullSecrets: [{ name: 'mirror' }],
        nodeSelector: { pool: 'etcd' },
        tolerations: [toleration],
        priorityClassName: 'system-cluster-critical',
      },
      want: {
        imagePullSecrets: [{ name: 'mirror' }],
        nodeSelector: { pool: 'etcd' },
        tolerations: [toleration],
        priorityClassName: 'system-cluster-critical',
      },
    },
    {
      case: "node affinity carries over, the members' pod anti-affinity does not",
      spec: { affinity: { nodeAffinity, podAntiAffinity } },
      want: { affinity: { nodeAffinity } },
    },
    { case: 'only pod anti-affinity: no affinity at all', spec: { affinity: { podAntiAffinity } }, want: {} },
    {
      case: 'empty lists and maps say nothing',
      spec: { nodeSelector: {}, tolerations: [], imagePullSecrets: [] },
      want: {},
    },
  ])('$case', ({ spec, want }) => {
    expect(jobPlacement(spec)).toEqual(want);
  });

  const clusterPlacement: Partial<EtcdClusterSpec> = {
    imagePullSecrets: [{ name: 'mirror' }],
    nodeSelector: { pool: 'etcd' },
    tolerations: [toleration],
    priorityClassName: 'system-cluster-critical',
    affinity: { nodeAffinity, podAntiAffinity },
  };
  const backupNodes = { nodeSelector: { pool: 'backup' } };
  test.each<{ case: string; override: JobPlacementOverride; want: object }>([
    {
      case: 'an empty override keeps all of the cluster placement',
      override: {},
      want: jobPlacement(clusterPlacement),
    },
    {
      case: 'a nodeSelector replaces the cluster one, the rest is kept',
      override: backupNodes,
      want: { ...jobPlacement(clusterPlacement), nodeSelector: { pool: 'backup' } },
    },
    {
      case: 'empty fields clear the cluster ones; pull Secrets stay',
      override: { nodeSelector: {}, tolerations: [], priorityClassName: '', nodeAffinity: {} },
      want: { imagePullSecrets: [{ name: 'mirror' }] },
    },
    {
      case: 'tolerations, priority class and node affinity replace the cluster ones',
      override: {
        tolerations: [{ key: 'backup', operator: 'Exists' }],
        priorityClassName: 'low',
        nodeAffinity: { preferred: true },
      },
      want: {
        imagePullSecrets: [{ name: 'mirror' }],
        nodeSelector: { pool: 'etcd' },
        tolerations: [{ key: 'backup', operator: 'Exists' }],
        priorityClassName: 'low',
        affinity: { nodeAffinity: { preferred: true } },
      },
    },
  ])('override: $case', ({ override, want }) => {
    expect(jobPlacement(clusterPlacement, override)).toEqual(want);
  });

  test('an override places the Job of a cluster that has no placement of its own', () => {
    expect(jobPlacement({}, backupNodes)).toEqual(backupNodes);
    expect(jobPlacement(undefined, backupNodes)).toEqual(backupNodes);
  });

  test("a snapshot Job's Pod carries it", () => {
    const j = snapshotJob({
      snapshot: { namespace: 'ns', name: 's', uid: 'u' },
      attempt: 1,
      image: 'img',
      endpoint: 'http://main-0.main-peer.ns.svc:2379',
      destination: { pvc: { claimName: 'backups', subPath: '' } },
      cluster: 'main',
      placement: jobPlacement({
        nodeSelector: { pool: 'etcd' },
        tolerations: [toleration],
        affinity: { nodeAffinity },
      }),
    });
    expect(j.spec.template.spec).toMatchObject({
      nodeSelector: { pool: 'etcd' },
      tolerations: [toleration],
      affinity: { nodeAffinity },
    });
  });
});
