// A cert-manager CA renewal on the real stack, done as a cert-manager user does it (`cmctl renew` of the CA, then of every leaf: cert-manager rewrites tls.crt and ca.crt together), under the strict writer: the operator moves it into the copies members mount in stages (trust old and new, roll; reissued certificates, no restart; drop the old CA, roll), status stays truthful throughout (never QuorumLost), nothing acknowledged is lost, and the cluster ends on the new CA alone. Beside it, on a cluster of its own, a client certificate the members refuse is reported as TLSTrustBroken, not QuorumLost.
import { X509Certificate } from 'node:crypto';
import type { KubernetesObject } from '@kubernetes/client-node';
import { Reasons } from '../../crds/conditions';
import { appliedTLSSecretName } from '../../crds/tls-names';
import type { ClientCredentials, Harness } from '../support/cluster-harness';
import {
  connect,
  createCluster,
  putError,
  eventually,
  freshNamespace,
  getCluster,
  waitConverged,
} from '../support/cluster-harness';
import { expectAvailability, PLANNED_GAP_BOUND_MS } from '../support/availability';
import { startWriterRunning } from '../support/writer';
import { makeCA, memberSans, tlsSecret } from './tls-certs';

jest.setTimeout(2_400_000);

const name = 'ren';
const CM = { group: 'cert-manager.io', version: 'v1' };
const issuerRef = { name: 'ca', kind: 'Issuer', group: 'cert-manager.io' } as const;
// Connected at load, not in beforeAll: Jest starts concurrent tests before the file's beforeAll hooks run.
const h: Harness = connect();
/** The renewal case's namespace (its CA, Issuers and cluster); the refusal case has a namespace of its own. */
let ns: string;

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}
type CertManagerObject = KubernetesObject & { status?: { conditions?: Condition[]; revision?: number } };

const getCM = async (plural: string, objectName: string) =>
  (await h.custom.getNamespacedCustomObject({
    ...CM,
    plural,
    namespace: ns,
    name: objectName,
  })) as CertManagerObject;

const createCM = (plural: string, body: object) =>
  h.custom.createNamespacedCustomObject({ ...CM, plural, namespace: ns, body });

async function waitReady(plural: string, objectName: string, minRevision = 0): Promise<CertManagerObject> {
  return eventually(
    `${plural}/${objectName} Ready (revision >= ${minRevision})`,
    async () => {
      const o = await getCM(plural, objectName);
      const ready = o.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
      return ready && (o.status?.revision ?? 0) >= minRevision ? o : undefined;
    },
    180_000,
    500,
  );
}

/** What `cmctl renew` does: sets the Certificate's Issuing condition, and cert-manager issues it again. */
async function renew(certificate: string): Promise<number> {
  const cert = await getCM('certificates', certificate);
  const revision = cert.status?.revision ?? 0;
  const conditions = (cert.status?.conditions ?? []).filter((c) => c.type !== 'Issuing');
  conditions.push({
    type: 'Issuing',
    status: 'True',
    reason: 'ManuallyTriggered',
    message: 'Certificate re-issuance manually triggered',
    lastTransitionTime: new Date().toISOString(),
  });
  await h.custom.replaceNamespacedCustomObjectStatus({
    ...CM,
    plural: 'certificates',
    namespace: ns,
    name: certificate,
    body: { ...cert, status: { ...cert.status, conditions } },
  });
  return revision + 1;
}

async function secretData(secretName: string): Promise<Record<string, Buffer>> {
  const s = await h.core.readNamespacedSecret({ namespace: ns, name: secretName });
  return Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')]));
}

const fingerprints = (pem: Buffer | undefined) =>
  (pem?.toString().match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [])
    .map((b) => new X509Certificate(b).fingerprint256)
    .sort();

async function appCredentials(trust: Buffer): Promise<ClientCredentials> {
  const app = await secretData('app');
  return {
    rootCertificate: trust,
    certChain: app['tls.crt'] ?? Buffer.alloc(0),
    privateKey: app['tls.key'] ?? Buffer.alloc(0),
  };
}

const clusterEvents = async () =>
  (await h.core.listNamespacedEvent({ namespace: ns })).items.filter((e) => e.involvedObject.name === name);
const eventReasons = async () => (await clusterEvents()).map((e) => e.reason ?? '');
/** When the operator first told that it dropped the old CA from the copies (seconds precision), if it has. */
const oldCADroppedAt = async (): Promise<number | undefined> => {
  const times = (await clusterEvents())
    .filter((e) => e.reason === 'OldCADropped')
    .map((e) => new Date(e.firstTimestamp ?? e.lastTimestamp ?? 0).getTime());
  return times.length > 0 ? Math.min(...times) : undefined;
};

/** A namespace with a self-signed CA Certificate, an Issuer on it, an application certificate and a 3-member cluster on it. */
async function setUpRenewal(): Promise<void> {
  if (!h.stack.certManager)
    throw new Error('this stack runs without cert-manager (--no-cert-manager); restart it without that flag');
  ns = await freshNamespace(h, 'ca-renewal');
  // The CA is itself a cert-manager Certificate (self-signed), renewed with a new key, as most setups have it.
  await createCM('issuers', {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Issuer',
    metadata: { name: 'selfsigned', namespace: ns },
    spec: { selfSigned: {} },
  });
  await createCM('certificates', {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name: 'etcd-ca', namespace: ns },
    spec: {
      isCA: true,
      commonName: 'etcd-ca',
      secretName: 'etcd-ca',
      privateKey: { algorithm: 'ECDSA', size: 256, rotationPolicy: 'Always' },
      issuerRef: { name: 'selfsigned', kind: 'Issuer', group: 'cert-manager.io' },
    },
  });
  await waitReady('certificates', 'etcd-ca');
  await createCM('issuers', {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Issuer',
    metadata: { name: 'ca', namespace: ns },
    spec: { ca: { secretName: 'etcd-ca' } },
  });
  await waitReady('issuers', 'ca');
  await createCM('certificates', {
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    metadata: { name: 'app', namespace: ns },
    spec: {
      secretName: 'app',
      commonName: 'app',
      usages: ['digital signature', 'key encipherment', 'client auth'],
      privateKey: { algorithm: 'ECDSA', size: 256, rotationPolicy: 'Always' },
      issuerRef,
    },
  });
  await waitReady('certificates', 'app');
  await createCluster(h, ns, name, { replicas: 3, tls: { peer: { issuerRef }, client: { issuerRef } } });
  await waitConverged(h, ns, name, 3, 600_000);
}

// The two cases run side by side, each on its own cluster in its own namespace: the refusal case needs neither
// cert-manager nor the renewal's CA, and most of the renewal's time is waiting on rolls, so the file takes about as
// long as the renewal alone.
test.concurrent(
  'a CA renewed by cert-manager rolls in by stages under writes: truthful status, nothing lost, the new CA alone at the end',
  async () => {
    await setUpRenewal();
    const oldCA = (await secretData('etcd-ca'))['tls.crt'] ?? Buffer.alloc(0);
    const oldApp = await appCredentials(oldCA);
    // The application trusts both CAs while the CA is renewed (as with a trust bundle) and follows its own Secret.
    let app = oldApp;
    const writer = await startWriterRunning({
      namespace: ns,
      name,
      prefix: '/renewal',
      credentials: () => app,
    });
    // Status is sampled all along: the operator keeps a certificate members trust, so it always knows quorum.
    const seen = new Set<string>();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const c = await getCluster(h, ns, name).catch(() => undefined);
        const a = c?.status?.conditions?.find((x) => x.type === 'Available');
        if (a) seen.add(`${a.status} ${a.reason}`);
        await new Promise((r) => setTimeout(r, 1000));
      }
    })();

    // cmctl renew etcd-ca, then every leaf: cert-manager writes a new key, certificate and ca.crt into each Secret.
    await waitReady('certificates', 'etcd-ca', await renew('etcd-ca'));
    const newCA = (await secretData('etcd-ca'))['tls.crt'] ?? Buffer.alloc(0);
    expect(fingerprints(newCA)).not.toEqual(fingerprints(oldCA));
    const both = Buffer.concat([oldCA, newCA]);
    app = { ...oldApp, rootCertificate: both };
    for (const cert of [`${name}-peer-tls`, `${name}-server-tls`, `${name}-operator-tls`])
      await waitReady('certificates', cert, await renew(cert));

    // Stage 1 done, stage 2 taken: every member runs on old+new; the operator put the reissued certificates in.
    await eventually(
      'CertificatesReissued',
      async () => ((await eventReasons()).includes('CertificatesReissued') ? true : undefined),
      900_000,
      500,
    );
    // Now the application's certificate can come from the new CA too.
    await waitReady('certificates', 'app', await renew('app'));
    app = await appCredentials(both);

    // Stage 3: the old CA leaves the copies and the members roll onto the new CA alone.
    const applied = [`${name}-peer-tls`, `${name}-server-tls`, `${name}-operator-tls`].map(
      appliedTLSSecretName,
    );
    await eventually(
      'the copies trust the new CA alone and every member rolled onto them',
      async () => {
        for (const s of applied)
          if (fingerprints((await secretData(s))['ca.crt']).join() !== fingerprints(newCA).join())
            return undefined;
        const c = await getCluster(h, ns, name);
        const st = c.status;
        // The roll onto the new CA alone must have run: a status read between the drop and the look that starts
        // that Rollout still says every member is up to date (the stage-1 roll), and the old CA is still trusted.
        const droppedAt = await oldCADroppedAt();
        const last = st?.lastOperation;
        const done =
          droppedAt !== undefined &&
          last?.type === 'Rollout' &&
          last.result === 'Succeeded' &&
          Date.parse(last.finishedAt) > droppedAt &&
          !st?.currentOperation &&
          st?.members?.length === 3 &&
          st.members.every((m) => m.ready && m.upToDate === true) &&
          st.conditions?.find((x) => x.type === 'Progressing')?.reason === Reasons.Converged;
        return done ? true : undefined;
      },
      900_000,
      1000,
    );
    app = { ...app, rootCertificate: newCA };
    await new Promise((r) => setTimeout(r, 2000));
    sampling = false;
    await sampler;
    const report = await writer.stop();

    // Truthful throughout: available all along, never QuorumLost or TLSTrustBroken.
    expect([...seen]).toEqual([`True ${Reasons.ClusterAvailable}`]);
    const reasons = await eventReasons();
    for (const r of ['CATrustExtended', 'CertificatesReissued', 'OldCADropped', 'RolloutStarted'])
      expect(reasons).toContain(r);
    await expectAvailability(h, report, {
      what: 'cert-manager CA renewal',
      boundMs: PLANNED_GAP_BOUND_MS,
      members: [0, 1, 2].map((i) => `${name}-${i}`),
    });
    // The old CA's certificates are refused now; the new CA's are served.
    expect(
      await putError({ namespace: ns, name }, { ...oldApp, rootCertificate: newCA }, '/renewal-probe'),
    ).toBeDefined();
    expect(await putError({ namespace: ns, name }, app, '/renewal-probe')).toBeUndefined();
  },
);

test.concurrent(
  'a client certificate the members refuse is reported as TLSTrustBroken, never as QuorumLost, while the members serve',
  async () => {
    const refusedNs = await freshNamespace(h, 'ca-refused');
    // A cluster with the user's own Secrets (the operator cannot mend those), whose operator certificate is then
    // replaced by one from a CA the members were never started with.
    const lock = 'lock';
    const ca = makeCA('lock-ca');
    for (const body of [
      tlsSecret('lock-peer', ca.issue(`${lock}-peer`, memberSans(refusedNs, lock)), ca.cert),
      tlsSecret('lock-server', ca.issue(`${lock}-client`, memberSans(refusedNs, lock)), ca.cert),
      tlsSecret('lock-operator', ca.issue('etcd-conductor'), ca.cert),
    ])
      await h.core.createNamespacedSecret({ namespace: refusedNs, body });
    await createCluster(h, refusedNs, lock, {
      replicas: 1,
      tls: {
        peer: { secretName: 'lock-peer' },
        client: { secretName: 'lock-server', operatorSecretName: 'lock-operator' },
      },
    });
    await waitConverged(h, refusedNs, lock, 1, 600_000);
    const appLeaf = ca.issue('app');
    const writer = await startWriterRunning({
      namespace: refusedNs,
      name: lock,
      prefix: '/refused',
      credentials: { rootCertificate: ca.cert, certChain: appLeaf.cert, privateKey: appLeaf.key },
    });
    const current = await h.core.readNamespacedSecret({ namespace: refusedNs, name: 'lock-operator' });
    const foreign = makeCA('foreign-ca').issue('etcd-conductor');
    await h.core.replaceNamespacedSecret({
      namespace: refusedNs,
      name: 'lock-operator',
      body: {
        ...current,
        data: {
          ...current.data,
          'tls.crt': foreign.cert.toString('base64'),
          'tls.key': foreign.key.toString('base64'),
        },
      },
    });
    const reasons: string[] = [];
    const available = await eventually(
      'Available says TLSTrustBroken',
      async () => {
        const a = (await getCluster(h, refusedNs, lock)).status?.conditions?.find(
          (x) => x.type === 'Available',
        );
        reasons.push(a?.reason ?? '');
        return a?.reason === Reasons.TLSTrustBroken ? a : undefined;
      },
      300_000,
      1000,
    );
    expect(reasons).not.toContain(Reasons.QuorumLost);
    expect(available.status).toBe('Unknown');
    expect(available.message).toMatch(/every member refuses the TLS handshake with the operator/);
    const events = (await h.core.listNamespacedEvent({ namespace: refusedNs })).items.filter(
      (e) => e.involvedObject.name === lock,
    );
    expect(events.some((e) => e.reason === Reasons.TLSTrustBroken && e.type === 'Warning')).toBe(true);
    // The operator's certificate back: it sees the member again.
    await h.core.replaceNamespacedSecret({
      namespace: refusedNs,
      name: 'lock-operator',
      body: {
        ...(await h.core.readNamespacedSecret({ namespace: refusedNs, name: 'lock-operator' })),
        data: current.data,
      },
    });
    await eventually(
      'Available again',
      async () =>
        (await getCluster(h, refusedNs, lock)).status?.conditions?.find((x) => x.type === 'Available')
          ?.reason === Reasons.ClusterAvailable || undefined,
      300_000,
      1000,
    );
    const report = await writer.stop();
    // The member served its clients all along.
    await expectAvailability(h, report, {
      what: 'operator certificate refused',
      boundMs: PLANNED_GAP_BOUND_MS,
      members: [`${lock}-0`],
    });
  },
);
