import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { OPERATOR_OWNED_FLAGS } from '../crds/etcd-cluster';
import { memberPeerURLTLS } from '../crds/names';
import { memberPod } from './member-manifests';

const ref = { namespace: 'prod', name: 'main', uid: 'uid-1' };
const specOf = (tls?: EtcdClusterSpec['tls']): EtcdClusterSpec => ({
  replicas: 3,
  version: '3.6.16',
  storage: { size: '1Gi', medium: '' },
  progressDeadlineSeconds: 600,
  ...(tls ? { tls } : {}),
});
const podOf = (tls?: EtcdClusterSpec['tls']) =>
  memberPod({
    ref,
    spec: specOf(tls),
    member: 'main-1',
    role: 'voter',
    image: 'etcd:v3.6.16',
    initialClusterState: 'existing',
    initialCluster: `main-0=${memberPeerURLTLS(ref, 'main-0')},main-1=${memberPeerURLTLS(ref, 'main-1')}`,
  });
const argsOf = (pod: ReturnType<typeof podOf>) =>
  Object.fromEntries(
    (pod.spec.containers[0]?.args ?? []).map((a) => {
      const m = /^--([^=]+)=(.*)$/.exec(a);
      return [m?.[1], m?.[2]];
    }),
  );

const both = { peer: { secretName: 'peer-certs' }, client: { secretName: 'srv', operatorSecretName: 'op' } };

describe('member Pods with spec.tls', () => {
  it('peer and client URLs are https and every certificate flag points into the mounted Secrets', () => {
    const args = argsOf(podOf(both));
    expect(args).toMatchObject({
      'listen-peer-urls': 'https://$(POD_IP):2380',
      'listen-client-urls': 'https://$(POD_IP):2379',
      'listen-metrics-urls': 'http://$(POD_IP):2381',
      'advertise-client-urls': 'https://main-1.main-peer.prod.svc:2379',
      'initial-advertise-peer-urls': 'https://main-1.main-peer.prod.svc:2380',
      'peer-cert-file': '/etc/etcd/tls/peer/tls.crt',
      'peer-key-file': '/etc/etcd/tls/peer/tls.key',
      'peer-trusted-ca-file': '/etc/etcd/tls/peer/ca.crt',
      'peer-client-cert-auth': 'true',
      'cert-file': '/etc/etcd/tls/client/tls.crt',
      'key-file': '/etc/etcd/tls/client/tls.key',
      'trusted-ca-file': '/etc/etcd/tls/client/ca.crt',
      'client-cert-auth': 'true',
    });
  });

  it('mounts each Secret whole, never through subPath, so the kubelet’s refresh reaches etcd', () => {
    const pod = podOf(both);
    expect(pod.spec.volumes).toEqual(
      expect.arrayContaining([
        { name: 'peer-tls', secret: { secretName: 'peer-certs', defaultMode: 0o440 } },
        { name: 'client-tls', secret: { secretName: 'srv', defaultMode: 0o440 } },
      ]),
    );
    const mounts = pod.spec.containers[0]?.volumeMounts ?? [];
    expect(mounts.filter((m) => m.name.endsWith('-tls'))).toEqual([
      { name: 'peer-tls', mountPath: '/etc/etcd/tls/peer', readOnly: true },
      { name: 'client-tls', mountPath: '/etc/etcd/tls/client', readOnly: true },
    ]);
    expect(mounts.some((m) => 'subPath' in m)).toBe(false);
  });

  it('only the half that is on: peer TLS alone leaves the client port plaintext', () => {
    const pod = podOf({ peer: { secretName: 'peer-certs' } });
    const args = argsOf(pod);
    expect(args['listen-client-urls']).toBe('http://$(POD_IP):2379');
    expect(args['cert-file']).toBeUndefined();
    expect(pod.spec.volumes.map((v) => v.name)).toEqual(['data', 'peer-tls']);
  });

  it('without spec.tls nothing TLS appears', () => {
    const pod = podOf();
    expect(pod.spec.volumes.map((v) => v.name)).toEqual(['data']);
    // --initial-cluster is the caller's input (here built with https URLs); everything the Pod adds is plain.
    const own = pod.spec.containers[0]?.args.filter((a) => !a.startsWith('--initial-cluster=')) ?? [];
    expect(own.some((a) => /tls|cert|https/.test(a))).toBe(false);
  });

  it('every certificate flag it sets is operator-owned, so spec.options cannot override it', () => {
    const set = Object.keys(argsOf(podOf(both))).filter((f) => /cert|key-file|trusted/.test(f ?? ''));
    expect(set.length).toBe(8);
    for (const f of set) expect(OPERATOR_OWNED_FLAGS).toContain(f);
  });
});

describe('member Pods with spec.tls.mode Auto', () => {
  it('turn on both halves with every flag, and mount the copies of what the operator issued', () => {
    const pod = podOf({ mode: 'Auto' });
    expect(argsOf(pod)).toMatchObject({
      'listen-peer-urls': 'https://$(POD_IP):2380',
      'listen-client-urls': 'https://$(POD_IP):2379',
      'advertise-client-urls': 'https://main-1.main-peer.prod.svc:2379',
      'initial-advertise-peer-urls': 'https://main-1.main-peer.prod.svc:2380',
      'peer-trusted-ca-file': '/etc/etcd/tls/peer/ca.crt',
      'peer-client-cert-auth': 'true',
      'trusted-ca-file': '/etc/etcd/tls/client/ca.crt',
      'client-cert-auth': 'true',
    });
    const secrets = (pod.spec.volumes ?? []).flatMap((v) =>
      'secret' in v && v.secret ? [v.secret.secretName] : [],
    );
    expect(secrets).toEqual(['main-peer-tls-applied', 'main-server-tls-applied']);
  });
});
