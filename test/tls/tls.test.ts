// TLS on the real stack: a 3-member cluster with peer and client TLS comes up, serves clients with certificates of its CA, takes a snapshot and scales; plaintext, foreign client certificates and a peer with a foreign certificate are refused.
import { request } from 'node:https';
import { API_GROUP, API_VERSION_NAME, ETCD_CLUSTER } from '../../crds/etcd-cluster';
import { apiMessage } from '../localcluster/kube';
import type { Harness } from '../support/cluster-harness';
import {
  connect,
  createCluster,
  putError,
  etcdMemberList,
  freshNamespace,
  getCluster,
  patchSpec,
  readKeys,
  waitConverged,
  writeKeys,
} from '../support/cluster-harness';
import type { ClientCredentials } from '../support/cluster-harness';
import {
  createCredentialsSecret,
  createSnapshot,
  minioDestination,
  waitFinished,
} from '../backup/backup-harness';
import { expectAvailability, PLANNED_GAP_BOUND_MS } from '../support/availability';
import { startWriterRunning } from '../support/writer';
import { makeCA, memberSans, tlsSecret } from './tls-certs';
import type { Pem, TestCA } from './tls-certs';

jest.setTimeout(900_000);

const name = 'tls';
let h: Harness;
let ns: string;
let ca: TestCA;
let other: TestCA;
let client: ClientCredentials;

const credentialsOf = (leaf: Pem, trust: Buffer): ClientCredentials => ({
  rootCertificate: trust,
  certChain: leaf.cert,
  privateKey: leaf.key,
});

/** GET /members on a member's peer port, presenting `leaf`: the status code, or the error etcd's TLS refusal causes. */
function peerGet(member: string, leaf: Pem): Promise<{ status?: number; body?: string; error?: string }> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: `${member}.${name}-peer.${ns}.svc`,
        port: 2380,
        path: '/members',
        ca: ca.cert,
        cert: leaf.cert,
        key: leaf.key,
        timeout: 10_000,
      },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (e) => resolve({ error: e.message }));
    req.end();
  });
}

beforeAll(async () => {
  h = connect();
  ns = await freshNamespace(h, 'tls');
  ca = makeCA('etcd-ca');
  other = makeCA('other-ca');
  const operator = ca.issue('etcd-conductor');
  client = credentialsOf(ca.issue('app'), ca.cert);
  for (const body of [
    tlsSecret('peer-certs', ca.issue(`${name}-peer`, memberSans(ns, name)), ca.cert),
    tlsSecret('server-certs', ca.issue(`${name}-client`, memberSans(ns, name)), ca.cert),
    tlsSecret('operator-cert', operator, ca.cert),
  ])
    await h.core.createNamespacedSecret({ namespace: ns, body });
  await createCluster(h, ns, name, {
    replicas: 3,
    tls: {
      peer: { secretName: 'peer-certs' },
      client: { secretName: 'server-certs', operatorSecretName: 'operator-cert' },
    },
  });
  await waitConverged(h, ns, name, 3, 420_000);
});

describe('a cluster with peer and client TLS', () => {
  test('comes up with https URLs everywhere and serves a client presenting a certificate of its CA', async () => {
    const c = await getCluster(h, ns, name);
    expect(c.status?.clientEndpoint).toBe(`https://${name}-client.${ns}.svc:2379`);
    const members = await etcdMemberList(ns, name, client);
    expect(members).toHaveLength(3);
    for (const m of members) expect(m.peerURLs).toEqual([`https://${m.name}.${name}-peer.${ns}.svc:2380`]);
    const written = await writeKeys(ns, name, 'tls', 20, client);
    expect(await readKeys(ns, name, 'tls', client)).toEqual(written);
  });

  test('refuses a plaintext client, a TLS client without a certificate and a client certificate from another CA', async () => {
    expect(await putError({ namespace: ns, name }, undefined, '/refused')).toBeDefined();
    expect(await putError({ namespace: ns, name }, { rootCertificate: ca.cert }, '/refused')).toBeDefined();
    expect(
      await putError({ namespace: ns, name }, credentialsOf(other.issue('intruder'), ca.cert), '/refused'),
    ).toBeDefined();
    // The same call with the cluster CA's certificate succeeds: the refusals are about the certificate.
    expect(await putError({ namespace: ns, name }, client, '/refused')).toBeUndefined();
  });

  test('a peer presenting a certificate from another CA is refused at the handshake; one of the cluster CA is served', async () => {
    // etcd checks a peer's certificate against the address it connects from: this probe connects from the machine,
    // which Pods see at podsReachHostAt (the node bridge).
    const probeSans = [...memberSans(ns, name), `IP:${h.stack.podsReachHostAt}`];
    const good = await peerGet(`${name}-0`, ca.issue('peer-probe', probeSans));
    expect(good.status).toBe(200);
    expect(good.body).toContain(`${name}-1`);
    const foreign = await peerGet(`${name}-0`, other.issue('peer-probe', probeSans));
    expect(foreign.status).toBeUndefined();
    expect(foreign.error).toBeDefined();
  });

  test('a snapshot Job presents the operator certificate and stores the snapshot', async () => {
    await createCredentialsSecret(h, ns, 's3-credentials');
    await createSnapshot(h, ns, 'tls-snap', {
      clusterRef: { name },
      destination: minioDestination(h, 's3-credentials', `e2e/${ns}`),
    });
    const done = await waitFinished(h, ns, 'tls-snap');
    expect(done.status?.phase).toBe('Succeeded');
    expect(done.status?.artifact?.revision).toBeGreaterThanOrEqual(21);
  });

  test('CEL refuses turning client or peer TLS off for the running cluster, with a message naming the way out', async () => {
    const halves = [
      { peer: { secretName: 'peer-certs' } },
      { client: { secretName: 'server-certs', operatorSecretName: 'operator-cert' } },
    ];
    for (const tls of halves) {
      const current = await getCluster(h, ns, name);
      const refusal = await h.custom
        .replaceNamespacedCustomObject({
          group: API_GROUP,
          version: API_VERSION_NAME,
          plural: ETCD_CLUSTER.plural,
          namespace: ns,
          name,
          body: { ...current, spec: { ...current.spec, tls } },
        })
        .then(
          () => 'accepted',
          (e: unknown) => apiMessage(e),
        );
      expect(refusal).toMatch(/cannot be turned on or off once the EtcdCluster exists/);
      expect(refusal).toMatch(/create a new EtcdCluster/);
    }
  });

  test('scales to 4 with the new member joining over peer TLS, under writes over client TLS', async () => {
    const writer = await startWriterRunning({
      namespace: ns,
      name,
      prefix: '/tls-scale',
      credentials: client,
    });
    await patchSpec(h, ns, name, { replicas: 4 });
    await waitConverged(h, ns, name, 4, 420_000);
    await expectAvailability(h, await writer.stop(), {
      what: 'scale 3 -> 4 with peer and client TLS',
      boundMs: PLANNED_GAP_BOUND_MS,
    });
    const members = await etcdMemberList(ns, name, client);
    expect(members.map((m) => m.name).sort()).toEqual([0, 1, 2, 3].map((i) => `${name}-${i}`));
    expect(await readKeys(ns, name, 'tls', client)).toHaveProperty('size', 20);
  });
});
