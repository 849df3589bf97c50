// End-to-end: two operators on one stack; only the holder of the watcher Lease watches, and the other takes over when
// the holder dies or hangs (after the lease duration) and at once on a clean stop. On a stack whose operator is a host
// process the test starts a second one beside it; on one whose operator runs from its chart, the two replicas are the
// two operators, the holder's container is frozen (a hang: no renewal, no release) and a clean stop is a Pod deleted.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { CoordinationV1Api } from '@kubernetes/client-node';
import { operatorHttpAddress } from '../../localcluster/stack';
import { readStackInfo, repoRoot } from '../../localcluster/stack-info';
import { WATCHER_LEASE_NAME } from '../../worker/watcher-lease';
import type { Harness } from '../support/cluster-harness';
import { containerFaults } from '../support/container-faults';
import { operatorPods, podHttpAddress } from '../support/operator-process';
import { isReady } from '../localcluster/etcd-pod';
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

/** The Lease lives in the operator's namespace: the chart's release namespace, or `default` for a host process. */
async function holder(): Promise<string | undefined> {
  const lease = await h.kc.makeApiClient(CoordinationV1Api).readNamespacedLease({
    name: WATCHER_LEASE_NAME,
    namespace: h.stack.operatorChart?.namespace ?? 'default',
  });
  return lease.spec?.holderIdentity ?? undefined;
}

async function get(address: string, path: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://${address}${path}`);
  return { status: res.status, body: await res.text() };
}

const leaderGauge = async (address: string) =>
  /^etcd_conductor_watcher_leader (\d)$/m.exec((await get(address, '/metrics')).body)?.[1];
/**
 * Waits for a new Lease holder's gauge to say 1: the process sets it after its Lease write returns, so the Lease can
 * be read a moment before (rehearsal F read the gauge still 0 right after the Lease changed hands).
 */
const reportsLease = (address: () => string, who: string) =>
  eventually(
    `${who} to report the Lease`,
    async () => ((await leaderGauge(address())) === '1' ? true : undefined),
    10_000,
    100,
  );

describe('the watcher Lease', () => {
  test('only the holder watches; killing it hands over, and a clean stop releases the Lease at once', async () => {
    if (h.stack.operatorChart) return chartReplicas(h.stack.operatorChart);
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
    await reportsLease(secondAddress, 'the second operator');
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

/** The chart's two replicas: each Pod's name is its identity, each serves /metrics and /readyz on its Pod IP. */
async function chartReplicas(chart: { namespace: string }): Promise<void> {
  const faults = containerFaults(h);
  const logOf = (pod: string) =>
    h.core.readNamespacedPodLog({ namespace: chart.namespace, name: pod, container: 'operator' });
  const replicas = async () => {
    const pods = await operatorPods(h);
    const ready = pods.filter(isReady);
    return ready.length === 2 ? ready : undefined;
  };

  // Both Ready, one holds the Lease and watches, the other stands by (a replica replaced by an earlier file may still
  // be waiting out a dead predecessor's Lease: wait for a holder among the two).
  const pods = await eventually('both replicas Ready, one of them holding the Lease', async () => {
    const two = await replicas();
    const now = await holder();
    return two && two.some((p) => p.metadata?.name === now) ? two : undefined;
  });
  const first = (await holder()) ?? '';
  const firstPod = pods.find((p) => p.metadata?.name === first);
  const standbyPod = pods.find((p) => p.metadata?.name !== first);
  const standby = standbyPod?.metadata?.name ?? '';
  if (!firstPod || !standbyPod) throw new Error('unreachable: two replicas, one holder');
  expect(await leaderGauge(podHttpAddress(firstPod))).toBe('1');
  expect(await leaderGauge(podHttpAddress(standbyPod))).toBe('0');
  expect((await get(podHttpAddress(standbyPod), '/readyz')).body).toContain(
    `identity ${standby}; roles worker, watcher (standby: the watcher Lease is held by`,
  );
  expect(await logOf(standby)).not.toContain('watching EtcdClusters');

  // A holder that hangs: no renewal and no release. The standby takes over once the Lease went unrenewed. The hang
  // stays shorter than the liveness probe's minute (periodSeconds 10 x failureThreshold 6), after which the kubelet
  // would restart the container and the scenario would be a crash instead.
  await faults.freezeContainer(chart.namespace, first, 'operator');
  try {
    await eventually('the standby to take the Lease', async () =>
      (await holder()) === standby ? true : undefined,
    );
    await reportsLease(() => podHttpAddress(standbyPod), 'the new holder');
    expect((await get(podHttpAddress(standbyPod), '/readyz')).body).toContain(
      `watcher (holds the watcher Lease ${chart.namespace}/`,
    );
  } finally {
    await faults.thawContainer(chart.namespace, first, 'operator');
  }

  // The old holder wakes up to a Lease someone else holds: it stops its watchers instead of watching beside them.
  await eventually('the old holder to stand down', async () =>
    (await leaderGauge(podHttpAddress(firstPod))) === '0' ? true : undefined,
  );
  expect(await logOf(first)).toContain('lost the watcher Lease; stopping the watchers');
  expect(await holder()).toBe(standby);
  await eventually('the new holder to start its watchers', async () =>
    (await logOf(standby)).includes('watching EtcdClusters') ? true : undefined,
  );

  // The new holder's watchers work: a new cluster is signalled by it and comes up.
  const ns = await freshNamespace(h, 'lease');
  await createCluster(h, ns, 'l', { replicas: 1 });
  await waitConverged(h, ns, 'l', 1, 300_000);
  expect(await logOf(standby)).toContain(`"cluster":"${ns}/l"`);
  // The old holder, awake, did not restart (a restart would be a crash, not the hang under test).
  const old = (await operatorPods(h)).find((p) => p.metadata?.name === first);
  expect(old?.status?.containerStatuses?.find((c) => c.name === 'operator')?.restartCount).toBe(
    firstPod.status?.containerStatuses?.find((c) => c.name === 'operator')?.restartCount,
  );

  // A clean stop (the Pod deleted with its grace period) releases the Lease: it is seen held by no one (a dead holder's
  // stays taken for its duration), and another replica takes it (the old holder, or the Deployment's new Pod).
  let released = false;
  await h.core.deleteNamespacedPod({ namespace: chart.namespace, name: standby });
  const next = await eventually(
    'the other replica to take the released Lease',
    async () => {
      const now = await holder();
      if (now === undefined) released = true;
      return now && now !== standby ? now : undefined;
    },
    60_000,
    100,
  );
  expect(released).toBe(true);
  expect(next).not.toBe(standby);
  await eventually('the Deployment to have two Ready replicas again', replicas, 120_000);
}
