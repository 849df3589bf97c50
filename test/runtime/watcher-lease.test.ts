// End-to-end: two operator processes on one stack; only the holder of the watcher Lease watches, and the other
// takes over when the holder is killed (after the lease duration) and hands back at once on a clean stop.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { CoordinationV1Api } from '@kubernetes/client-node';
import { operatorHttpAddress } from '../../localcluster/stack';
import { readStackInfo, repoRoot } from '../../localcluster/stack-info';
import { WATCHER_LEASE_NAME } from '../../worker/watcher-lease';
import type { Harness } from '../support/cluster-harness';
import {
  connect,
  createCluster,
  eventually,
  freshNamespace,
  waitConverged,
} from '../support/cluster-harness';

let h: Harness;
let second: ChildProcess | undefined;
const secondIdentity = `e2e-second-${process.pid}`;
const secondAddress = () => `${h.stack.hostIp}:9465`;
const logDir = join(repoRoot(), '.local', 'test-output');
const secondLog = join(logDir, `operator-second-${process.pid}.log`);

beforeAll(() => {
  h = connect();
});

afterAll(async () => {
  if (second?.exitCode === null) {
    second.kill('SIGKILL');
    await new Promise((r) => second?.once('exit', r));
  }
});

/** The stack's own operator: its pid changes when the stack's supervisor restarts it. */
function stackOperatorIdentity(): string {
  const pid = readStackInfo(join(h.stack.stateDir, 'stack.json'))?.pids.operator;
  if (!pid) throw new Error('the stack runs no operator');
  return `${hostname()}-${pid}`;
}

async function holder(): Promise<string | undefined> {
  const lease = await h.kc
    .makeApiClient(CoordinationV1Api)
    .readNamespacedLease({ name: WATCHER_LEASE_NAME, namespace: 'default' });
  return lease.spec?.holderIdentity ?? undefined;
}

async function get(address: string, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://${address}${path}`);
  return { status: res.status, body: await res.text() };
}

const leaderGauge = async (address: string) =>
  /^etcd_conductor_watcher_leader (\d)$/m.exec((await get(address, '/metrics')).body)?.[1];

describe('the watcher Lease', () => {
  test('only the holder watches; killing it hands over, and a clean stop releases the Lease at once', async () => {
    // First the stack's own operator must hold the Lease: a file that ran before this one may have killed its
    // predecessor, whose Lease stays taken until it goes unrenewed for its duration. Started before that, the
    // second operator could win the Lease instead.
    await eventually("the stack's operator to hold the watcher Lease", async () =>
      (await holder()) === stackOperatorIdentity() ? true : undefined,
    );
    // The same environment the stack gives its operator (localcluster/stack.ts), on a port of its own.
    mkdirSync(logDir, { recursive: true });
    const out = openSync(secondLog, 'w');
    second = spawn(process.execPath, [join(repoRoot(), 'dist', 'worker', 'main.js')], {
      stdio: ['ignore', out, out],
      env: {
        PATH: process.env.PATH,
        KUBECONFIG: h.stack.kubeconfig,
        TEMPORAL_ADDRESS: h.stack.temporal.address,
        TEMPORAL_NAMESPACE: h.stack.temporal.namespace,
        S3_ENDPOINT: h.stack.s3.endpoint,
        S3_BUCKET: h.stack.s3.bucket,
        AWS_REGION: h.stack.s3.region,
        AWS_ACCESS_KEY_ID: h.stack.s3.accessKeyId,
        AWS_SECRET_ACCESS_KEY: h.stack.s3.secretAccessKey,
        OPERATOR_HTTP_ADDRESS: secondAddress(),
        OPERATOR_IDENTITY: secondIdentity,
      },
    });

    // Both ready; the stack's operator holds the Lease it took at start, the second one stands by. Ready comes first
    // (its worker polls) while its first look at the Lease may still be going on ("electing"): wait for that look.
    const ready = await eventually('the second operator to be ready as a standby', async () => {
      const r = await get(secondAddress(), '/readyz').catch(() => undefined);
      return r?.status === 200 && !r.body.includes('(electing:') ? r.body : undefined;
    });
    expect(ready).toContain(
      `identity ${secondIdentity}; roles worker, watcher (standby: the watcher Lease is held by`,
    );
    const first = stackOperatorIdentity();
    expect(await holder()).toBe(first);
    expect(await leaderGauge(operatorHttpAddress(h.stack.hostIp))).toBe('1');
    expect(await leaderGauge(secondAddress())).toBe('0');
    expect(readFileSync(secondLog, 'utf8')).not.toContain('watching EtcdClusters');

    // A holder that dies without releasing: the second takes over once the Lease went unrenewed for its duration.
    process.kill(Number(first.slice(first.lastIndexOf('-') + 1)), 'SIGKILL');
    await eventually('the second operator to take the Lease', async () =>
      (await holder()) === secondIdentity ? true : undefined,
    );
    expect(await leaderGauge(secondAddress())).toBe('1');
    expect((await get(secondAddress(), '/readyz')).body).toContain(
      'watcher (holds the watcher Lease default/',
    );
    await eventually('the second operator to start its watchers', async () =>
      readFileSync(secondLog, 'utf8').includes('watching EtcdClusters') ? true : undefined,
    );

    // Its watchers work: a new cluster is signalled by the second operator and comes up.
    const ns = await freshNamespace(h, 'lease');
    await createCluster(h, ns, 'l', { replicas: 1 });
    await waitConverged(h, ns, 'l', 1, 300_000);
    expect(readFileSync(secondLog, 'utf8')).toContain(`"cluster":"${ns}/l"`);

    // A clean stop releases the Lease, and the stack's restarted operator takes it without waiting out the duration.
    second.kill('SIGTERM');
    const code = await new Promise<number | null>((r) => second?.once('exit', r));
    expect(code).toBe(0);
    expect(readFileSync(secondLog, 'utf8')).toContain('released the watcher Lease');
    const next = await eventually('the stack operator to take the released Lease', async () => {
      const now = await holder();
      return now && now !== secondIdentity ? now : undefined;
    });
    expect(next).toBe(stackOperatorIdentity());
  });
});
