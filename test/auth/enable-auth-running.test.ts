// End-to-end: a running 3-member cluster gains spec.auth under a steady write load that switches to root once etcd asks for credentials; afterwards every acknowledged write is there, unauthenticated reads are refused, root works and the operator still scales.
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
  patchSpec,
  waitConverged,
} from '../support/cluster-harness';

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

interface AuthSwitchingLoad {
  stop(): Promise<{
    acknowledged: Map<string, string>;
    failedAttempts: number;
    failedWrites: number;
    longestGapMs: number;
    /** Acknowledged writes made with root's credentials. */
    authenticated: number;
  }>;
}

/**
 * A client writing unique keys every 50 ms with retries (a retry takes a new key), like bench/upgrade.ts's
 * write load, that starts without credentials and switches to root the first time etcd says it needs a user.
 */
function startAuthSwitchingLoad(prefix: string): AuthSwitchingLoad {
  let client = open();
  let authed = false;
  const acknowledged = new Map<string, string>();
  let failedAttempts = 0;
  let failedWrites = 0;
  let longestGapMs = 0;
  let authenticated = 0;
  let lastSuccess = Date.now();
  let stopped = false;
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const loop = (async () => {
    for (let seq = 0; !stopped; seq++) {
      let ok = false;
      for (let attempt = 0; attempt <= 40 && !ok && !stopped; attempt++) {
        const key = `${prefix}/${String(seq).padStart(6, '0')}-${attempt}`;
        try {
          await client.put(key).value(`${seq}:${attempt}`);
          const now = Date.now();
          longestGapMs = Math.max(longestGapMs, now - lastSuccess);
          lastSuccess = now;
          acknowledged.set(key, `${seq}:${attempt}`);
          if (authed) authenticated += 1;
          ok = true;
        } catch (err) {
          failedAttempts += 1;
          if (!authed && /user name is empty|permission denied/i.test(String(err))) {
            client.close();
            client = open(root);
            authed = true;
          } else {
            await pause(100);
          }
        }
      }
      if (!ok && !stopped) failedWrites += 1;
      await pause(50);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      client.close();
      return { acknowledged, failedAttempts, failedWrites, longestGapMs, authenticated };
    },
  };
}

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
    const load = startAuthSwitchingLoad('load');
    // Some writes without auth first, so the switch happens under load.
    await new Promise((r) => setTimeout(r, 3000));
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
    const report = await load.stop();
    console.log(
      `EnableAuth under load: ${report.acknowledged.size} acknowledged writes (${report.authenticated} as root), ` +
        `${report.failedAttempts} failed attempts, ${report.failedWrites} failed writes, longest gap ${report.longestGapMs} ms`,
    );
    expect(report.authenticated).toBeGreaterThan(0);
    expect(report.failedWrites).toBe(0);

    const c = open(root);
    try {
      const stored = await c.getAll().prefix('load/').strings();
      for (const [key, value] of report.acknowledged) expect(stored[key]).toBe(value);
      expect((await c.auth.authStatus()).enabled).toBe(true);
    } finally {
      c.close();
    }
    expect(await attempt((e) => e.get('load/000000-0').string())).toMatch(/user name is empty/);
    expect(await attempt((e) => e.get('load/000000-0').string(), root)).toBe('ok');

    await patchSpec(h, ns, name, { replicas: 4 });
    const scaled = await waitConverged(h, ns, name, 4, 600_000);
    expect(scaled.status?.lastOperation).toMatchObject({ type: 'ScaleUp', result: 'Succeeded' });
    expect(await attempt((e) => e.get('load/000000-0').string())).toMatch(/user name is empty/);
  });
});
