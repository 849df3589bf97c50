// Brings up a stack's real nodes (each: a network namespace on the stack's bridge, its own containerd and a real kubelet
// joined to the stack's apiserver) and tears them down so that no process, mount, namespace, link or cgroup of the
// stack remains. cleanupRealNodes works from the layout alone, so `down` can also clean up after a crashed daemon.
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureImages, importImages, type BuiltImage } from '../images';
import { writeKubeconfig } from '../kubeconfig';
import { ensureProjectImage } from '../project-image';
import { startProcess, type ManagedProcess } from '../managed-process';
import type { Pki } from '../pki';
import { listProcesses } from '../process-scan';
import type { StackLayout } from '../stack-layout';
import type { ToolPaths } from '../tool-cache';
import { waitFor } from '../wait-for';
import { sh, shQuiet } from './host-commands';
import { startTcpRelay, type TcpRelay } from './host-service-relays';
import { forgetOwner, readOwner, recordOwner, startDecision, type NetworkOwnerRecord } from './network-owner';
import {
  containerdConfig,
  containerdPaths,
  cniConflist,
  defaultRegistryHostsToml,
  kubeProxyConfig,
  kubeProxyPaths,
  kubeletArgs,
  kubeletConfig,
  kubeletPaths,
} from './node-configs';
import { createCgroupRoot, leftoverCgroups, removeCgroupRoot } from './node-cgroups';
import { SIZED_VOLUMES_BYTES, VOLUMES_IN_MEMORY_BYTES } from './local-path-storage';
import { currentMountsUnder, unmountAllUnder } from './node-mounts';
import { createNodeNetwork, deleteNodeNetwork, leftoverNetwork } from './node-network';
import { assertMachineCanRunNodes } from './preflight';
import { realNodeLayout, type RealNode, type RealNodeLayout } from './real-node-layout';

export interface NodeProcesses {
  containerd: ManagedProcess;
  kubelet: ManagedProcess;
  kubeProxy: ManagedProcess;
}

/** The client certificate kube-proxy presents; the apiserver's bootstrap policy binds system:node-proxier to this user. */
export const KUBE_PROXY_IDENTITY = { file: 'kube-proxy', commonName: 'system:kube-proxy', organizations: [] };

export interface StartRealNodesOptions {
  layout: StackLayout;
  tools: ToolPaths;
  pki: Pki;
  cacheRoot: string;
  /** Given once cluster DNS runs: the kubelets hand it to Pods as their nameserver. */
  dnsServiceIp?: string;
  /** `up --claims-in-memory`: the default StorageClass's folder on each node is a tmpfs (mountVolumesInMemory). */
  volumesInMemory?: boolean;
  log: (line: string) => void;
}

export interface RealNodes {
  net: RealNodeLayout;
  processes: ManagedProcess[];
  /** Per node, its processes; tests and fault helpers stop them to take a node down. */
  nodeProcesses: Map<string, NodeProcesses>;
  stop(): Promise<void>;
}

function inNetns(node: RealNode, command: string, args: string[]): { command: string; args: string[] } {
  // Not `ip netns exec`: that also remounts /sys, hiding the cgroup v1 mounts and splitting the mount namespace the
  // kubelet and containerd must share.
  return { command: 'nsenter', args: [`--net=/run/netns/${node.netns}`, '--', command, ...args] };
}

async function startNode(
  node: RealNode,
  net: RealNodeLayout,
  opts: StartRealNodesOptions,
  images: BuiltImage[],
): Promise<NodeProcesses> {
  const { layout, tools, pki } = opts;
  const cp = containerdPaths(node);
  const kp = kubeletPaths(node);
  for (const d of [
    cp.root,
    cp.state,
    cp.runcRoot,
    cp.cniConfDir,
    cp.cniDataDir,
    kp.rootDir,
    kp.certDir,
    kp.podLogsDir,
  ])
    mkdirSync(d, { recursive: true });
  writeFileSync(cp.config, containerdConfig(node, { runc: tools.runc, cniBinDir: tools.cniBinDir }));
  mkdirSync(join(cp.registryHostsDir, '_default'), { recursive: true });
  writeFileSync(join(cp.registryHostsDir, '_default', 'hosts.toml'), defaultRegistryHostsToml());
  writeFileSync(join(cp.cniConfDir, '10-bridge.conflist'), cniConflist(node, net.prefix));
  createCgroupRoot(node.cgroupRoot);
  const path = `${tools.containerdBinDir}:${process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin'}`;
  const c = inNetns(node, join(tools.containerdBinDir, 'containerd'), ['--config', cp.config]);
  const containerd = startProcess({
    name: `containerd-${node.name}`,
    command: c.command,
    args: c.args,
    cwd: node.dir,
    logFile: join(layout.paths.logsDir, `${node.name}-containerd.log`),
    stackDir: layout.stateDir,
    env: { PATH: path },
  });
  const ctr = join(tools.containerdBinDir, 'ctr');
  await waitFor(
    `containerd of ${node.name}`,
    async () => {
      if (!existsSync(node.containerdSocket)) return false;
      await sh(ctr, ['--address', node.containerdSocket, 'version']);
      return true;
    },
    { timeoutMs: 30000, intervalMs: 100, process: containerd },
  );
  await importImages(ctr, node.containerdSocket, images);

  const pair = pki.clients[node.pkiFile];
  if (!pair) throw new Error(`no client certificate for ${node.name}`);
  const server = `https://${net.bridgeIp}:${net.apiserverPort}`;
  writeKubeconfig(kp.kubeconfig, server, pki.caCert, pair.cert, pair.key, `system:node:${node.name}`);
  writeFileSync(kp.config, kubeletConfig(node, pki.caCert, opts.dnsServiceIp));
  const k = inNetns(node, tools.kubelet, kubeletArgs(node));
  const kubelet = startProcess({
    name: `kubelet-${node.name}`,
    command: k.command,
    args: k.args,
    cwd: node.dir,
    logFile: join(layout.paths.logsDir, `${node.name}-kubelet.log`),
    stackDir: layout.stateDir,
    env: { PATH: path },
  });
  const pp = kubeProxyPaths(node);
  const proxyPair = pki.clients[KUBE_PROXY_IDENTITY.file];
  if (!proxyPair) throw new Error('no kube-proxy client certificate');
  writeKubeconfig(
    pp.kubeconfig,
    server,
    pki.caCert,
    proxyPair.cert,
    proxyPair.key,
    KUBE_PROXY_IDENTITY.commonName,
  );
  writeFileSync(pp.config, kubeProxyConfig(node, net.clusterPodCidr));
  const kpx = inNetns(node, tools.kubeProxy, [`--config=${pp.config}`, '--v=1']);
  const kubeProxy = startProcess({
    name: `kube-proxy-${node.name}`,
    command: kpx.command,
    args: kpx.args,
    cwd: node.dir,
    logFile: join(layout.paths.logsDir, `${node.name}-kube-proxy.log`),
    stackDir: layout.stateDir,
    env: { PATH: path },
  });
  return { containerd, kubelet, kubeProxy };
}

export async function startRealNodes(opts: StartRealNodesOptions): Promise<RealNodes> {
  const { layout, log } = opts;
  const net = realNodeLayout(layout);
  await assertMachineCanRunNodes(net.prefix);
  const images = await ensureImages(opts.cacheRoot, opts.tools, log);
  const projectImage = await ensureProjectImage(opts.cacheRoot, layout.repoRoot, opts.tools, log);
  if (projectImage) images.push(projectImage);
  const decision = startDecision({
    bridge: net.bridge,
    bridgeExists: await shQuiet('ip', ['link', 'show', net.bridge]),
    recorded: networkOwnerOf(layout),
    prefix: net.prefix,
    hostIp: layout.hostIp,
    stateDir: layout.stateDir,
  });
  if (decision.action === 'refuse') throw new Error(decision.message);
  await cleanupRealNodes(layout, log);
  recordOwner(layout, net.prefix);
  for (const n of net.nodes) {
    if (currentMountsUnder(n.dir).length > 0)
      throw new Error(`mounts remain under ${n.dir}; cannot start a fresh node there`);
    // A fresh node each time: stale containerd and kubelet state of a previous run would only be garbage to collect.
    rmSync(n.dir, { recursive: true, force: true });
    mkdirSync(n.dir, { recursive: true });
    await mountSizedVolumes(n);
    if (opts.volumesInMemory) await mountVolumesInMemory(n);
  }
  const processes: ManagedProcess[] = [];
  const nodeProcesses = new Map<string, NodeProcesses>();
  let relay: TcpRelay | undefined;
  const stop = async () => {
    for (const [, p] of nodeProcesses) await Promise.all([p.kubelet.stop(5000), p.kubeProxy.stop(5000)]);
    // Containers first (they sit in the nodes' cgroups), then the runtimes, then whatever they left mounted or linked.
    for (const n of net.nodes) await removeCgroupRoot(n.cgroupRoot);
    for (const [, p] of nodeProcesses) await p.containerd.stop(5000);
    await relay?.close();
    const left = await cleanupRealNodes(layout, log);
    if (left.length > 0) log(`real nodes: left behind after stop: ${left.join(', ')}`);
  };
  try {
    await createNodeNetwork(net);
    // Nodes and Pods reach the loopback-bound apiserver through a TCP relay on the bridge's host address.
    relay = await startTcpRelay(
      { host: net.bridgeIp, port: net.apiserverPort },
      { host: layout.hostIp, port: layout.ports.apiserver },
    );
    log(
      `real nodes: bridge ${net.bridge} ${net.bridgeIp}, apiserver relayed on ${net.bridgeIp}:${net.apiserverPort}`,
    );
    await Promise.all(
      net.nodes.map(async (n) => {
        const t0 = Date.now();
        const p = await startNode(n, net, opts, images);
        nodeProcesses.set(n.name, p);
        processes.push(p.containerd, p.kubelet, p.kubeProxy);
        log(
          `real nodes: ${n.name} (${n.ip}, netns ${n.netns}, pods ${n.podCidr}) started in ${Date.now() - t0} ms`,
        );
      }),
    );
    return { net, processes, nodeProcesses, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/**
 * A tmpfs of `bytes` at most at `dir`, mounted in the host's mount namespace, which the node's kubelet and containerd
 * share (they are only in the node's network namespace), so the bind mounts they give containers see it. tmpfs needs
 * no loop device or mkfs, and holds only what is written; `down` unmounts it with everything else under the node.
 */
async function mountTmpfs(dir: string, bytes: number, source: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  await sh('mount', ['-t', 'tmpfs', '-o', `size=${bytes},mode=0755`, source, dir]);
}

/** The size-limited StorageClass's folder: a tmpfs of fixed size, so a member's volume can be filled. */
const mountSizedVolumes = (n: RealNode) =>
  mountTmpfs(n.sizedVolumesDir, SIZED_VOLUMES_BYTES, `${n.name}-sized-volumes`);

/**
 * `up --claims-in-memory` (what `npm test` uses): the default StorageClass's folder is a tmpfs too, so members' WAL
 * fsyncs cost nothing. On two cores shared with the test runner the machine's disk stalled etcd's fdatasync for over
 * a second at a time, and etcd commits its backend synchronously when it applies a membership change, which a
 * joiner's promotion then waits for. Its data goes with the mount at `down`, as the on-disk folder's does.
 */
const mountVolumesInMemory = (n: RealNode) =>
  mountTmpfs(n.volumesDir, VOLUMES_IN_MEMORY_BYTES, `${n.name}-volumes`);

/** Kills every process of the stack's nodes whose command line names a node folder (containerd shims included). */
function killNodeProcesses(net: RealNodeLayout): number {
  let killed = 0;
  for (const p of listProcesses()) {
    if (p.pid === process.pid) continue;
    if (net.nodes.some((n) => p.command.includes(n.dir + '/') || p.command.includes(n.containerdSocket))) {
      try {
        process.kill(p.pid, 'SIGKILL');
        killed++;
      } catch {
        // gone
      }
    }
  }
  return killed;
}

/** Idempotent teardown from the layout alone; returns what could not be removed (empty when clean). */
export async function cleanupRealNodes(layout: StackLayout, log: (line: string) => void): Promise<string[]> {
  const net = realNodeLayout(layout);
  const left: string[] = [];
  for (const n of net.nodes) await removeCgroupRoot(n.cgroupRoot);
  const killed = killNodeProcesses(net);
  if (killed > 0) {
    log(`real nodes: killed ${killed} leftover node process(es)`);
    await new Promise((r) => setTimeout(r, 200));
  }
  for (const n of net.nodes) left.push(...(await unmountAllUnder(n.dir)).map((m) => `mount ${m}`));
  for (const n of net.nodes) left.push(...(await removeCgroupRoot(n.cgroupRoot)).map((d) => `cgroup ${d}`));
  // The nodes' volumes (members' data) go with the stack; never while something is still mounted below them.
  for (const n of net.nodes)
    if (currentMountsUnder(n.dir).length === 0) {
      rmSync(n.volumesDir, { recursive: true, force: true });
      rmSync(n.sizedVolumesDir, { recursive: true, force: true });
    } else left.push(`volumes ${n.volumesDir} (mounts remain)`);
  await deleteNodeNetwork(net);
  left.push(...(await leftoverNetwork(net)));
  if (left.length === 0) forgetOwner(layout.stateDir);
  return left;
}

/**
 * The real-node network this stack folder made, if any: its record (network-owner.ts), or, for a stack started before
 * records were kept, its own nodes' kubelet configs. `down` tears down only this.
 */
export function networkOwnerOf(layout: StackLayout): NetworkOwnerRecord | undefined {
  const recorded = readOwner(layout.stateDir);
  if (recorded) return recorded;
  const net = realNodeLayout(layout);
  return net.nodes.some((n) => existsSync(join(n.dir, 'kubelet-config.yaml')))
    ? { hostIp: layout.hostIp, prefix: net.prefix }
    : undefined;
}

/** What of the stack's real nodes remains on the host (processes aside); for `down` and tests. */
export async function realNodeLeftovers(layout: StackLayout): Promise<string[]> {
  const net = realNodeLayout(layout);
  return [
    ...net.nodes.flatMap((n) => currentMountsUnder(n.dir).map((m) => `mount ${m}`)),
    ...net.nodes.flatMap((n) => leftoverCgroups(n.cgroupRoot).map((d) => `cgroup ${d}`)),
    ...net.nodes.filter((n) => existsSync(n.volumesDir)).map((n) => `volumes ${n.volumesDir}`),
    ...net.nodes.filter((n) => existsSync(n.sizedVolumesDir)).map((n) => `volumes ${n.sizedVolumesDir}`),
    ...(await leftoverNetwork(net)),
  ];
}
