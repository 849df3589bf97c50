// CA rotation on the real stack, done as a user does it, by editing the Secrets, under a steady write load: trust old and new (members roll), reissue from the new CA (no restart), drop the old CA (members roll); no acknowledged write lost, equal hashkv, and the old CA's client certificates refused at the end. Dropping the old CA too early is held with TLSTrustBroken.
import { connect as tlsConnect } from 'node:tls';
import type { V1Pod } from '@kubernetes/client-node';
import { caBundleHash } from '../../activities/etcd-tls';
import { Reasons } from '../../crds/conditions';
import { TLS_CA_HASH_ANNOTATION } from '../../crds/tls-names';
import type { ClientCredentials, Harness } from '../support/cluster-harness';
import {
  connect,
  createCluster,
  putError,
  eventually,
  freshNamespace,
  getCluster,
  patchSpec,
  waitConverged,
} from '../support/cluster-harness';
import { expectAvailability, PLANNED_GAP_BOUND_MS } from '../support/availability';
import { startWriterRunning } from '../support/writer';
import { makeCA, memberSans, tlsSecret } from './tls-certs';
import type { Pem, TestCA } from './tls-certs';

jest.setTimeout(2_400_000);

const name = 'rot';
let h: Harness;
let ns: string;
let oldCA: TestCA;
let newCA: TestCA;
let both: Buffer;

const credentialsOf = (leaf: Pem, trust: Buffer): ClientCredentials => ({
  rootCertificate: trust,
  certChain: leaf.cert,
  privateKey: leaf.key,
});

/** Replaces some keys of a kubernetes.io/tls Secret, as `kubectl edit` would. */
async function editSecret(secret: string, change: { leaf?: Pem; ca?: Buffer }) {
  const current = await h.core.readNamespacedSecret({ namespace: ns, name: secret });
  const data = { ...current.data };
  if (change.leaf) {
    data['tls.crt'] = change.leaf.cert.toString('base64');
    data['tls.key'] = change.leaf.key.toString('base64');
  }
  if (change.ca) data['ca.crt'] = change.ca.toString('base64');
  await h.core.replaceNamespacedSecret({ namespace: ns, name: secret, body: { ...current, data } });
}

const memberPods = async (): Promise<V1Pod[]> =>
  (await h.core.listNamespacedPod({ namespace: ns })).items.filter((p) =>
    p.metadata?.name?.startsWith(`${name}-`),
  );

/** Waits until every member Pod was started on `bundle` (its CA-hash annotation) and the Rollout finished with every member up to date. */
async function waitRolledOnto(bundle: Buffer, before: Map<string, string | undefined>) {
  const hash = caBundleHash({ peer: bundle, server: bundle });
  return eventually(
    `${ns}/${name} rolled onto the new ca.crt`,
    async () => {
      const pods = await memberPods();
      const rolled =
        pods.length === 3 &&
        pods.every(
          (p) =>
            p.metadata?.annotations?.[TLS_CA_HASH_ANNOTATION] === hash &&
            before.get(p.metadata?.name ?? '') !== p.metadata?.uid,
        );
      const c = await getCluster(h, ns, name);
      const s = c.status;
      const done =
        rolled &&
        !s?.currentOperation &&
        s?.lastOperation?.type === 'Rollout' &&
        s.lastOperation.result === 'Succeeded' &&
        s.updatedReplicas === 3 &&
        s.members?.length === 3 &&
        s.members.every((m) => m.ready && m.upToDate === true);
      return done ? c : undefined;
    },
    900_000,
    1000,
  );
}

const podUids = async () =>
  new Map((await memberPods()).map((p) => [p.metadata?.name ?? '', p.metadata?.uid]));

/** The issuer CN of the certificate a member presents on `port`, connecting as `as`. */
function presentedIssuer(member: string, port: number, as: Pem): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({
      host: `${member}.${name}-peer.${ns}.svc`,
      port,
      cert: as.cert,
      key: as.key,
      // Only looking at what is presented; trust is what the rest of the test checks.
      rejectUnauthorized: false,
      timeout: 10_000,
    });
    socket.once('secureConnect', () => {
      const issuer = socket.getPeerCertificate().issuer?.CN;
      socket.end();
      resolve(String(issuer));
    });
    socket.once('timeout', () => socket.destroy(new Error('timed out')));
    socket.once('error', reject);
  });
}

beforeAll(async () => {
  h = connect();
  ns = await freshNamespace(h, 'ca-rotation');
  oldCA = makeCA('old-ca');
  newCA = makeCA('new-ca');
  both = Buffer.concat([oldCA.cert, newCA.cert]);
  for (const body of [
    tlsSecret('peer-certs', oldCA.issue(`${name}-peer`, memberSans(ns, name)), oldCA.cert),
    tlsSecret('server-certs', oldCA.issue(`${name}-client`, memberSans(ns, name)), oldCA.cert),
    tlsSecret('operator-cert', oldCA.issue('etcd-conductor'), oldCA.cert),
  ])
    await h.core.createNamespacedSecret({ namespace: ns, body });
  await createCluster(h, ns, name, {
    replicas: 3,
    tls: {
      peer: { secretName: 'peer-certs' },
      client: { secretName: 'server-certs', operatorSecretName: 'operator-cert' },
    },
  });
  await waitConverged(h, ns, name, 3, 600_000);
});

test('the CA rotates in three stages under writes: no acknowledged write lost, equal hashkv, old client certificates refused at the end', async () => {
  const oldApp = oldCA.issue('app');
  const newApp = newCA.issue('app');
  // The application reloads its files when they change, as the operator does; each stage changes them.
  let app = credentialsOf(oldApp, oldCA.cert);
  const writer = await startWriterRunning({
    namespace: ns,
    name,
    prefix: '/rotation',
    credentials: () => app,
  });

  // Stage 1: trust old and new. The members roll, one at a time.
  let before = await podUids();
  await editSecret('server-certs', { ca: both });
  await editSecret('peer-certs', { ca: both });
  await editSecret('operator-cert', { ca: both });
  app = credentialsOf(oldApp, both);
  await waitRolledOnto(both, before);

  // Dropping the old CA before reissuing would cut every restarted member off: the operator holds, says why, and restarts nobody.
  before = await podUids();
  await editSecret('peer-certs', { ca: newCA.cert });
  const held = await eventually(
    'the rollout held with TLSTrustBroken',
    async () => {
      const c = await getCluster(h, ns, name);
      const p = c.status?.conditions?.find((x) => x.type === 'Progressing');
      return p?.reason === Reasons.TLSTrustBroken ? p : undefined;
    },
    300_000,
    1000,
  );
  expect(held.status).toBe('False');
  expect(held.message).toMatch(
    /the peer ca.crt of Secret .*\/peer-certs \(new-ca\) does not trust the peer certificate/,
  );
  expect(held.message).toMatch(/issued by old-ca/);
  expect(held.message).toMatch(/put the new CA next to the old one/);
  const events = await h.core.listNamespacedEvent({ namespace: ns });
  expect(events.items.some((e) => e.reason === Reasons.TLSTrustBroken && e.type === 'Warning')).toBe(true);
  expect(await podUids()).toEqual(before);
  await editSecret('peer-certs', { ca: both });
  await eventually(
    'the hold lifted once the bundle trusts the certificates again',
    async () => {
      const c = await getCluster(h, ns, name);
      return (
        c.status?.conditions?.find((x) => x.type === 'Progressing')?.reason === Reasons.Converged || undefined
      );
    },
    300_000,
    1000,
  );
  expect(await podUids()).toEqual(before);

  // Stage 2: reissue every certificate from the new CA. No restart: etcd reads its certificate per connection.
  await editSecret('peer-certs', { leaf: newCA.issue(`${name}-peer`, memberSans(ns, name)) });
  await editSecret('server-certs', { leaf: newCA.issue(`${name}-client`, memberSans(ns, name)) });
  await editSecret('operator-cert', { leaf: newCA.issue('etcd-conductor') });
  app = credentialsOf(newApp, both);
  // The kubelet refreshes mounted Secrets within its sync period; then every member presents the new certificates.
  for (const port of [2379, 2380]) {
    for (const member of [0, 1, 2].map((i) => `${name}-${i}`)) {
      await eventually(
        `${member} presenting a new-ca certificate on ${port}`,
        async () => ((await presentedIssuer(member, port, newApp)) === 'new-ca' ? true : undefined),
        300_000,
        2000,
      );
    }
  }
  expect(await podUids()).toEqual(before);
  // The operator still reaches the cluster: a podAnnotations change is applied (a patch, no restart) and it converges.
  await patchSpec(h, ns, name, { podAnnotations: { 'example.com/ca': 'new' } });
  await waitConverged(h, ns, name, 3, 300_000);
  expect((await memberPods()).every((p) => p.metadata?.annotations?.['example.com/ca'] === 'new')).toBe(true);
  expect(await podUids()).toEqual(before);

  // Stage 3: drop the old CA. The members roll again; every member then trusts only the new CA.
  await editSecret('server-certs', { ca: newCA.cert });
  await editSecret('peer-certs', { ca: newCA.cert });
  await editSecret('operator-cert', { ca: newCA.cert });
  app = credentialsOf(newApp, newCA.cert);
  await waitRolledOnto(newCA.cert, before);

  // Every acknowledged write on every member (read with the new credentials), equal hashKV, no 1 s gap.
  const report = await writer.stop();
  await expectAvailability(h, report, {
    what: 'CA rotation in three stages',
    boundMs: PLANNED_GAP_BOUND_MS,
    members: [0, 1, 2].map((i) => `${name}-${i}`),
  });

  // A client certificate of the old CA is refused now; the same call with the new CA's is served.
  expect(
    await putError({ namespace: ns, name }, credentialsOf(oldApp, newCA.cert), '/rotation-probe'),
  ).toBeDefined();
  expect(
    await putError({ namespace: ns, name }, credentialsOf(newApp, newCA.cert), '/rotation-probe'),
  ).toBeUndefined();
});
