import type { KubernetesObject, V1OwnerReference } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { FailureTypes } from '../crds/conditions';
import { TLS_CA_HASH_ANNOTATION, clientEndpointFor, peerURLFor, tlsSecretNames } from '../crds/tls-names';
import type { KubeObjects, ObjectRef } from './kube-objects';
import { caBundleHash, ownIssuedSecret, prepareMemberTLS, tlsConnection } from './etcd-tls';
import { memberPod } from './member-manifests';

const ref = { namespace: 'prod', name: 'main', uid: 'uid-1' };
const b64 = (s: string) => Buffer.from(s).toString('base64');

function secret(name: string, keys: Record<string, string>) {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: ref.namespace },
    data: Object.fromEntries(Object.entries(keys).map(([k, v]) => [k, b64(v)])),
  };
}
const tlsSecret = (name: string, ca = 'CA-1') =>
  secret(name, { 'tls.crt': `${name}-crt`, 'tls.key': `${name}-key`, 'ca.crt': ca });

function cluster(tls: EtcdClusterSpec['tls']) {
  return {
    apiVersion: 'etcd.conductor.dev/v1alpha1',
    kind: 'EtcdCluster',
    metadata: { name: ref.name, namespace: ref.namespace, uid: ref.uid },
    spec: { tls },
  };
}

/** An in-memory apiserver; `unknownKinds` behave like kinds whose CRD is not installed. */
function fakeKube(objects: KubernetesObject[], unknownKinds: string[] = []) {
  const created: KubernetesObject[] = [];
  const key = (r: { kind?: string; namespace?: string; name?: string }) =>
    `${r.kind}/${r.namespace}/${r.name}`;
  const store = new Map(objects.map((o) => [key({ kind: o.kind, ...o.metadata }), o]));
  const kube: KubeObjects = {
    async createIfAbsent(obj) {
      if (unknownKinds.includes(obj.kind ?? ''))
        throw new Error(`Unrecognized API version and kind: ${obj.apiVersion} ${obj.kind}`);
      const k = key({ kind: obj.kind, ...obj.metadata });
      if (store.has(k)) return 'exists';
      store.set(k, obj);
      created.push(obj);
      return 'created';
    },
    async deleteIfPresent() {
      return 'absent';
    },
    async read<T extends KubernetesObject>(r: ObjectRef) {
      return store.get(key(r)) as T | undefined;
    },
    async list() {
      return [];
    },
    async mergePatch() {},
  };
  return { kube, created };
}

const specOf = (tls?: EtcdClusterSpec['tls']): EtcdClusterSpec => ({
  replicas: 3,
  version: '3.6.16',
  storage: { size: '1Gi', medium: '' },
  progressDeadlineSeconds: 600,
  ...(tls ? { tls } : {}),
});

describe('tlsConnection', () => {
  it('gives the operator Secret as client credentials when spec.tls.client is set', async () => {
    const { kube } = fakeKube([
      cluster({ client: { secretName: 'srv', operatorSecretName: 'op' } }),
      tlsSecret('op', 'OP-CA'),
    ]);
    const got = await tlsConnection(kube)(ref);
    expect(got.credentials?.rootCertificate.toString()).toBe('OP-CA');
    expect(got.credentials?.certChain?.toString()).toBe('op-crt');
    expect(got.credentials?.privateKey?.toString()).toBe('op-key');
  });

  it("reads the operator's copy <cluster>-operator-tls-applied of the issued Secret with an issuerRef", async () => {
    const { kube } = fakeKube([
      cluster({ client: { issuerRef: { name: 'ca', kind: 'Issuer', group: 'cert-manager.io' } } }),
      tlsSecret('main-operator-tls'),
      tlsSecret('main-operator-tls-applied'),
    ]);
    const got = await tlsConnection(kube)(ref);
    expect(got.credentials?.certChain?.toString()).toBe('main-operator-tls-applied-crt');
  });

  it.each([
    ['no tls at all', undefined],
    ['peer TLS only (clients stay plaintext)', { peer: { secretName: 'peer' } }],
  ])('adds nothing with %s', async (_name, tls) => {
    const { kube } = fakeKube([cluster(tls)]);
    expect(await tlsConnection(kube)(ref)).toEqual({});
  });

  it('adds nothing for a cluster that is gone', async () => {
    const { kube } = fakeKube([]);
    expect(await tlsConnection(kube)(ref)).toEqual({});
  });

  it('says which Secret and key are missing, as a retryable error', async () => {
    const { kube } = fakeKube([
      cluster({ client: { secretName: 'srv', operatorSecretName: 'op' } }),
      secret('op', { 'tls.crt': 'x', 'ca.crt': 'y' }),
    ]);
    const err = await tlsConnection(kube)(ref).catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(ApplicationFailure);
    expect(String(err)).toMatch(/Secret prod\/op .* lacks tls\.key/);
  });
});

describe('caBundleHash', () => {
  it('changes when either CA bundle changes and not otherwise', () => {
    const a = caBundleHash({ peer: Buffer.from('A'), server: Buffer.from('B') });
    expect(caBundleHash({ peer: Buffer.from('A'), server: Buffer.from('B') })).toBe(a);
    expect(caBundleHash({ peer: Buffer.from('A2'), server: Buffer.from('B') })).not.toBe(a);
    expect(caBundleHash({ peer: Buffer.from('A'), server: Buffer.from('B\nC') })).not.toBe(a);
    // The same bytes in the other role are another trust setup.
    expect(caBundleHash({ peer: Buffer.from('B'), server: Buffer.from('A') })).not.toBe(a);
  });
});

describe('prepareMemberTLS', () => {
  it('returns no hash and reads nothing without spec.tls', async () => {
    const { kube } = fakeKube([]);
    expect(await prepareMemberTLS(kube, ref, specOf())).toEqual({});
  });

  it('hashes the CA bundles, so a changed ca.crt changes the member Pod annotation', async () => {
    const tls = { peer: { secretName: 'peer' }, client: { secretName: 'srv', operatorSecretName: 'op' } };
    const podWith = async (peerCA: string) => {
      const { kube } = fakeKube([tlsSecret('peer', peerCA), tlsSecret('srv', 'S-CA')]);
      const { caHash } = await prepareMemberTLS(kube, ref, specOf(tls));
      return memberPod({
        ref,
        spec: specOf(tls),
        member: 'main-0',
        role: 'voter',
        image: 'etcd:v3.6.16',
        initialClusterState: 'new',
        initialCluster: `main-0=${peerURLFor(specOf(tls), ref, 'main-0')}`,
        ...(caHash ? { tlsCAHash: caHash } : {}),
      });
    };
    const old = await podWith('OLD');
    const bundle = await podWith('OLD\nNEW');
    expect(old.metadata.annotations[TLS_CA_HASH_ANNOTATION]).toMatch(/^[0-9a-f]{16}$/);
    expect(bundle.metadata.annotations[TLS_CA_HASH_ANNOTATION]).not.toBe(
      old.metadata.annotations[TLS_CA_HASH_ANNOTATION],
    );
    expect((await podWith('OLD')).metadata.annotations).toEqual(old.metadata.annotations);
  });

  it('waits (retryable) for a Secret that does not exist yet, naming it', async () => {
    const { kube } = fakeKube([]);
    const err = await prepareMemberTLS(kube, ref, specOf({ peer: { secretName: 'peer' } })).catch(
      (e: unknown) => e,
    );
    expect(err).not.toBeInstanceOf(ApplicationFailure);
    expect(String(err)).toContain('the Secret prod/peer (spec.tls.peer) does not exist yet');
  });

  it('creates the cert-manager Certificates for an issuerRef, then reads the Secrets they fill', async () => {
    const issuerRef = { name: 'ca', kind: 'ClusterIssuer' as const, group: 'cert-manager.io' };
    const tls = { peer: { issuerRef }, client: { issuerRef } };
    const { kube, created } = fakeKube([
      tlsSecret('main-peer-tls'),
      tlsSecret('main-server-tls'),
      tlsSecret('main-operator-tls'),
    ]);
    const { caHash } = await prepareMemberTLS(kube, ref, specOf(tls));
    expect(caHash).toMatch(/^[0-9a-f]{16}$/);
    // Then the copies members mount, made from what cert-manager issued (activities/issued-tls.ts).
    expect(created.map((c) => `${c.kind}/${c.metadata?.name}`)).toEqual([
      'Certificate/main-peer-tls',
      'Certificate/main-server-tls',
      'Certificate/main-operator-tls',
      'Secret/main-peer-tls-applied',
      'Secret/main-server-tls-applied',
      'Secret/main-operator-tls-applied',
    ]);
    expect(tlsSecretNames(specOf(tls), 'main')).toEqual({
      peer: 'main-peer-tls-applied',
      server: 'main-server-tls-applied',
      operator: 'main-operator-tls-applied',
    });
  });

  it('refuses for good (CertManagerMissing) when the cert-manager CRDs are not installed', async () => {
    const { kube } = fakeKube([], ['Certificate']);
    const issuerRef = { name: 'ca', kind: 'Issuer' as const, group: 'cert-manager.io' };
    const err = await prepareMemberTLS(kube, ref, specOf({ peer: { issuerRef } })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect((err as ApplicationFailure).type).toBe(FailureTypes.CertManagerMissing);
    expect((err as ApplicationFailure).nonRetryable).toBe(true);
    expect((err as Error).message).toMatch(/install cert-manager or give the certificates as Secrets/);
  });
});

describe('URLs under spec.tls', () => {
  it.each([
    ['no TLS', undefined, 'http://main-0.main-peer.prod.svc:2380', 'http://main-client.prod.svc:2379'],
    [
      'peer TLS only',
      { peer: { secretName: 'p' } },
      'https://main-0.main-peer.prod.svc:2380',
      'http://main-client.prod.svc:2379',
    ],
    [
      'client TLS only',
      { client: { secretName: 's', operatorSecretName: 'o' } },
      'http://main-0.main-peer.prod.svc:2380',
      'https://main-client.prod.svc:2379',
    ],
  ])('%s', (_name, tls, peer, client) => {
    expect(peerURLFor(specOf(tls), ref, 'main-0')).toBe(peer);
    expect(clientEndpointFor(specOf(tls), ref)).toBe(client);
  });
});

describe('ownIssuedSecret: the Secret cert-manager issues goes when the cluster goes', () => {
  const issued = (more: { owners?: V1OwnerReference[]; certificate?: string } = {}): KubernetesObject => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: 'main-peer-tls',
      namespace: ref.namespace,
      resourceVersion: '7',
      annotations: { 'cert-manager.io/certificate-name': more.certificate ?? 'main-peer-tls' },
      ...(more.owners ? { ownerReferences: more.owners } : {}),
    },
  });
  function kubeWith(found: KubernetesObject | undefined) {
    const patches: object[] = [];
    const kube = {
      read: async () => found,
      mergePatch: async (_r: ObjectRef, patch: object) => {
        patches.push(patch);
      },
    } as unknown as KubeObjects;
    return { kube, patches };
  }
  const certOwner = {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    name: 'main-peer-tls',
    uid: 'c1',
  };
  const clusterOwner = {
    apiVersion: 'etcd.conductor.dev/v1alpha1',
    kind: 'EtcdCluster',
    name: 'main',
    uid: 'uid-1',
  };

  test.each<[string, KubernetesObject | undefined, 'owned' | 'not-issued', object[]]>([
    ['not issued yet: nothing to do, later', undefined, 'not-issued', []],
    [
      'issued for another Certificate (a user Secret of that name): left alone',
      issued({ certificate: 'something-else' }),
      'not-issued',
      [],
    ],
    ['already owned: nothing to do', issued({ owners: [clusterOwner] }), 'owned', []],
    [
      'issued, with the Certificate as owner: the cluster is added beside it',
      issued({ owners: [certOwner] }),
      'owned',
      [
        {
          metadata: {
            ownerReferences: [certOwner, clusterOwner],
            resourceVersion: '7',
          },
        },
      ],
    ],
  ])('%s', async (_name, found, result, patches) => {
    const k = kubeWith(found);
    await expect(ownIssuedSecret(k.kube, ref, 'main-peer-tls')).resolves.toBe(result);
    expect(k.patches).toEqual(patches);
  });
});
