// The archiver's Deployment: one Recreate replica owned by the cluster, restricted, placed like the cluster's Jobs,
// credentials by reference only, the command line the agent parses, and a template hash that moves with the spec.
import { parseArchiveArgs } from '../agent/archive-args';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import {
  ARCHIVER_TEMPLATE_HASH_ANNOTATION,
  archiverArgs,
  archiverDeployment,
  archiverName,
} from './archiver-manifests';

const ref = { namespace: 'prod', name: 'main', uid: '0b7e4b1e-7c1f-4f7e-a7a4-1f6c8f3d2a10' };
const IMAGE = 'ghcr.io/etcd-conductor/etcd-conductor:0.1.0';
const s3 = {
  endpoint: 'http://minio.minio.svc:9000',
  bucket: 'backups',
  key: 'etcd/main',
  region: 'us-east-1',
  forcePathStyle: true,
  credentialsSecretRef: { name: 's3-creds' },
};
const base: EtcdClusterSpec = {
  replicas: 3,
  version: '3.6.16',
  storage: { size: '1Gi', medium: '' },
  progressDeadlineSeconds: 600,
  backup: {
    destination: { s3 },
    continuous: { fullSnapshotInterval: '1h', maxLagSeconds: 5, retention: '168h' },
  },
};
const withSpec = (patch: Partial<EtcdClusterSpec>): EtcdClusterSpec => ({ ...base, ...patch });
const container = (d: ReturnType<typeof archiverDeployment>) => d.spec.template.spec.containers[0]!;
const hashOf = (d: ReturnType<typeof archiverDeployment>) =>
  d.metadata.annotations[ARCHIVER_TEMPLATE_HASH_ANNOTATION];

test('the command line is one the agent accepts, with the cluster uid, the client Service and the settings in seconds', () => {
  const args = archiverArgs(ref, base)!;
  expect(parseArchiveArgs(args.slice(1))).toEqual({
    command: 'archive',
    endpoint: 'http://main-client.prod.svc:2379',
    destination: {
      endpoint: s3.endpoint,
      bucket: 'backups',
      key: 'etcd/main',
      region: 'us-east-1',
      forcePathStyle: true,
    },
    clusterUid: ref.uid,
    workDir: '/work',
    fullSnapshotIntervalSeconds: 3600,
    maxLagSeconds: 5,
    retentionSeconds: 604800,
  });
});

test.each<[string, EtcdClusterSpec]>([
  ['no continuous backup', withSpec({ backup: { destination: { s3 } } })],
  [
    'a claim destination (CEL refuses it; the builder too)',
    withSpec({
      backup: { destination: { pvc: { claimName: 'c', subPath: '' } }, continuous: base.backup!.continuous! },
    }),
  ],
  ['no backup at all', withSpec({ backup: undefined })],
])('no archiver for %s', (_name, spec) => {
  expect(archiverArgs(ref, spec)).toBeUndefined();
  expect(() => archiverDeployment(ref, spec, IMAGE)).toThrow(/needs spec.backup.continuous/);
});

test('one Recreate replica owned by the cluster, restricted, no service account token, credentials by reference only', () => {
  const d = archiverDeployment(ref, base, IMAGE);
  expect(d.metadata).toMatchObject({
    name: 'main-archiver',
    namespace: 'prod',
    ownerReferences: [{ kind: 'EtcdCluster', name: 'main', uid: ref.uid, controller: true }],
  });
  expect(d.spec).toMatchObject({ replicas: 1, strategy: { type: 'Recreate' } });
  expect(d.spec.selector.matchLabels).toEqual(d.spec.template.metadata.labels);
  const pod = d.spec.template.spec;
  expect(pod).toMatchObject({ automountServiceAccountToken: false, securityContext: { runAsNonRoot: true } });
  expect(container(d)).toMatchObject({
    image: IMAGE,
    command: ['etcd-conductor'],
    securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true },
  });
  expect(container(d).env).toEqual([
    {
      name: 'AWS_ACCESS_KEY_ID',
      valueFrom: { secretKeyRef: { name: 's3-creds', key: 'AWS_ACCESS_KEY_ID' } },
    },
    {
      name: 'AWS_SECRET_ACCESS_KEY',
      valueFrom: { secretKeyRef: { name: 's3-creds', key: 'AWS_SECRET_ACCESS_KEY' } },
    },
  ]);
  expect(pod.volumes).toEqual([{ name: 'work', emptyDir: {} }]);
  expect(archiverName('main')).toBe('main-archiver');
});

test('client TLS and auth: the operator certificate mounted, https to the client Service, root credentials by reference', () => {
  const spec = withSpec({
    tls: { client: { secretName: 'srv', operatorSecretName: 'op-cert' } },
    auth: { rootSecretRef: { name: 'root-pass' } },
  });
  const d = archiverDeployment(ref, spec, IMAGE);
  const args = container(d).args;
  expect(args.slice(0, 9)).toEqual([
    'archive',
    '--endpoint',
    'https://main-client.prod.svc:2379',
    '--cacert',
    '/etc/etcd-conductor/tls/ca.crt',
    '--cert',
    '/etc/etcd-conductor/tls/tls.crt',
    '--key',
    '/etc/etcd-conductor/tls/tls.key',
  ]);
  expect(d.spec.template.spec.volumes).toContainEqual({
    name: 'etcd-tls',
    secret: { secretName: 'op-cert', defaultMode: 0o440 },
  });
  expect(container(d).env.map((e) => e.name)).toEqual([
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'ETCD_USERNAME',
    'ETCD_PASSWORD',
  ]);
});

test("the cluster's placement and metadata apply, the members' Pod anti-affinity does not", () => {
  const spec = withSpec({
    nodeSelector: { pool: 'etcd' },
    tolerations: [{ key: 'etcd', operator: 'Exists' }],
    priorityClassName: 'critical',
    imagePullSecrets: [{ name: 'pull' }],
    affinity: { nodeAffinity: { x: 1 }, podAntiAffinity: { y: 2 } },
    additionalMetadata: { labels: { team: 'db' }, annotations: { note: 'n' } },
  });
  const d = archiverDeployment(ref, spec, IMAGE);
  expect(d.spec.template.spec).toMatchObject({
    nodeSelector: { pool: 'etcd' },
    tolerations: [{ key: 'etcd', operator: 'Exists' }],
    priorityClassName: 'critical',
    imagePullSecrets: [{ name: 'pull' }],
    affinity: { nodeAffinity: { x: 1 } },
  });
  expect(d.spec.template.spec).not.toHaveProperty('affinity.podAntiAffinity');
  expect(d.metadata.labels).toMatchObject({ team: 'db' });
  expect(d.spec.template.metadata.labels).toMatchObject({ team: 'db' });
});

test.each<[string, EtcdClusterSpec, boolean]>([
  ['the same spec keeps the hash', base, false],
  [
    'a new lag changes it',
    withSpec({
      backup: { destination: { s3 }, continuous: { ...base.backup!.continuous!, maxLagSeconds: 9 } },
    }),
    true,
  ],
  [
    'new credentials change it',
    withSpec({
      backup: {
        destination: { s3: { ...s3, credentialsSecretRef: { name: 'other' } } },
        continuous: base.backup!.continuous!,
      },
    }),
    true,
  ],
  ['new metadata changes it', withSpec({ additionalMetadata: { labels: { a: 'b' } } }), true],
  ['a change the archiver does not see (replicas) keeps it', withSpec({ replicas: 5 }), false],
])('%s', (_name, spec, changed) => {
  expect(hashOf(archiverDeployment(ref, spec, IMAGE)) !== hashOf(archiverDeployment(ref, base, IMAGE))).toBe(
    changed,
  );
});
