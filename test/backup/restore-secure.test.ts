// End-to-end: a snapshot of a cluster with client and peer TLS and auth, stored in MinIO, restored into a new cluster with TLS and auth: the data is there, readable as root with the password, refused without it.
import { randomBytes } from 'node:crypto';
import { Etcd3 } from 'etcd3';
import type { Harness } from '../support/cluster-harness';
import {
  clientEndpoint,
  connect,
  createCluster,
  eventually,
  freshNamespace,
  getCluster,
  waitConverged,
} from '../support/cluster-harness';
import type { ClientCredentials } from '../support/cluster-harness';
import { makeCA, memberSans, tlsSecret } from '../tls/tls-certs';
import type { TestCA } from '../tls/tls-certs';
import { createCredentialsSecret, createSnapshot, minioDestination, waitFinished } from './backup-harness';

jest.setTimeout(1_200_000);

let h: Harness;
let ns: string;
let ca: TestCA;
let client: ClientCredentials;
const written = new Map<string, string>();
// Long and random, so a match can only mean the restore kept the source's auth data.
const password = `pw-${randomBytes(12).toString('hex')}`;
const rootSecret = 'root-auth';

type Root = { username: string; password: string };

function secureClient(cluster: string, auth?: Root): Etcd3 {
  return new Etcd3({
    hosts: [clientEndpoint(ns, cluster)],
    credentials: client,
    dialTimeout: 5000,
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + 5000 }),
    ...(auth ? { auth } : {}),
  });
}

async function withClient<T>(cluster: string, auth: Root | undefined, fn: (c: Etcd3) => Promise<T>) {
  const c = secureClient(cluster, auth);
  try {
    return await fn(c);
  } finally {
    c.close();
  }
}

/** The Secrets a TLS cluster of this name needs: peer and server certificates of the CA, and the operator's client certificate. */
async function createTlsSecrets(cluster: string) {
  for (const body of [
    tlsSecret(`${cluster}-peer-certs`, ca.issue(`${cluster}-peer`, memberSans(ns, cluster)), ca.cert),
    tlsSecret(`${cluster}-server-certs`, ca.issue(`${cluster}-client`, memberSans(ns, cluster)), ca.cert),
    tlsSecret(`${cluster}-operator-cert`, ca.issue('etcd-conductor'), ca.cert),
  ])
    await h.core.createNamespacedSecret({ namespace: ns, body });
}

const secureSpec = (cluster: string) => ({
  tls: {
    peer: { secretName: `${cluster}-peer-certs` },
    client: { secretName: `${cluster}-server-certs`, operatorSecretName: `${cluster}-operator-cert` },
  },
  auth: { rootSecretRef: { name: rootSecret } },
});

beforeAll(async () => {
  h = connect();
  ns = await freshNamespace(h, 'restore-secure');
  ca = makeCA('etcd-ca');
  const app = ca.issue('app');
  client = { rootCertificate: ca.cert, certChain: app.cert, privateKey: app.key };
  await h.core.createNamespacedSecret({
    namespace: ns,
    body: { metadata: { name: rootSecret }, stringData: { password } },
  });
  await createTlsSecrets('src');
  await createTlsSecrets('copy');
  await createCluster(h, ns, 'src', { replicas: 1, ...secureSpec('src') });
  // Auth is turned on by the Bootstrap or by an EnableAuth after it (CI runs saw each); waitConverged also waits out
  // the planned EnableAuth (Progressing=True with no operation running), which it once took for converged.
  await waitConverged(h, ns, 'src', 1, 600_000);
  await withClient('src', { username: 'root', password }, async (c) => {
    for (let i = 0; i < 30; i++) {
      const key = `secure/${String(i).padStart(4, '0')}`;
      const value = `v-${i}-${randomBytes(4).toString('hex')}`;
      await c.put(key).value(value);
      written.set(key, value);
    }
  });
}, 900_000);

describe('restore with TLS and auth', () => {
  test('a snapshot of a TLS+auth cluster goes to MinIO and restores into a new 3-member TLS+auth cluster whose data root can read', async () => {
    await createCredentialsSecret(h, ns, 's3-credentials');
    await createSnapshot(h, ns, 'snap', {
      clusterRef: { name: 'src' },
      destination: minioDestination(h, 's3-credentials', `e2e/${ns}`),
    });
    const done = await waitFinished(h, ns, 'snap', 600_000);
    expect(done.status?.phase).toBe('Succeeded');
    expect(done.status?.artifact?.revision).toBeGreaterThanOrEqual(written.size);

    await createCluster(h, ns, 'copy', {
      replicas: 3,
      ...secureSpec('copy'),
      bootstrap: { restore: { source: { snapshotRef: { name: 'snap' } } } },
    });
    const c = await waitConverged(h, ns, 'copy', 3, 900_000);
    const src = await getCluster(h, ns, 'src');
    expect(c.status?.clusterId).toBeTruthy();
    expect(c.status?.clusterId).not.toBe(src.status?.clusterId);
    expect(c.status?.clientEndpoint).toBe(`https://copy-client.${ns}.svc:2379`);

    const root = { username: 'root', password };
    const read = await withClient('copy', root, (e) => e.getAll().prefix('secure/').strings());
    expect(new Map(Object.entries(read))).toEqual(written);
    // Without a password etcd takes the client certificate's CN ("app") as the user, which has no role: refused.
    await expect(withClient('copy', undefined, (e) => e.get('secure/0000').string())).rejects.toThrow(
      /permission denied/,
    );
    await expect(
      withClient('copy', { username: 'root', password: 'wrong' }, (e) => e.get('secure/0000').string()),
    ).rejects.toThrow(/authentication failed/);
    expect(await withClient('copy', root, async (e) => (await e.auth.authStatus()).enabled)).toBe(true);

    // The restored auth data came with the snapshot; the operator records what etcd has as its applied copy.
    const applied = await eventually(
      'the applied copy of the root password',
      () =>
        h.core
          .readNamespacedSecret({ namespace: ns, name: 'copy-auth-applied' })
          .then((s) => s.data?.password),
      300_000,
      1000,
    );
    expect(Buffer.from(applied, 'base64').toString('utf8')).toBe(password);
  });
});
