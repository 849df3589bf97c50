// etcd authentication on the real stack: a 3-member cluster with spec.auth refuses unauthenticated clients, scales and snapshots with auth on, applies a password changed in its Secret, and neither password appears in any Temporal history, status, Event or operator log.
import { randomBytes } from 'node:crypto';
import { BatchV1Api } from '@kubernetes/client-node';
import { Etcd3, Range } from 'etcd3';
import { apiMessage } from '../localcluster/kube';
import { expectAvailability, PLANNED_GAP_BOUND_MS } from '../support/availability';
import type { Harness } from '../support/cluster-harness';
import {
  clientEndpoint,
  connect,
  createCluster,
  eventually,
  freshNamespace,
  getCluster,
  listWorkflows,
  patchSpec,
  temporalCli,
  waitConverged,
} from '../support/cluster-harness';
import {
  createCredentialsSecret,
  createSnapshot,
  eventsFor,
  minioDestination,
  waitFinished,
} from '../backup/backup-harness';
import { operatorLogs } from '../support/operator-process';
import { startWriterRunning } from '../support/writer';

jest.setTimeout(1_200_000);

let h: Harness;
let ns: string;
const name = 'secure';
const secretName = 'secure-root';
// Long and random, so finding it anywhere can only mean it leaked.
const password = `pw-${randomBytes(12).toString('hex')}`;
const newPassword = `pw2-${randomBytes(12).toString('hex')}`;

beforeAll(async () => {
  h = connect();
  ns = await freshNamespace(h, 'auth');
  await h.core.createNamespacedSecret({
    namespace: ns,
    body: { metadata: { name: secretName }, stringData: { password } },
  });
});

const client = (auth?: { username: string; password: string }) =>
  new Etcd3({
    hosts: [clientEndpoint(ns, name)],
    dialTimeout: 5000,
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + 5000 }),
    ...(auth ? { auth } : {}),
  });

async function attempt(fn: (c: Etcd3) => Promise<unknown>, auth?: { username: string; password: string }) {
  const c = client(auth);
  try {
    await fn(c);
    return 'ok';
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    c.close();
  }
}

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (err: unknown) => apiMessage(err),
  );

describe('spec.auth', () => {
  test('a 3-member cluster with spec.auth comes up with auth enabled; unauthenticated clients are refused, the Secret’s credentials work', async () => {
    await createCluster(h, ns, name, { replicas: 3, auth: { rootSecretRef: { name: secretName } } });
    const c = await waitConverged(h, ns, name, 3, 600_000);
    // Auth is turned on by the Bootstrap or, when its look found auth still off, by an EnableAuth after it (a CI run
    // saw each); converged means whichever it was ran and nothing more is planned. authStatus below says it is on.
    expect(['Bootstrap', 'EnableAuth']).toContain(c.status?.lastOperation?.type);
    expect(c.status?.lastOperation?.result).toBe('Succeeded');

    expect(await attempt(async (e) => e.put('/anon').value('x').exec())).toMatch(/user name is empty/);
    expect(await attempt((e) => e.get('/anon').string())).toMatch(/user name is empty/);
    expect(await attempt((e) => e.get('/x').string(), { username: 'root', password: 'wrong' })).toMatch(
      /authentication failed/,
    );
    const root = { username: 'root', password };
    expect(await attempt(async (e) => e.put('/secure/a').value('1').exec(), root)).toBe('ok');
    const c2 = client(root);
    try {
      expect(await c2.get('/secure/a').string()).toBe('1');
      expect((await c2.auth.authStatus()).enabled).toBe(true);
      expect((await c2.auth.userGet({ name: 'root' })).roles).toContain('root');
    } finally {
      c2.close();
    }
  });

  test('spec.auth cannot be removed and its Secret cannot be renamed (CEL, with the way out in the message)', async () => {
    const removed = await refusal(
      h.custom.replaceNamespacedCustomObject({
        group: 'etcd.conductor.dev',
        version: 'v1alpha1',
        plural: 'etcdclusters',
        namespace: ns,
        name,
        body: await getCluster(h, ns, name).then((c) => {
          const { auth: _auth, ...spec } = c.spec;
          return { ...c, spec };
        }),
      }),
    );
    expect(removed).toMatch(/spec.auth cannot be removed once set/);
    const renamed = await refusal(patchSpec(h, ns, name, { auth: { rootSecretRef: { name: 'other' } } }));
    expect(renamed).toMatch(/rootSecretRef.name cannot be changed/);
  });

  test('scale up and down work with auth on, under authenticated writes', async () => {
    const root = { username: 'root', password };
    const writer = await startWriterRunning({ namespace: ns, name, prefix: '/auth-scale', auth: root });
    await patchSpec(h, ns, name, { replicas: 4 });
    await waitConverged(h, ns, name, 4, 600_000);
    await patchSpec(h, ns, name, { replicas: 3 });
    const c = await waitConverged(h, ns, name, 3, 600_000);
    expect(c.status?.lastOperation).toMatchObject({ type: 'ScaleDown', result: 'Succeeded' });
    await expectAvailability(h, await writer.stop(), {
      what: 'scale 3 -> 4 -> 3 with auth',
      boundMs: PLANNED_GAP_BOUND_MS,
    });
    expect(await attempt(async (e) => e.put('/secure/b').value('2').exec(), root)).toBe('ok');
    expect(await attempt((e) => e.get('/anon').string())).toMatch(/user name is empty/);
  });

  test('a snapshot to MinIO succeeds with auth on; the Job refers to the Secret, never to its value', async () => {
    await createCredentialsSecret(h, ns, 'minio');
    await createSnapshot(h, ns, 'snap', {
      clusterRef: { name },
      destination: minioDestination(h, 'minio', `auth/${ns}`),
    });
    const s = await waitFinished(h, ns, 'snap', 600_000);
    expect(s.status?.phase).toBe('Succeeded');
    expect(s.status?.artifact?.size).toBeGreaterThan(0);
    const jobs = await h.kc.makeApiClient(BatchV1Api).listNamespacedJob({ namespace: ns });
    expect(jobs.items.length).toBeGreaterThan(0);
    const env = jobs.items[0]?.spec?.template.spec?.containers[0]?.env ?? [];
    expect(env.find((e) => e.name === 'ETCD_PASSWORD')?.valueFrom?.secretKeyRef).toEqual({
      name: secretName,
      key: 'password',
    });
    expect(JSON.stringify(jobs.items)).not.toContain(password);
  });

  test('a password changed in the Secret is applied by RotateAuth under an application user writing throughout: etcd refuses the old one, accepts the new one, and the operator still scales', async () => {
    // An application user of its own, whose password does not change: its writes measure the cluster while
    // root's password changes under it.
    const app = { username: 'app', password: `app-${randomBytes(8).toString('hex')}` };
    const admin = client({ username: 'root', password });
    try {
      const role = await admin.role('app').create();
      await role.grant({ permission: 'Readwrite', range: Range.prefix('/auth-rotation/') });
      await admin.user('app').create(app.password);
      await admin.user('app').addRole('app');
    } finally {
      admin.close();
    }
    const writer = await startWriterRunning({ namespace: ns, name, prefix: '/auth-rotation', auth: app });
    await h.core.replaceNamespacedSecret({
      namespace: ns,
      name: secretName,
      body: { metadata: { name: secretName }, stringData: { password: newPassword } },
    });
    // Nothing else changes: the operator's Secret poll (watcher/alarm-poller.ts) notices the new resourceVersion by itself.
    const rotated = await eventually(
      'a RotateAuth operation to succeed',
      async () => {
        const c = await getCluster(h, ns, name);
        return c.status?.lastOperation?.type === 'RotateAuth' && !c.status.currentOperation ? c : undefined;
      },
      600_000,
      1000,
    );
    expect(rotated.status?.lastOperation?.result).toBe('Succeeded');
    // Read back and hashKV as root (hashKV needs it), with the new password.
    await expectAvailability(h, await writer.stop(), {
      what: 'root password rotation (RotateAuth)',
      boundMs: PLANNED_GAP_BOUND_MS,
      access: { auth: { username: 'root', password: newPassword } },
    });

    expect(await attempt((e) => e.get('/secure/a').string(), { username: 'root', password })).toMatch(
      /authentication failed/,
    );
    const root = { username: 'root', password: newPassword };
    expect(await attempt(async (e) => e.put('/secure/c').value('3').exec(), root)).toBe('ok');

    const applied = await h.core.readNamespacedSecret({ namespace: ns, name: `${name}-auth-applied` });
    expect(applied.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'EtcdCluster', name });
    expect(Buffer.from(applied.data?.password ?? '', 'base64').toString('utf8')).toBe(newPassword);

    await patchSpec(h, ns, name, { replicas: 2 });
    const c = await waitConverged(h, ns, name, 2, 600_000);
    expect(c.status?.lastOperation).toMatchObject({ type: 'ScaleDown', result: 'Succeeded' });
    expect(await attempt((e) => e.get('/secure/c').string(), root)).toBe('ok');
  });

  test('neither the old nor the new password appears in any Temporal history, status, Event or operator log', async () => {
    const ids = [
      ...listWorkflows(h, `EtcdClusterNamespace="${ns}"`).map((w) => w.execution.workflowId),
      `etcdcluster/${ns}/${name}`,
      `etcdsnapshot/${ns}/snap`,
    ];
    const unique = [...new Set(ids)];
    // The cluster workflow, its operations (Bootstrap, ScaleUp, ScaleDown, RotateAuth) and the snapshot's.
    expect(unique.length).toBeGreaterThanOrEqual(5);
    expect(unique.some((id) => id.endsWith('-rotateauth'))).toBe(true);
    const log = await operatorLogs(h);
    // The log read is the one that served this cluster: the watcher logs each cluster it signals by name.
    expect(log).toContain(`${ns}/${name}`);
    const cluster = await getCluster(h, ns, name);
    const events = await eventsFor(h, ns, name);
    expect(events.map((e) => e.reason)).toEqual(
      expect.arrayContaining(['BootstrapStarted', 'ScaleUpStarted', 'RotateAuthStarted']),
    );
    const histories = unique.map((id) =>
      temporalCli(h, ['workflow', 'show', '--workflow-id', id, '-o', 'json']),
    );
    for (const secret of [password, newPassword]) {
      const encoded = Buffer.from(secret).toString('base64').replace(/=+$/, '');
      for (const history of histories) {
        expect(history.length).toBeGreaterThan(100);
        expect(history).not.toContain(secret);
        expect(history).not.toContain(encoded);
        // Payloads are base64 JSON: decode each and look inside too.
        for (const data of history.match(/"data":\s*"([A-Za-z0-9+/=]+)"/g) ?? []) {
          const b64 = /"([A-Za-z0-9+/=]+)"$/.exec(data)?.[1] ?? '';
          expect(Buffer.from(b64, 'base64').toString('utf8')).not.toContain(secret);
        }
      }
      expect(JSON.stringify(cluster)).not.toContain(secret);
      expect(JSON.stringify(events)).not.toContain(secret);
      expect(log).not.toContain(secret);
    }
  });
});
