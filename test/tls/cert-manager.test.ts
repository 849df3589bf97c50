// TLS from a real cert-manager on the local stack: a CA Issuer signs the Certificates the operator creates for spec.tls issuerRefs, the 3-member cluster comes up on them, a client with a cert-manager-issued certificate reads and writes, and plaintext is refused.
import { X509Certificate } from 'node:crypto';
import type { KubernetesObject } from '@kubernetes/client-node';
import {
  peerDnsNames,
  serverDnsNames,
  issuedOperatorSecretName,
  issuedPeerSecretName,
  issuedServerSecretName,
} from '../../crds/tls-names';
import type { Harness } from '../support/cluster-harness';
import {
  connect,
  createCluster,
  putError,
  etcdMemberList,
  eventually,
  freshNamespace,
  getCluster,
  readKeys,
  waitConverged,
  writeKeys,
} from '../support/cluster-harness';
import type { ClientCredentials } from '../support/cluster-harness';
import { makeCA, tlsSecret } from './tls-certs';
import type { TestCA } from './tls-certs';

jest.setTimeout(900_000);

const name = 'cm';
const CM = { group: 'cert-manager.io', version: 'v1' };
const issuerRef = { name: 'ca', kind: 'Issuer', group: 'cert-manager.io' } as const;
let h: Harness;
let ns: string;
let ca: TestCA;

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}
type CertManagerObject = KubernetesObject & { status?: { conditions?: Condition[] } };

const readyCondition = (o: CertManagerObject) => o.status?.conditions?.find((c) => c.type === 'Ready');

async function getCertManagerObject(plural: string, objectName: string): Promise<CertManagerObject> {
  return (await h.custom.getNamespacedCustomObject({
    ...CM,
    plural,
    namespace: ns,
    name: objectName,
  })) as CertManagerObject;
}

/** Waits for a cert-manager object's Ready=True; a timeout names the last Ready condition seen. */
async function waitReady(
  plural: string,
  objectName: string,
  timeoutMs = 180_000,
): Promise<CertManagerObject> {
  let last: Condition | undefined;
  try {
    return await eventually(
      `${plural}/${objectName} Ready`,
      async () => {
        const o = await getCertManagerObject(plural, objectName);
        last = readyCondition(o);
        return last?.status === 'True' ? o : undefined;
      },
      timeoutMs,
    );
  } catch (err) {
    throw new Error(`${String(err)}; last Ready condition: ${JSON.stringify(last)}`, { cause: err });
  }
}

async function secretData(secretName: string): Promise<Record<string, Buffer>> {
  const s = await h.core.readNamespacedSecret({ namespace: ns, name: secretName });
  return Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')]));
}

beforeAll(async () => {
  h = connect();
  if (!h.stack.certManager)
    throw new Error(
      'this stack runs without cert-manager (started with --no-cert-manager); restart it without that flag',
    );
  ns = await freshNamespace(h, 'certmgr');
  ca = makeCA('cert-manager-test-ca');
  // A CA Issuer signs with the key pair in a Secret of its namespace (cert-manager's "CA" issuer type).
  await h.core.createNamespacedSecret({ namespace: ns, body: tlsSecret('ca-key-pair', ca, ca.cert) });
  await h.custom.createNamespacedCustomObject({
    ...CM,
    plural: 'issuers',
    namespace: ns,
    body: {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name: 'ca', namespace: ns },
      spec: { ca: { secretName: 'ca-key-pair' } },
    },
  });
  await waitReady('issuers', 'ca');
  await createCluster(h, ns, name, {
    replicas: 3,
    tls: { peer: { issuerRef }, client: { issuerRef } },
  });
  await waitConverged(h, ns, name, 3, 600_000);
});

describe('a cluster whose peer and client TLS come from a cert-manager CA Issuer', () => {
  test('cert-manager issued the three Certificates the operator created, signed by the Issuer CA and covering the member names', async () => {
    const expected = [
      { secret: issuedPeerSecretName(name), cn: `${name}-peer`, dns: peerDnsNames({ namespace: ns, name }) },
      {
        secret: issuedServerSecretName(name),
        cn: `${name}-client`,
        dns: serverDnsNames({ namespace: ns, name }),
      },
      { secret: issuedOperatorSecretName(name), cn: 'etcd-conductor', dns: [] },
    ];
    const caCert = new X509Certificate(ca.cert);
    for (const e of expected) {
      // The operator names each Certificate after the Secret it fills.
      const cert = await waitReady('certificates', e.secret);
      expect(cert.metadata?.labels?.['app.kubernetes.io/managed-by']).toBe('etcd-conductor');
      const data = await secretData(e.secret);
      expect(Object.keys(data).sort()).toEqual(['ca.crt', 'tls.crt', 'tls.key']);
      const leaf = new X509Certificate(data['tls.crt'] ?? Buffer.alloc(0));
      expect(leaf.verify(caCert.publicKey)).toBe(true);
      expect(leaf.subject).toBe(`CN=${e.cn}`);
      const sans = (leaf.subjectAltName ?? '').split(', ').filter(Boolean);
      expect(sans.sort()).toEqual(e.dns.map((d) => `DNS:${d}`).sort());
      expect(data['ca.crt']?.toString()).toBe(ca.cert.toString());
    }
  });

  test('comes up with https URLs, and a client presenting a cert-manager-issued certificate writes and reads', async () => {
    const c = await getCluster(h, ns, name);
    expect(c.status?.clientEndpoint).toBe(`https://${name}-client.${ns}.svc:2379`);
    await h.custom.createNamespacedCustomObject({
      ...CM,
      plural: 'certificates',
      namespace: ns,
      body: {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Certificate',
        metadata: { name: 'app-client', namespace: ns },
        spec: {
          secretName: 'app-client',
          commonName: 'app',
          usages: ['digital signature', 'key encipherment', 'client auth'],
          privateKey: { algorithm: 'ECDSA', size: 256 },
          issuerRef,
        },
      },
    });
    await waitReady('certificates', 'app-client');
    const issued = await secretData('app-client');
    const client: ClientCredentials = {
      rootCertificate: issued['ca.crt'] ?? Buffer.alloc(0),
      certChain: issued['tls.crt'] ?? Buffer.alloc(0),
      privateKey: issued['tls.key'] ?? Buffer.alloc(0),
    };
    const members = await etcdMemberList(ns, name, client);
    expect(members).toHaveLength(3);
    for (const m of members) expect(m.peerURLs).toEqual([`https://${m.name}.${name}-peer.${ns}.svc:2380`]);
    const written = await writeKeys(ns, name, 'cm', 20, client);
    expect(await readKeys(ns, name, 'cm', client)).toEqual(written);
    // The refusals below are then about the missing certificate, not about a cluster that refuses everyone.
    expect(await putError({ namespace: ns, name }, client, '/refused')).toBeUndefined();
  });

  test('refuses a plaintext client and a TLS client without a certificate', async () => {
    expect(await putError({ namespace: ns, name }, undefined, '/refused')).toBeDefined();
    expect(await putError({ namespace: ns, name }, { rootCertificate: ca.cert }, '/refused')).toBeDefined();
  });
});
