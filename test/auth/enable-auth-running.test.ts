// End-to-end: a running 3-member cluster gains spec.auth under the strict writer, which switches to root once etcd asks for credentials (one failed write, as an application would see); afterwards every acknowledged write is there, unauthenticated reads are refused, root works and the operator still scales.
import { randomBytes } from 'node:crypto';
import { Etcd3 } from 'etcd3';
import { expectAvailability, PLANNED_GAP_BOUND_MS } from '../support/availability';
import type { Harness } from '../support/cluster-harness';
import {
  clientEndpoint,
  connect,
  createCluster,
  eventually,
  freshNamespace,
  getCluster,
  patchSpec,
  waitConverged,
} from '../support/cluster-harness';
import { startWriterRunning } from '../support/writer';

jest.setTimeout(1_200_000);

let h: Harness;
let ns: string;
const name = 'opened';
const secretName = 'opened-root';
const password = `pw-${randomBytes(12).toString('hex')}`;
const root = { username: 'root', password };

const open = (auth?: typeof root) =>
  new Etcd3({
    hosts: [clientEndpoint(ns, name)],
    dialTimeout: 2000,
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + 2000 }),
    ...(auth ? { auth } : {}),
  });

async function attempt(fn: (c: Etcd3) => Promise<unknown>, auth?: typeof root): Promise<string> {
  const c = open(auth);
  try {
    await fn(c);
    return 'ok';
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    c.close();
  }
}

beforeAll(async () => {
  h = connect();
  ns = await freshNamespace(h, 'auth-running');
  await h.core.createNamespacedSecret({
    namespace: ns,
    body: { metadata: { name: secretName }, stringData: { password } },
  });
  await createCluster(h, ns, name, { replicas: 3 });
  await waitConverged(h, ns, name, 3, 600_000);
}, 900_000);

describe('spec.auth added to a running cluster', () => {
  test('EnableAuth runs under a write load; no acknowledged write is lost, anonymous reads are refused afterwards, root works and the cluster scales', async () => {
    // Without credentials until etcd asks for a user, then as root.
    let authed = false;
    const writer = await startWriterRunning(
      {
        namespace: ns,
        name,
        prefix: '/load',
        auth: () => (authed ? root : undefined),
        onFailure: (error) => {
          if (/user name is empty|permission denied/i.test(error)) authed = true;
        },
      },
      3000,
    );
    await patchSpec(h, ns, name, { auth: { rootSecretRef: { name: secretName } } });
    const enabled = await eventually(
      'the EnableAuth operation to finish',
      async () => {
        const c = await getCluster(h, ns, name);
        return c.status?.lastOperation?.type === 'EnableAuth' && !c.status.currentOperation ? c : undefined;
      },
      600_000,
      1000,
    );
    expect(enabled.status?.lastOperation?.result).toBe('Succeeded');
    await new Promise((r) => setTimeout(r, 3000));
    const report = await writer.stop();
    // The writer switched to root and wrote as root afterwards.
    expect(authed).toBe(true);
    expect(report.records.at(-1)?.ok).toBe(true);
    await expectAvailability(h, report, {
      what: 'EnableAuth on a running cluster',
      boundMs: PLANNED_GAP_BOUND_MS,
      access: { auth: root },
    });

    const c = open(root);
    try {
      expect((await c.auth.authStatus()).enabled).toBe(true);
    } finally {
      c.close();
    }
    expect(await attempt((e) => e.get('/load/0000000').string())).toMatch(/user name is empty/);
    expect(await attempt((e) => e.get('/load/0000000').string(), root)).toBe('ok');

    await patchSpec(h, ns, name, { replicas: 4 });
    const scaled = await waitConverged(h, ns, name, 4, 600_000);
    expect(scaled.status?.lastOperation).toMatchObject({ type: 'ScaleUp', result: 'Succeeded' });
    expect(await attempt((e) => e.get('/load/0000000').string())).toMatch(/user name is empty/);
  });
});
