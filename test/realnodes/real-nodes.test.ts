// Real nodes (kubelet + containerd per node, each in its own network namespace; the default stack when it has real
// nodes, else a stack of the file's own): the nodes join, a Pod of the locally built etcd image runs under the
// restricted Pod Security profile with the kubelet applying its securityContext, Pods reach each other across nodes by
// Pod IP and by Service name (kube-proxy, CoreDNS), the operator (a host process) bootstraps a 3-member EtcdCluster
// across the nodes, and a node whose runtime dies goes NotReady (and, started again, Ready). What `down` leaves is
// test/localcluster/up-down.test.ts's.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { cacheRoot, toolPaths } from '../../localcluster/tool-cache';
import { requireStackInfo } from '../../localcluster/stack-info';
import { expectAvailability, PLANNED_GAP_BOUND_MS } from '../support/availability';
import { connect } from '../support/cluster-harness';
import { useRealNodeStack } from '../support/real-node-stack';
import { startWriterRunning } from '../support/writer';

const run = promisify(execFile);
const ETCD_IMAGE = 'quay.io/coreos/etcd:v3.6.16';
/** Unique per run: on the shared default stack, a namespace of an earlier run may still be terminating. */
const NAMESPACE = `restricted-etcd-${randomBytes(3).toString('hex')}`;

interface KubeNode {
  metadata: { name: string };
  status: {
    conditions: Array<{ type: string; status: string }>;
    addresses: Array<{ type: string; address: string }>;
    nodeInfo: { containerRuntimeVersion: string };
  };
}
interface KubePod {
  spec: { nodeName?: string; hostAliases?: Array<{ ip: string; hostnames: string[] }> };
  status: {
    phase?: string;
    podIP?: string;
    containerStatuses?: Array<{ imageID: string; ready: boolean }>;
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function eventually<T>(
  what: string,
  timeoutMs: number,
  probe: () => Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (e) {
      last = e instanceof Error ? e.message : String(e);
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} ${last}`);
    await sleep(500);
  }
}

/** The restricted profile's required fields, for a container running as uid 1000. */
const restricted = {
  runAsNonRoot: true,
  runAsUser: 1000,
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ['ALL'] },
  seccompProfile: { type: 'RuntimeDefault' },
};

function etcdPod(name: string, node: string): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NAMESPACE, labels: { app: name } },
    spec: {
      nodeSelector: { 'kubernetes.io/hostname': node },
      securityContext: { fsGroup: 1000, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: 'etcd',
          image: ETCD_IMAGE,
          command: [
            'etcd',
            '--name=solo',
            '--data-dir=/var/lib/etcd/data',
            '--listen-client-urls=http://0.0.0.0:2379',
            '--advertise-client-urls=http://$(POD_IP):2379',
          ],
          env: [{ name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }],
          securityContext: restricted,
          readinessProbe: { httpGet: { path: '/health', port: 2379 }, periodSeconds: 1 },
          volumeMounts: [{ name: 'data', mountPath: '/var/lib/etcd' }],
        },
      ],
      volumes: [{ name: 'data', emptyDir: {} }],
    },
  };
}

/** A ClusterIP Service in front of one Pod: kube-proxy routes it, CoreDNS names it. */
function serviceFor(name: string): object {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: NAMESPACE },
    spec: { selector: { app: name }, ports: [{ name: 'client', port: 2379 }] },
  };
}

/** Checks each endpoint in turn; the Pod succeeds only if every one is healthy. */
function clientPod(name: string, node: string, endpoints: string[]): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NAMESPACE },
    spec: {
      nodeSelector: { 'kubernetes.io/hostname': node },
      restartPolicy: 'Never',
      containers: [
        {
          name: 'etcdctl',
          image: ETCD_IMAGE,
          command: [
            'sh',
            '-c',
            endpoints.map((e) => `etcdctl --endpoints=${e} --dial-timeout=5s endpoint health`).join(' && '),
          ],
          securityContext: restricted,
        },
      ],
    },
  };
}

describe('real nodes: kubelet and containerd in network namespaces', () => {
  /** Its own stack, when the default is not a real-node stack: B = 62, node network 10.62.0.0/24, names ec62-*. */
  const stack = useRealNodeStack('127.62.0.1');
  const net = stack.net;
  const b = net.bridgeIp.split('.')[1] ?? '';
  const kubectlPath = toolPaths(cacheRoot()).kubectl;
  const kubeconfig = () => requireStackInfo().kubeconfig;
  const kubectl = async (...args: string[]) =>
    (await run(kubectlPath, ['--kubeconfig', kubeconfig(), ...args], { maxBuffer: 10 << 20 })).stdout;
  const applyJson = async (obj: object) => {
    const child = execFile(kubectlPath, ['--kubeconfig', kubeconfig(), 'apply', '-f', '-']);
    child.stdin?.end(JSON.stringify(obj));
    await new Promise<void>((resolve, reject) =>
      child.on('exit', (code) =>
        code === 0 ? resolve() : reject(new Error(`kubectl apply exited ${code}`)),
      ),
    );
  };
  const getPod = async (name: string) =>
    JSON.parse(await kubectl('-n', NAMESPACE, 'get', 'pod', name, '-o', 'json')) as KubePod;
  const nodes = async () =>
    (JSON.parse(await kubectl('get', 'nodes', '-o', 'json')) as { items: KubeNode[] }).items;
  const ready = (n: KubeNode) => n.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True');

  afterAll(async () => {
    // The shared stack's nodes come back in useRealNodeStack's afterAll; the namespace goes here.
    await kubectl('delete', 'namespace', NAMESPACE, '--wait=false').catch(() => undefined);
  }, 60000);

  it('registers three Ready nodes with distinct InternalIPs on containerd', async () => {
    const list = await nodes();
    expect(list.map((n) => n.metadata.name).sort()).toEqual(['node-a', 'node-b', 'node-c']);
    expect(list.every(ready)).toBe(true);
    const ips = list.map((n) => n.status.addresses.find((a) => a.type === 'InternalIP')?.address);
    expect(new Set(ips).size).toBe(3);
    expect(ips.sort()).toEqual(net.nodes.map((n) => n.ip).sort());
    for (const n of list) expect(n.status.nodeInfo.containerRuntimeVersion).toMatch(/^containerd:\/\/v?2\./);
  });

  it('runs the etcd image under the restricted profile with its securityContext applied, and serves logs and exec', async () => {
    await kubectl('create', 'namespace', NAMESPACE);
    await kubectl('label', 'namespace', NAMESPACE, 'pod-security.kubernetes.io/enforce=restricted');
    await eventually(
      'the default ServiceAccount',
      60000,
      async () =>
        (await kubectl('-n', NAMESPACE, 'get', 'serviceaccount', 'default', '-o', 'name')).trim() ||
        undefined,
    );
    const t0 = Date.now();
    await applyJson(etcdPod('etcd-a', 'node-a'));
    const pod = await eventually('etcd-a to be Ready', 120000, async () => {
      const p = await getPod('etcd-a');
      return p.status.containerStatuses?.[0]?.ready ? p : undefined;
    });
    console.log(`real nodes: etcd Pod Ready ${((Date.now() - t0) / 1000).toFixed(1)}s after apply`);
    expect(pod.spec.nodeName).toBe('node-a');
    expect(pod.status.podIP).toMatch(new RegExp(`^10\\.${b}\\.128\\.\\d+$`));
    expect(pod.status.containerStatuses?.[0]?.imageID).toMatch(/sha256:[0-9a-f]{64}$/);

    expect((await kubectl('-n', NAMESPACE, 'exec', 'etcd-a', '--', 'id', '-u')).trim()).toBe('1000');
    const write = kubectl('-n', NAMESPACE, 'exec', 'etcd-a', '--', 'touch', '/written-by-test');
    await expect(write).rejects.toThrow(/Read-only file system/);
    // Seccomp mode 2 is a filter: the RuntimeDefault profile reached runc, which was built with libseccomp.
    const status = await kubectl('-n', NAMESPACE, 'exec', 'etcd-a', '--', 'cat', '/proc/1/status');
    expect(status).toMatch(/^Seccomp:\s+2$/m);
    expect(status).toMatch(/^NoNewPrivs:\s+1$/m);
    expect(status).toMatch(/^CapEff:\s+0+$/m);

    expect(await kubectl('-n', NAMESPACE, 'logs', 'etcd-a')).toMatch(
      /ready to serve client requests|serving client traffic/,
    );
  });

  it('lets a Pod on another node reach the etcd Pod by Pod IP and by Service name, and the host by both addresses', async () => {
    const ip = (await getPod('etcd-a')).status.podIP;
    expect(ip).toBeDefined();
    await applyJson(serviceFor('etcd-a'));
    const clusterIp = (
      await kubectl('-n', NAMESPACE, 'get', 'service', 'etcd-a', '-o', 'jsonpath={.spec.clusterIP}')
    ).trim();
    expect(clusterIp).toMatch(new RegExp(`^10\\.${b}\\.(9[6-9]|10\\d|11[01])\\.\\d+$`));
    for (const address of [ip, clusterIp]) {
      const health = await eventually(
        `the host to reach ${address}`,
        30000,
        async () => (await (await fetch(`http://${address}:2379/health`)).json()) as { health: string },
      );
      expect(health.health).toBe('true');
    }

    const byName = `http://etcd-a.${NAMESPACE}.svc.cluster.local:2379`;
    await applyJson(clientPod('etcdctl-b', 'node-b', [`http://${ip}:2379`, byName]));
    const done = await eventually('etcdctl-b to finish', 90000, async () => {
      const p = await getPod('etcdctl-b');
      return p.status.phase === 'Succeeded' || p.status.phase === 'Failed' ? p : undefined;
    });
    const logs = await kubectl('-n', NAMESPACE, 'logs', 'etcdctl-b');
    expect(logs).toContain(`http://${ip}:2379 is healthy`);
    expect(logs).toContain(`${byName} is healthy`);
    expect(done.status.phase).toBe('Succeeded');
    expect(done.spec.nodeName).toBe('node-b');
  });

  it('lets the operator (a host process) bootstrap a 3-member EtcdCluster across the nodes, reachable from the host at its client endpoint', async () => {
    const t0 = Date.now();
    await applyJson({
      apiVersion: 'etcd.conductor.dev/v1alpha1',
      kind: 'EtcdCluster',
      metadata: { name: 'rn', namespace: NAMESPACE },
      spec: { replicas: 3, storage: { medium: 'Memory' } },
    });
    const status = await eventually('3 ready members', 240000, async () => {
      const s = (
        JSON.parse(await kubectl('-n', NAMESPACE, 'get', 'etcdcluster', 'rn', '-o', 'json')) as {
          status?: { readyReplicas?: number; clientEndpoint?: string };
        }
      ).status;
      return s?.readyReplicas === 3 ? s : undefined;
    });
    console.log(
      `real nodes: EtcdCluster with 3 ready members ${((Date.now() - t0) / 1000).toFixed(1)}s after apply`,
    );
    const members = (
      JSON.parse(
        await kubectl('-n', NAMESPACE, 'get', 'pods', '-l', 'etcd.conductor.dev/cluster=rn', '-o', 'json'),
      ) as { items: KubePod[] }
    ).items;
    // The members' default anti-affinity spreads them over the three empty nodes; each has a Pod IP of its node.
    expect(new Set(members.map((m) => m.spec.nodeName)).size).toBe(3);
    for (const m of members) expect(m.status.podIP).toMatch(new RegExp(`^10\\.${b}\\.(128|129|130)\\.\\d+$`));
    // As in the README's quick start: the host resolves the reported endpoint (the stack's /etc/hosts block).
    expect(status.clientEndpoint).toBe(`http://rn-client.${NAMESPACE}.svc:2379`);
    const etcdctl = join(toolPaths(cacheRoot()).etcdBinDirs['3.6.16'], 'etcdctl');
    const endpoint = `--endpoints=${status.clientEndpoint ?? ''}`;
    await run(etcdctl, [endpoint, 'put', 'real-nodes', 'yes']);
    expect((await run(etcdctl, [endpoint, 'get', 'real-nodes', '--print-value-only'])).stdout.trim()).toBe(
      'yes',
    );
  });

  it("lets a member join the running cluster without waiting on the cluster DNS's answer for its own name", async () => {
    const writer = await startWriterRunning({ namespace: NAMESPACE, name: 'rn', prefix: '/real-nodes-join' });
    try {
      await kubectl('-n', NAMESPACE, 'scale', 'etcdcluster', 'rn', '--replicas=4');
      await eventually('4 ready members', 240000, async () => {
        const s = (
          JSON.parse(await kubectl('-n', NAMESPACE, 'get', 'etcdcluster', 'rn', '-o', 'json')) as {
            status?: { readyReplicas?: number };
          }
        ).status;
        return s?.readyReplicas === 4 ? s : undefined;
      });
    } finally {
      const report = await writer.stop();
      await expectAvailability(connect(), report, {
        what: 'real nodes: scale 3 -> 4',
        boundMs: PLANNED_GAP_BOUND_MS,
        members: ['rn-0', 'rn-1', 'rn-2', 'rn-3'],
      });
    }
    // The joining etcd resolves its own name while it checks the member list, possibly before the headless Service
    // publishes its Pod's address (and, where the cluster's DNS caches "no such name", while the answer the leader got
    // right after MemberAdd is still cached); that answer comes from the Pod's /etc/hosts (hostAliases), so it never
    // logs a failed look-up of it.
    const own = `rn-3.rn-peer.${NAMESPACE}.svc`;
    const pod = await getPod('rn-3');
    expect(pod.spec.hostAliases).toEqual([{ ip: '127.0.0.1', hostnames: [own] }]);
    const logs = await kubectl('-n', NAMESPACE, 'logs', 'rn-3');
    expect(logs).toMatch(/ready to serve client requests|serving client traffic/);
    expect(logs.split('\n').filter((l) => l.includes('failed to resolve URL Host'))).toEqual([]);
  });

  it('reports a node NotReady once its kubelet and containerd are killed, and Ready again once they are started', async () => {
    await stack.faults.stopNode('node-c');
    try {
      // node-monitor-grace-period is 30 s (control-plane.ts).
      await eventually('node-c to be NotReady', 90000, async () => {
        const c = (await nodes()).find((n) => n.metadata.name === 'node-c');
        return c && !ready(c) ? c : undefined;
      });
      expect(
        (await nodes())
          .filter(ready)
          .map((n) => n.metadata.name)
          .sort(),
      ).toEqual(['node-a', 'node-b']);
    } finally {
      await stack.faults.startNode('node-c');
    }
    await eventually('node-c to be Ready again', 120000, async () => {
      const c = (await nodes()).find((n) => n.metadata.name === 'node-c');
      return c && ready(c) ? c : undefined;
    });
  });
});
