import { tlsCertificates } from './tls-certificates';

const ref = { namespace: 'prod', name: 'main', uid: 'uid-1' };
const issuerRef = { name: 'etcd-ca', kind: 'ClusterIssuer' as const, group: 'cert-manager.io' };

describe('tlsCertificates (cert-manager is not on the local stack: these objects are what a real cluster gets)', () => {
  it('issues nothing when every half of TLS names a Secret', () => {
    expect(
      tlsCertificates(ref, {
        tls: { peer: { secretName: 'p' }, client: { secretName: 's', operatorSecretName: 'o' } },
      }),
    ).toEqual([]);
  });

  it('a peer Certificate covers every member name (with and without cluster.local), for server and client auth', () => {
    const [peer, ...rest] = tlsCertificates(ref, { tls: { peer: { issuerRef } } });
    expect(rest).toEqual([]);
    expect(peer).toMatchObject({
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: {
        name: 'main-peer-tls',
        namespace: 'prod',
        ownerReferences: [{ kind: 'EtcdCluster', name: 'main', uid: 'uid-1', controller: true }],
      },
      spec: {
        secretName: 'main-peer-tls',
        dnsNames: ['*.main-peer.prod.svc', '*.main-peer.prod.svc.cluster.local'],
        issuerRef: { name: 'etcd-ca', kind: 'ClusterIssuer', group: 'cert-manager.io' },
      },
    });
    expect(peer?.spec.usages).toEqual(expect.arrayContaining(['server auth', 'client auth']));
  });

  it('client TLS gets a serving Certificate for member and Service names and an operator client Certificate', () => {
    const certs = tlsCertificates(ref, { tls: { client: { issuerRef } } });
    expect(certs.map((c) => c.metadata.name)).toEqual(['main-server-tls', 'main-operator-tls']);
    const [server, operator] = certs;
    expect(server?.spec.dnsNames).toEqual([
      '*.main-peer.prod.svc',
      '*.main-peer.prod.svc.cluster.local',
      'main-client.prod.svc',
      'main-client.prod.svc.cluster.local',
    ]);
    expect(operator?.spec.dnsNames).toBeUndefined();
    expect(operator?.spec.usages).toContain('client auth');
    expect(operator?.spec.usages).not.toContain('server auth');
    expect(operator?.spec.commonName).toBe('etcd-conductor');
  });

  it('an operatorSecretName beside an issuerRef is the user’s own: no operator Certificate', () => {
    const certs = tlsCertificates(ref, { tls: { client: { issuerRef, operatorSecretName: 'mine' } } });
    expect(certs.map((c) => c.metadata.name)).toEqual(['main-server-tls']);
  });
});
