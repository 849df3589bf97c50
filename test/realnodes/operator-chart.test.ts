// The operator as users install it: a real-node stack with `up --operator=chart` (the default stack when `npm test`
// brought it up so; otherwise one of its own) runs the project's image, built here, as two replicas of the Helm chart's Deployment in a namespace that enforces the
// restricted Pod Security profile; Temporal and MinIO stay host processes that Pods reach at the bridge address.
// The chart's operator bootstraps a cluster in another restricted namespace; deleting the Pod that holds the watcher
// Lease hands the Lease to the other replica, which carries a scale to convergence with nothing acknowledged lost;
// the operator container and a snapshot Job's container run as uid 65532 with a read-only `/`, as the kubelet and
// runtime applied it.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { V1Pod } from '@kubernetes/client-node';
import { CoordinationV1Api } from '@kubernetes/client-node';
import { snapshotJobName } from '../../activities/snapshot-manifests';
import { PROJECT_IMAGE } from '../../localcluster/project-image';
import { realNodeLayout } from '../../localcluster/real-nodes/real-node-layout';
import { readStackInfo, repoRoot, type StackInfo } from '../../localcluster/stack-info';
import { stackLayout } from '../../localcluster/stack-layout';
import { cacheRoot, toolPaths } from '../../localcluster/tool-cache';
import { expectAvailability, PLANNED_GAP_BOUND_MS } from '../support/availability';
import {
  connect,
  createCluster,
  etcdMemberList,
  eventually,
  freshNamespace,
  patchSpec,
  waitConverged,
  type Harness,
} from '../support/cluster-harness';
import { shareableDefaultStack } from '../support/real-node-stack';
import { startWriterRunning } from '../support/writer';
import { createCredentialsSecret, createSnapshot, waitFinished } from '../backup/backup-harness';

const run = promisify(execFile);
/** Its own instance: B = 66 gives the node network 10.66.0.0/16 and names ec66-*, apart from every other stack. */
const HOST_IP = '127.66.0.1';
/** The default stack when it runs the operator from the chart: its tests then need no stack of their own. */
const sharedChartStack = (): StackInfo | undefined => {
  const info = shareableDefaultStack();
  return info?.operatorChart ? info : undefined;
};
const OPERATOR_UID = 65532;

/** Whether an IPv4 address is in a /24 (the nodes' Pod ranges are /24s). */
function inCidr(ip: string, cidr: string): boolean {
  const [base, bits] = cidr.split('/');
  if (bits !== '24') throw new Error(`a /24 expected, not ${cidr}`);
  return ip.split('.').slice(0, 3).join('.') === (base ?? '').split('.').slice(0, 3).join('.');
}

/** What the runtime was told to run (`crictl inspect`): the kubelet's securityContext after it applied it. */
interface RuntimeSpec {
  process: { user: { uid: number; gid: number }; noNewPrivileges?: boolean };
  root: { readonly?: boolean };
}

describe('the operator installed by its chart on real nodes', () => {
  const shared = sharedChartStack();
  const stateDir = shared?.stateDir ?? mkdtempSync(join(tmpdir(), 'etcd-conductor-chart-'));
  const layout = stackLayout({ repoRoot: repoRoot(), stateDir, hostIp: shared?.hostIp ?? HOST_IP });
  const net = realNodeLayout(layout);
  const main = join(repoRoot(), 'dist', 'localcluster', 'main.js');
  const tools = toolPaths(cacheRoot());
  const cli = (command: string) =>
    run(
      process.execPath,
      [main, command, '--state-dir', stateDir, '--host-ip', HOST_IP, '--no-cert-manager', '--operator=chart'],
      { timeout: 300000, maxBuffer: 10 << 20 },
    );
  const kubectl = async (...args: string[]) =>
    (
      await run(tools.kubectl, ['--kubeconfig', join(stateDir, 'kubeconfig'), ...args], {
        maxBuffer: 10 << 20,
      })
    ).stdout;
  let h: Harness;
  let operatorNs = '';
  let ns = '';
  const name = 'chart';

  const operatorPods = async (): Promise<V1Pod[]> =>
    (
      await h.core.listNamespacedPod({
        namespace: operatorNs,
        labelSelector: 'app.kubernetes.io/name=etcd-conductor',
      })
    ).items.filter((p) => !p.metadata?.deletionTimestamp);
  const leaseHolder = async (): Promise<string | undefined> => {
    const lease = await h.kc
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ namespace: operatorNs, name: 'etcd-conductor-watcher' });
    return lease.spec?.holderIdentity ?? undefined;
  };
  /** The runtime's view of a Pod's container, from the containerd of the node it ran on. */
  const runtimeSpec = async (pod: V1Pod, container: string): Promise<RuntimeSpec> => {
    const node = net.nodes.find((n) => n.name === pod.spec?.nodeName);
    const id = pod.status?.containerStatuses?.find((c) => c.name === container)?.containerID ?? '';
    expect(id).toMatch(/^containerd:\/\//);
    expect(node).toBeDefined();
    const out = await run(tools.crictl, [
      '--runtime-endpoint',
      `unix://${node?.containerdSocket ?? ''}`,
      'inspect',
      id.replace(/^containerd:\/\//, ''),
    ]);
    return (JSON.parse(out.stdout) as { info: { runtimeSpec: RuntimeSpec } }).info.runtimeSpec;
  };

  beforeAll(async () => {
    if (!shared) {
      const t0 = Date.now();
      const up = await cli('up');
      expect(up.stdout).toMatch(/up: ready in/);
      console.log(`operator chart: up took ${((Date.now() - t0) / 1000).toFixed(1)}s`);
      process.env.ETCD_CONDUCTOR_STACK_JSON = join(stateDir, 'stack.json');
    }
    h = connect();
    operatorNs = h.stack.operatorChart?.namespace ?? '';
    ns = await freshNamespace(h, 'chart', { 'pod-security.kubernetes.io/enforce': 'restricted' });
  }, 320000);

  afterAll(async () => {
    if (shared) return;
    await cli('down').catch(() => undefined);
    rmSync(stateDir, { recursive: true, force: true });
  }, 120000);

  it('runs two Ready replicas of the image built here in a restricted namespace, as uid 65532 with a read-only /', async () => {
    expect(readStackInfo(join(stateDir, 'stack.json'))?.operatorChart).toEqual({
      namespace: 'etcd-conductor',
      release: 'etcd-conductor',
    });
    // No operator process on the host: stack.json names none.
    expect(Object.keys(h.stack.pids)).not.toContain('operator');
    const nsLabels = (await h.core.readNamespace({ name: operatorNs })).metadata?.labels ?? {};
    expect(nsLabels['pod-security.kubernetes.io/enforce']).toBe('restricted');
    const pods = await operatorPods();
    expect(pods).toHaveLength(2);
    for (const p of pods) {
      expect(p.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
      const c = p.status?.containerStatuses?.find((s) => s.name === 'operator');
      expect(c?.image).toBe(PROJECT_IMAGE);
      expect(c?.imageID).toMatch(/sha256:[0-9a-f]{64}$/);
      expect(net.nodes.some((n) => inCidr(p.status?.podIP ?? '', n.podCidr))).toBe(true);
    }
    // Temporal is reached at the bridge address, the chart's one setting for an external Temporal.
    const env = pods[0]?.spec?.containers[0]?.env ?? [];
    expect(env.find((e) => e.name === 'TEMPORAL_ADDRESS')?.value).toBe(h.stack.podReachable?.temporalAddress);
    expect(h.stack.podReachable?.temporalAddress).toBe(`${net.bridgeIp}:${layout.ports.temporal}`);

    const pod = pods[0]?.metadata?.name ?? '';
    const exec = (...args: string[]) =>
      kubectl('-n', operatorNs, 'exec', pod, '-c', 'operator', '--', ...args);
    expect((await exec('id', '-u')).trim()).toBe(String(OPERATOR_UID));
    await expect(exec('touch', '/written-by-test')).rejects.toThrow(/Read-only file system/);
    // /tmp is the chart's emptyDir: the one place the operator writes.
    await exec('touch', '/tmp/written-by-test');
    const status = await exec('cat', '/proc/1/status');
    expect(status).toMatch(/^NoNewPrivs:\s+1$/m);
    expect(status).toMatch(/^CapEff:\s+0+$/m);
    expect(status).toMatch(/^Seccomp:\s+2$/m);
    const spec = await runtimeSpec(pods[0] as V1Pod, 'operator');
    expect(spec.process.user.uid).toBe(OPERATOR_UID);
    expect(spec.root.readonly).toBe(true);
  });

  it('bootstraps a 3-member cluster in a restricted namespace', async () => {
    const t0 = Date.now();
    await createCluster(h, ns, name, { replicas: 3, storage: { size: '1Gi', medium: 'Memory' } });
    await waitConverged(h, ns, name, 3, 180_000);
    console.log(`operator chart: 3 members converged ${((Date.now() - t0) / 1000).toFixed(1)}s after apply`);
    expect((await etcdMemberList(ns, name)).filter((m) => !m.isLearner)).toHaveLength(3);
  });

  it('hands the watcher Lease to the other replica when its holder is deleted, and that replica carries a scale to convergence', async () => {
    const before = (await operatorPods()).map((p) => p.metadata?.name ?? '');
    const holder = await eventually('a watcher Lease holder', leaseHolder, 30_000);
    expect(before).toContain(holder);
    const survivor = before.find((p) => p !== holder) ?? '';
    const t0 = Date.now();
    await h.core.deleteNamespacedPod({ namespace: operatorNs, name: holder });
    const next = await eventually(
      'the Lease to leave the deleted Pod',
      async () => {
        const now = await leaseHolder();
        return now && now !== holder ? now : undefined;
      },
      60_000,
      200,
    );
    console.log(
      `operator chart: Lease moved from ${holder} to ${next} ${Date.now() - t0} ms after the delete`,
    );
    expect(next).toBe(survivor);

    const writer = await startWriterRunning({ namespace: ns, name, prefix: '/chart-failover' });
    const scaleAt = new Date();
    await patchSpec(h, ns, name, { replicas: 4 });
    await waitConverged(h, ns, name, 4, 240_000);
    // When the scale ran, to set beside the failed writes' times that expectAvailability prints.
    console.log(`operator chart: scale 3 -> 4 from ${scaleAt.toISOString()} to ${new Date().toISOString()}`);
    await expectAvailability(h, await writer.stop(), {
      what: 'scale 3 -> 4 by the chart operator after a watcher failover',
      boundMs: PLANNED_GAP_BOUND_MS,
    });
    expect(await leaseHolder()).toBe(survivor);
    // The Deployment replaced the deleted Pod: two replicas again.
    await eventually('two Ready operator Pods', async () => {
      const pods = await operatorPods();
      const ready = pods.filter((p) =>
        p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      );
      return ready.length === 2 ? ready : undefined;
    });
  });

  it("runs a snapshot Job to the host's MinIO as uid 65532 with a read-only /", async () => {
    const reachable = h.stack.podReachable;
    expect(reachable?.s3Endpoint).toBe(`http://${net.bridgeIp}:${layout.ports.s3}`);
    await createCredentialsSecret(h, ns, 's3');
    await createSnapshot(h, ns, 'chart-snap', {
      clusterRef: { name },
      destination: {
        s3: {
          endpoint: reachable?.s3Endpoint ?? '',
          bucket: h.stack.s3.bucket,
          key: `chart-${ns}`,
          region: h.stack.s3.region,
          forcePathStyle: true,
          credentialsSecretRef: { name: 's3' },
        },
      },
    });
    const snap = await waitFinished(h, ns, 'chart-snap', 180_000);
    expect(snap.status?.phase).toBe('Succeeded');
    expect(snap.status?.artifact?.uri).toBe(`s3://${h.stack.s3.bucket}/chart-${ns}/chart-snap.db`);

    const [pod] = (
      await h.core.listNamespacedPod({
        namespace: ns,
        labelSelector: `job-name=${snapshotJobName('chart-snap', 1)}`,
      })
    ).items;
    expect(pod).toBeDefined();
    expect(pod?.status?.phase).toBe('Succeeded');
    const agent = pod?.status?.containerStatuses?.[0];
    expect(agent?.image).toBe(PROJECT_IMAGE);
    expect(agent?.state?.terminated?.exitCode).toBe(0);
    const spec = await runtimeSpec(pod as V1Pod, agent?.name ?? '');
    expect(spec.process.user.uid).toBe(OPERATOR_UID);
    expect(spec.root.readonly).toBe(true);
    expect(spec.process.noNewPrivileges).toBe(true);
  });
});
