// End-to-end: an operator started against a wrong Temporal address, a Temporal namespace that does not exist, or
// a ServiceAccount without RBAC stays up, says what is wrong and where in its log and /readyz, and keeps retrying.
import { spawn, type ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { repoRoot } from '../../localcluster/stack-info';
import type { Harness } from '../support/cluster-harness';
import { connect, eventually, freshNamespace } from '../support/cluster-harness';

let h: Harness;
const running: ChildProcess[] = [];
const outDir = join(repoRoot(), '.local', 'test-output');

beforeAll(() => {
  h = connect();
  mkdirSync(outDir, { recursive: true });
});

afterAll(async () => {
  for (const p of running.splice(0)) {
    if (p.exitCode !== null) continue;
    p.kill('SIGTERM');
    await new Promise((r) => p.once('exit', r));
  }
});

/** Starts dist/worker/main.js as the stack does, with `env` overriding; returns its /readyz address and log file. */
function startOperator(name: string, port: number, env: Record<string, string>) {
  const log = join(outDir, `operator-${name}-${process.pid}.log`);
  const out = openSync(log, 'w');
  const address = `${h.stack.hostIp}:${port}`;
  const child = spawn(process.execPath, [join(repoRoot(), 'dist', 'worker', 'main.js')], {
    stdio: ['ignore', out, out],
    env: {
      PATH: process.env.PATH,
      KUBECONFIG: h.stack.kubeconfig,
      TEMPORAL_ADDRESS: h.stack.temporal.address,
      TEMPORAL_NAMESPACE: h.stack.temporal.namespace,
      OPERATOR_HTTP_ADDRESS: address,
      OPERATOR_IDENTITY: `e2e-${name}-${process.pid}`,
      ...env,
    },
  });
  running.push(child);
  return { child, address, log };
}

/** Waits for a second failed attempt (so it retried rather than exited), then reads /readyz. */
async function retryingWith(
  op: ReturnType<typeof startOperator>,
): Promise<{ readyz: string; logLine: string }> {
  const logLine = await eventually(
    'the operator to retry its start',
    async () =>
      readFileSync(op.log, 'utf8')
        .split('\n')
        .find((l) => l.includes('"msg":"cannot start; retrying"') && l.includes('"attempt":2')),
    180_000,
  );
  const res = await fetch(`http://${op.address}/readyz`);
  expect(res.status).toBe(503);
  expect(op.child.exitCode).toBeNull();
  return { readyz: await res.text(), logLine };
}

describe('bad input at start', () => {
  test('an unreachable Temporal frontend is named in the log and /readyz, and the start is retried', async () => {
    // Nothing listens on port 1 of the stack's address: the connection is refused at once.
    const wrong = `${h.stack.hostIp}:1`;
    const op = startOperator('no-temporal', 9471, { TEMPORAL_ADDRESS: wrong });
    const { readyz, logLine } = await retryingWith(op);
    expect(readyz).toContain(`not ready: cannot reach the Temporal frontend at ${wrong}`);
    expect(JSON.parse(logLine)).toMatchObject({ level: 'error', reason: expect.stringContaining(wrong) });
  });

  test('a Temporal namespace that does not exist is named with the address', async () => {
    const op = startOperator('no-namespace', 9472, { TEMPORAL_NAMESPACE: 'no-such-namespace' });
    const { readyz } = await retryingWith(op);
    expect(readyz).toBe(
      `not ready: Temporal namespace "no-such-namespace" does not exist at ${h.stack.temporal.address}; check temporal.namespace or create it\n`,
    );
  });

  test('a ServiceAccount without RBAC gets a 403 that names the resource and the fix', async () => {
    // A real ServiceAccount token with no role bound: the apiserver authenticates it and refuses every list.
    const ns = await freshNamespace(h, 'norbac');
    execFileSync(h.stack.tools.kubectl, ['--kubeconfig', h.stack.kubeconfig, '-n', ns, 'create', 'sa', 'op']);
    const token = execFileSync(h.stack.tools.kubectl, [
      '--kubeconfig',
      h.stack.kubeconfig,
      '-n',
      ns,
      'create',
      'token',
      'op',
    ])
      .toString()
      .trim();
    const admin = new KubeConfig();
    admin.loadFromFile(h.stack.kubeconfig);
    const cluster = admin.getCurrentCluster();
    if (!cluster) throw new Error('the stack kubeconfig names no cluster');
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [cluster],
      users: [{ name: 'op', token }],
      contexts: [{ name: 'op', cluster: cluster.name, user: 'op' }],
      currentContext: 'op',
    });
    const kubeconfig = join(outDir, `kubeconfig-norbac-${process.pid}`);
    writeFileSync(kubeconfig, kc.exportConfig(), { mode: 0o600 });

    const op = startOperator('no-rbac', 9473, { KUBECONFIG: kubeconfig });
    const { readyz } = await retryingWith(op);
    expect(readyz).toContain(
      `not ready: the Kubernetes API at ${cluster.server} refused to list etcdclusters.etcd.conductor.dev (HTTP 403 Forbidden:`,
    );
    expect(readyz).toContain(`system:serviceaccount:${ns}:op`);
    expect(readyz).toContain("grant the operator's ServiceAccount the chart's RBAC");
  });
});
