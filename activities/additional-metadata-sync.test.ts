// Keeping additionalMetadata on a cluster's objects: what is patched (only what the operator made for this cluster, never member Pods), that a second run patches nothing, and that removal spares keys others set.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { Labels } from '../crds/labels';
import { additionalMetadataOf } from './additional-metadata';
import { namedClusterObjects, syncAdditionalMetadata } from './additional-metadata-sync';
import type { KubeObjects, ObjectRef } from './kube-objects';

const ref = { namespace: 'prod', name: 'main', uid: 'uid-1' };
const owner = (uid: string, kind = 'EtcdCluster') => [
  { apiVersion: 'x/v1', kind, name: 'o', uid, controller: true },
];
const keyOf = (kind: string, name: string) => `${kind}/${name}`;

/** Objects in a map; selectors `k=v` and `!k`; merge patches of metadata (null removes a key). */
function fakeKube(objects: KubernetesObject[]) {
  const store = new Map(
    objects.map((o) => [keyOf(o.kind ?? '', o.metadata?.name ?? ''), structuredClone(o)]),
  );
  const patched: string[] = [];
  const kube: KubeObjects = {
    createIfAbsent: async () => 'exists',
    deleteIfPresent: async () => 'absent',
    async read<T extends KubernetesObject>(r: ObjectRef) {
      return store.get(keyOf(r.kind, r.name)) as T | undefined;
    },
    async list<T extends KubernetesObject>(_v: string, kind: string, _ns: string, selector: string) {
      const terms = selector.split(',');
      return [...store.values()].filter(
        (o) =>
          o.kind === kind &&
          terms.every((t) => {
            const labels = o.metadata?.labels ?? {};
            if (t.startsWith('!')) return !(t.slice(1) in labels);
            const [k, v] = t.split('=');
            return labels[k ?? ''] === v;
          }),
      ) as T[];
    },
    async mergePatch(r, patch) {
      const o = store.get(keyOf(r.kind, r.name));
      if (!o?.metadata) throw new Error(`no ${r.kind} ${r.name}`);
      const meta = (patch as { metadata: Record<string, Record<string, string | null>> }).metadata;
      for (const field of ['labels', 'annotations'] as const) {
        const next: Record<string, string> = { ...(o.metadata[field] ?? {}) };
        for (const [k, v] of Object.entries(meta[field] ?? {})) {
          if (v === null) delete next[k];
          else next[k] = v;
        }
        o.metadata[field] = next;
      }
      patched.push(keyOf(r.kind, r.name));
    },
  };
  return { kube, store, patched };
}

const common = { 'app.kubernetes.io/managed-by': 'etcd-conductor', 'app.kubernetes.io/instance': 'main' };
const obj = (kind: string, name: string, more: KubernetesObject['metadata'] = {}): KubernetesObject => ({
  kind,
  metadata: { name, namespace: 'prod', labels: { ...common }, ownerReferences: owner(ref.uid), ...more },
});
const world = () => [
  obj('Service', 'main-peer'),
  obj('Service', 'main-client'),
  obj('PodDisruptionBudget', 'main'),
  obj('PersistentVolumeClaim', 'data-main-0', { labels: { ...common, [Labels.cluster]: 'main' } }),
  obj('Secret', 'main-auth-applied'),
  obj('Certificate', 'main-peer-tls'),
  obj('Secret', 'main-peer-tls'),
  obj('Secret', 'main-peer-tls-applied'),
  // A snapshot Job of the cluster (owned by its EtcdSnapshot) and its Pod.
  obj('Job', 'snap-1', { ownerReferences: owner('snap-uid', 'EtcdSnapshot') }),
  obj('Pod', 'snap-1-abc', { ownerReferences: owner('job-uid', 'Job') }),
  // A member Pod: the Rollout's, never this sync's.
  obj('Pod', 'main-0', { labels: { ...common, [Labels.cluster]: 'main', [Labels.member]: 'main-0' } }),
  // A Service of the same name pattern that another cluster owns, and a Job of another cluster.
  obj('Service', 'other', { ownerReferences: owner('uid-2') }),
  obj('Job', 'snap-other', {
    labels: { ...common, 'app.kubernetes.io/instance': 'other' },
    ownerReferences: owner('snap-uid-2', 'EtcdSnapshot'),
  }),
];
const spec = (labels: Record<string, string>, annotations: Record<string, string> = {}) =>
  ({
    additionalMetadata: { labels, annotations },
    auth: { rootSecretRef: { name: 'root' } },
    tls: { peer: { issuerRef: { name: 'ca', kind: 'Issuer' } } },
  }) as Pick<EtcdClusterSpec, 'additionalMetadata' | 'auth' | 'tls'>;

describe('syncAdditionalMetadata', () => {
  it("patches every object made for this cluster, and nothing else: not member Pods, not another cluster's", async () => {
    const { kube, patched, store } = fakeKube(world());
    const result = await syncAdditionalMetadata(kube, ref, spec({ team: 'a' }, { note: 'x' }));
    expect([...patched].sort()).toEqual(
      [
        'Service/main-peer',
        'Service/main-client',
        'PodDisruptionBudget/main',
        'PersistentVolumeClaim/data-main-0',
        'Secret/main-auth-applied',
        'Certificate/main-peer-tls',
        'Secret/main-peer-tls',
        'Secret/main-peer-tls-applied',
        'Job/snap-1',
        'Pod/snap-1-abc',
      ].sort(),
    );
    expect(result).toHaveLength(10);
    expect(store.get('Service/main-client')?.metadata).toMatchObject({
      labels: { team: 'a', ...common },
      annotations: { note: 'x' },
    });
  });
  it('a second run patches nothing', async () => {
    const { kube, patched } = fakeKube(world());
    const s = spec({ team: 'a' });
    await syncAdditionalMetadata(kube, ref, s);
    patched.length = 0;
    expect(await syncAdditionalMetadata(kube, ref, s)).toEqual([]);
    expect(patched).toEqual([]);
  });
  it('a removed key is removed; a key someone else set stays; the record follows', async () => {
    const { kube, store } = fakeKube(world());
    await syncAdditionalMetadata(kube, ref, spec({ team: 'a', cost: 'c1' }));
    const svc = store.get('Service/main-client');
    if (svc?.metadata?.labels) svc.metadata.labels['by-hand'] = 'kept';
    await syncAdditionalMetadata(kube, ref, spec({ team: 'b' }));
    expect(store.get('Service/main-client')?.metadata?.labels).toEqual({
      ...common,
      team: 'b',
      'by-hand': 'kept',
    });
    await syncAdditionalMetadata(kube, ref, {});
    const meta = store.get('Service/main-client')?.metadata;
    expect(meta?.labels).toEqual({ ...common, 'by-hand': 'kept' });
    expect(meta?.annotations).toEqual({});
  });
  it('without additionalMetadata on a cluster that never had it, patches nothing', async () => {
    const { kube, patched } = fakeKube(world());
    expect(additionalMetadataOf({})).toEqual({ labels: {}, annotations: {} });
    expect(await syncAdditionalMetadata(kube, ref, {})).toEqual([]);
    expect(patched).toEqual([]);
  });
});

test('with spec.tls.mode Auto: the CA Secret and every issued Secret and copy, and no cert-manager Certificate', () => {
  const names = namedClusterObjects(ref, { tls: { mode: 'Auto' } })
    .filter((o) => o.kind !== 'Service' && o.kind !== 'PodDisruptionBudget')
    .map((o) => `${o.kind}/${o.name}`);
  expect(names.sort()).toEqual(
    [
      'Secret/main-ca',
      'Secret/main-peer-tls',
      'Secret/main-peer-tls-applied',
      'Secret/main-server-tls',
      'Secret/main-server-tls-applied',
      'Secret/main-operator-tls',
      'Secret/main-operator-tls-applied',
      'Secret/main-client-tls-issued',
      'Secret/main-client-tls',
    ].sort(),
  );
});
