// spec.tls.mode Auto on the real stack: the operator makes a CA and every certificate, the handed-out client Secret reaches the cluster and nothing else does, and a renewal (made due within minutes by short lifetimes) rolls in under writes with no restart, nothing acknowledged lost, equal hashkv and no planned gap over its bound.
import { X509Certificate } from 'node:crypto';
import { connect as tlsConnect } from 'node:tls';
import type { V1Pod } from '@kubernetes/client-node';
import { Reasons } from '../../crds/conditions';
import type { Harness, ClientCredentials } from '../support/cluster-harness';
import {
  connect,
  createCluster,
  putError,
  eventually,
  freshNamespace,
  getCluster,
  readKeys,
  waitConverged,
  writeKeys,
} from '../support/cluster-harness';
import { expectAvailability, PLANNED_GAP_BOUND_MS } from '../support/availability';
import { startWriterRunning } from '../support/writer';
import { makeCA } from './tls-certs';

jest.setTimeout(1_500_000);

const name = 'auto';
/** Renewal due a minute after each issue (the shortest the CRD allows): the test sees several, each under the writer. */
const auto = { caDuration: '43800h', certificateDuration: '10m', renewBefore: '9m' };
let h: Harness;
let ns: string;

const secretData = async (secret: string) =>
  (await h.core.readNamespacedSecret({ namespace: ns, name: secret })).data ?? {};
const pem = (data: Record<string, string>, key: string) => Buffer.from(data[key] ?? '', 'base64');

type Credentials = NonNullable<ClientCredentials> & { certChain: Buffer; privateKey: Buffer };

/** What a client mounts: the handed-out Secret's certificate, key and CA bundle. */
async function handedOut(): Promise<Credentials> {
  const c = await getCluster(h, ns, name);
  const data = await secretData(c.status?.tls?.clientSecretName ?? `${name}-client-tls`);
  return {
    rootCertificate: pem(data, 'ca.crt'),
    certChain: pem(data, 'tls.crt'),
    privateKey: pem(data, 'tls.key'),
  };
}

const memberPods = async (): Promise<V1Pod[]> =>
  (await h.core.listNamespacedPod({ namespace: ns })).items.filter((p) =>
    /^auto-\d+$/.test(p.metadata?.name ?? ''),
  );
const podUids = async () =>
  new Map((await memberPods()).map((p) => [p.metadata?.name ?? '', p.metadata?.uid]));

/** The fingerprint of the certificate a member presents on its client port. */
function presented(member: string, as: Credentials): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({
      host: `${member}.${name}-peer.${ns}.svc`,
      port: 2379,
      ca: as.rootCertificate,
      cert: as.certChain,
      key: as.privateKey,
      servername: `${member}.${name}-peer.${ns}.svc`,
      timeout: 10_000,
    });
    socket.once('secureConnect', () => {
      const fp = socket.getPeerCertificate().fingerprint256;
      socket.end();
      resolve(fp);
    });
    socket.once('timeout', () => socket.destroy(new Error('timed out')));
    socket.once('error', reject);
  });
}

const events = async () => (await h.core.listNamespacedEvent({ namespace: ns })).items;

beforeAll(async () => {
  h = connect();
  ns = await freshNamespace(h, 'auto-tls');
  await createCluster(h, ns, name, { replicas: 3, tls: { mode: 'Auto', auto } });
  await waitConverged(h, ns, name, 3, 600_000);
});

test('the operator makes a CA and certificates, status names the client Secret, and only its certificate gets in', async () => {
  const c = await getCluster(h, ns, name);
  expect(c.status?.clientEndpoint).toBe(`https://${name}-client.${ns}.svc:2379`);
  expect(c.status?.tls?.clientSecretName).toBe(`${name}-client-tls`);
  const caSecret = await h.core.readNamespacedSecret({ namespace: ns, name: `${name}-ca` });
  expect(caSecret.metadata?.ownerReferences?.[0]?.uid).toBe(c.metadata.uid);
  const ca = new X509Certificate(pem(caSecret.data ?? {}, 'tls.crt'));
  expect(ca.ca).toBe(true);
  expect(c.status?.tls?.caNotAfter).toBe(new Date(ca.validTo).toISOString());
  // certificateDuration 10m: the first certificate expires within 10 minutes of now.
  const firstExpiry = Date.parse(c.status?.tls?.certificatesNotAfter ?? '');
  expect(firstExpiry).toBeGreaterThan(Date.now());
  expect(firstExpiry).toBeLessThanOrEqual(Date.now() + 10 * 60_000);

  const client = await handedOut();
  const written = await writeKeys(ns, name, 'auto', 20, client);
  expect(await readKeys(ns, name, 'auto', client)).toEqual(written);

  // Plaintext, TLS without a client certificate, and a certificate of another CA are all refused.
  const other = makeCA('other-ca');
  expect(await putError({ namespace: ns, name }, undefined, '/auto-probe')).toBeDefined();
  expect(
    await putError({ namespace: ns, name }, { rootCertificate: client.rootCertificate }, '/auto-probe'),
  ).toBeDefined();
  const foreign = other.issue('app');
  expect(
    await putError(
      { namespace: ns, name },
      {
        rootCertificate: client.rootCertificate,
        certChain: foreign.cert,
        privateKey: foreign.key,
      },
      '/auto-probe',
    ),
  ).toBeDefined();
  expect(
    (await events()).some((e) => e.reason === 'AutoTLSIssued' && /created the CA/.test(e.message ?? '')),
  ).toBe(true);
});

test('a due renewal is rolled in under writes by the same CA: no restart, nothing acknowledged lost, equal hashkv', async () => {
  let client = await handedOut();
  const writer = await startWriterRunning({
    namespace: ns,
    name,
    prefix: '/auto-renewal',
    credentials: () => client,
  });
  const before = await podUids();
  const servingBefore = new X509Certificate(pem(await secretData(`${name}-server-tls-applied`), 'tls.crt'));
  const caBefore = pem(await secretData(`${name}-ca`), 'tls.crt');

  // The renewal is due 9 minutes before the 10-minute certificates expire: the operator renews them, then moves them into the copies.
  await eventually(
    'the operator renewed the certificates and put them into the copies members mount',
    async () => {
      const all = await events();
      const renewed = all.some((e) => e.reason === 'AutoTLSRenewed');
      const reissued = all.some((e) => e.reason === 'CertificatesReissued');
      const serving = new X509Certificate(pem(await secretData(`${name}-server-tls-applied`), 'tls.crt'));
      return renewed && reissued && serving.fingerprint256 !== servingBefore.fingerprint256
        ? true
        : undefined;
    },
    600_000,
    2000,
  );
  // Clients reload the handed-out Secret, as a mounted one is refreshed by the kubelet.
  client = await handedOut();
  // The kubelet refreshes the members' mounted copies; each member then presents a renewed certificate.
  for (const member of [0, 1, 2].map((i) => `${name}-${i}`))
    await eventually(
      `${member} presenting a renewed serving certificate`,
      async () => ((await presented(member, client)) !== servingBefore.fingerprint256 ? true : undefined),
      300_000,
      2000,
    );

  const report = await writer.stop();
  await expectAvailability(h, report, {
    what: 'auto-TLS certificate renewal',
    boundMs: PLANNED_GAP_BOUND_MS,
    members: [0, 1, 2].map((i) => `${name}-${i}`),
  });
  // Same CA, no restart: a leaf renewal never rolls members.
  expect(pem(await secretData(`${name}-ca`), 'tls.crt')).toEqual(caBefore);
  expect(await podUids()).toEqual(before);
  const c = await getCluster(h, ns, name);
  expect(c.status?.conditions?.find((x) => x.type === 'Available')?.status).toBe('True');
  expect(c.status?.conditions?.find((x) => x.type === 'Progressing')?.reason).not.toBe(
    Reasons.TLSTrustBroken,
  );
  expect(Date.parse(c.status?.tls?.renewalTime ?? '')).toBeGreaterThan(
    Date.parse(servingBefore.validTo) - 9 * 60_000,
  );
  expect(await putError({ namespace: ns, name }, await handedOut(), '/auto-probe')).toBeUndefined();
});

test('spec.tls.mode cannot be turned off, nor combined with tls.peer', async () => {
  const refused = async (spec: object) => {
    const { setHeaderOptions, PatchStrategy } = await import('@kubernetes/client-node');
    try {
      await h.custom.patchNamespacedCustomObject(
        {
          group: 'etcd.conductor.dev',
          version: 'v1alpha1',
          plural: 'etcdclusters',
          namespace: ns,
          name,
          body: { spec },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      return undefined;
    } catch (err) {
      // The apiserver's Status, whose JSON escapes '<' and '>': its message as the user reads it.
      const body = (err as { body?: unknown }).body;
      const text = typeof body === 'string' ? body : JSON.stringify(body ?? String(err));
      try {
        return String((JSON.parse(text) as { message?: string }).message ?? text);
      } catch {
        return text;
      }
    }
  };
  expect(await refused({ tls: { mode: null } })).toMatch(/spec.tls.mode Auto cannot be turned on or off/);
  expect(await refused({ tls: { peer: { secretName: 'x' } } })).toMatch(/takes no tls.peer or tls.client/);
  expect(await refused({ tls: { auto: { renewBefore: '11m' } } })).toMatch(
    /renewBefore < certificateDuration/,
  );
});
