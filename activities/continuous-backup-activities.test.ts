// keepContinuousBackup against a map-backed Kubernetes and a fake store: the Deployment follows the spec (created,
// kept, replaced on a change, deleted when unset, each idempotent), and the store's state or why it cannot be read.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { archiveRoot, stateKey } from '../contracts/continuous-backup';
import { ARCHIVER_TEMPLATE_HASH_ANNOTATION } from './archiver-manifests';
import { createContinuousBackupActivities, type ReadObject } from './continuous-backup-activities';
import type { KubeObjects, ObjectRef } from './kube-objects';

const ref = { namespace: 'prod', name: 'main', uid: '0b7e4b1e-7c1f-4f7e-a7a4-1f6c8f3d2a10' };
const s3 = {
  endpoint: 'http://minio:9000',
  bucket: 'backups',
  key: 'etcd/main',
  region: 'us-east-1',
  forcePathStyle: true,
  credentialsSecretRef: { name: 's3-creds' },
};
const continuous = { fullSnapshotInterval: '1h', maxLagSeconds: 5, retention: '168h' };
const spec: EtcdClusterSpec = {
  replicas: 3,
  version: '3.6.16',
  storage: { size: '1Gi', medium: '' },
  progressDeadlineSeconds: 600,
  backup: { destination: { s3 }, continuous },
};
const b64 = (s: string) => Buffer.from(s).toString('base64');
const STATE = {
  format: 1,
  clusterUid: ref.uid,
  chain: 'c',
  latestRevision: 1234,
  latestTime: '2026-11-25T10:00:00.000Z',
  gaps: [],
};

function world() {
  const objects = new Map<string, KubernetesObject>();
  const key = (r: KubernetesObject | ObjectRef) =>
    'name' in r ? `${r.kind}/${r.name}` : `${r.kind}/${r.metadata?.name}`;
  const calls: string[] = [];
  const kube: KubeObjects = {
    async createIfAbsent(obj) {
      calls.push(`create ${key(obj)}`);
      if (objects.has(key(obj))) return 'exists';
      objects.set(
        key(obj),
        structuredClone({ ...obj, metadata: { ...obj.metadata, uid: `uid-${calls.length}` } }),
      );
      return 'created';
    },
    async deleteIfPresent(r) {
      calls.push(`delete ${key(r)}`);
      return objects.delete(key(r)) ? 'deleted' : 'absent';
    },
    async read<T extends KubernetesObject>(r: ObjectRef) {
      const o = objects.get(key(r));
      return o ? (structuredClone(o) as T) : undefined;
    },
    async list() {
      return [];
    },
    async mergePatch() {},
  };
  objects.set('Secret/s3-creds', {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 's3-creds' },
    data: { AWS_ACCESS_KEY_ID: b64('id'), AWS_SECRET_ACCESS_KEY: b64('secret') },
  } as KubernetesObject);
  const store = new Map<string, Buffer>();
  const asked: string[] = [];
  const readObject: ReadObject = async (location, k, creds) => {
    asked.push(`${location.bucket}/${k} as ${creds.accessKeyId}`);
    if (location.bucket === 'gone') throw new Error('NoSuchBucket: The specified bucket does not exist');
    return store.get(k);
  };
  const acts = createContinuousBackupActivities({ kube, agentImage: 'img:1', readObject });
  return { objects, calls, store, asked, acts };
}

test("set: the Deployment is created once, then kept; the state is read with the Secret's credentials", async () => {
  const w = world();
  expect(await w.acts.keepContinuousBackup({ ref, spec })).toEqual({ deployment: 'created' });
  w.store.set(stateKey(archiveRoot('etcd/main', ref.uid)), Buffer.from(JSON.stringify(STATE)));
  expect(await w.acts.keepContinuousBackup({ ref, spec })).toEqual({
    deployment: 'unchanged',
    state: { latestRevision: 1234, latestTime: STATE.latestTime, gaps: [] },
  });
  expect(w.asked).toEqual([
    `backups/etcd/main/continuous/${ref.uid}/state.json as id`,
    `backups/etcd/main/continuous/${ref.uid}/state.json as id`,
  ]);
  expect(w.calls.filter((c) => c.startsWith('create'))).toEqual(['create Deployment/main-archiver']);
});

test('changed: the old Deployment is deleted and the new one created, with the new template hash', async () => {
  const w = world();
  await w.acts.keepContinuousBackup({ ref, spec });
  const before = (
    w.objects.get('Deployment/main-archiver') as { metadata: { annotations: Record<string, string> } }
  ).metadata.annotations[ARCHIVER_TEMPLATE_HASH_ANNOTATION];
  const changed = {
    ...spec,
    backup: { destination: { s3 }, continuous: { ...continuous, maxLagSeconds: 10 } },
  };
  expect((await w.acts.keepContinuousBackup({ ref, spec: changed })).deployment).toBe('replaced');
  const after = (
    w.objects.get('Deployment/main-archiver') as { metadata: { annotations: Record<string, string> } }
  ).metadata.annotations[ARCHIVER_TEMPLATE_HASH_ANNOTATION];
  expect(after).not.toBe(before);
  expect((await w.acts.keepContinuousBackup({ ref, spec: changed })).deployment).toBe('unchanged');
});

test('unset: the Deployment is deleted, then absent; the store is not read', async () => {
  const w = world();
  await w.acts.keepContinuousBackup({ ref, spec });
  const off = { ...spec, backup: { destination: { s3 } } };
  expect(await w.acts.keepContinuousBackup({ ref, spec: off })).toEqual({ deployment: 'deleted' });
  expect(await w.acts.keepContinuousBackup({ ref, spec: off })).toEqual({ deployment: 'absent' });
  expect(w.asked).toHaveLength(1);
});

test.each<[string, (w: ReturnType<typeof world>) => EtcdClusterSpec, RegExp]>([
  [
    'a missing Secret',
    (w) => (w.objects.delete('Secret/s3-creds'), spec),
    /the Secret prod\/s3-creds is missing or lacks/,
  ],
  [
    'a bucket that is gone',
    () => ({ ...spec, backup: { destination: { s3: { ...s3, bucket: 'gone' } }, continuous } }),
    /reading s3:\/\/gone\/.*state\.json failed: NoSuchBucket/,
  ],
  [
    'a state object of another cluster',
    (w) => (
      w.store.set(
        stateKey(archiveRoot('etcd/main', ref.uid)),
        Buffer.from(JSON.stringify({ ...STATE, clusterUid: 'x' })),
      ),
      spec
    ),
    /is not an archiver state: not this cluster's state/,
  ],
  [
    'a state object that is not JSON',
    (w) => (w.store.set(stateKey(archiveRoot('etcd/main', ref.uid)), Buffer.from('{')), spec),
    /is not an archiver state/,
  ],
])('%s is a store problem in words, and the Deployment is still kept', async (_name, arrange, problem) => {
  const w = world();
  const s = arrange(w);
  const report = await w.acts.keepContinuousBackup({ ref, spec: s });
  expect(report.deployment).toBe('created');
  expect(report.storeProblem).toMatch(problem);
  expect(report.storeProblem).not.toMatch(/secret$/);
});
