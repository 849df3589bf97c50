// Faults users meet, on a real-node stack: a member's volume filled to the last byte (size-limited volumes only), a container killed (as the OOM killer would), a container frozen for a while
// (cgroup freezer), a node stopped and started again (its kubelet, containerd, shims and containers all killed, as a
// power cut does, then its runtime and kubelet started again with the very same command lines), and a node partitioned
// from the other nodes both ways (iptables rules in the node's own network namespace, tagged, so heal and `down` find
// them). Every fault that lasts takes its duration and heals itself; nothing here touches another stack.
// Over 400 lines as one class: the faults share its node, Pod and container lookups, and restoreAll() undoes them all.
import { spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statfsSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { listProcesses } from '../process-scan';
import { sh, shQuiet } from './host-commands';
import { containerdPaths, kubeletPaths, kubeProxyPaths } from './node-configs';
import type { RealNode, RealNodeLayout } from './real-node-layout';

export interface RealNodeFaultsOptions {
  net: RealNodeLayout;
  kubectl: string;
  kubeconfig: string;
  crictl: string;
  logsDir: string;
  log?: (line: string) => void;
}

/** The comment every partition rule carries; `heal` deletes exactly the rules with it. */
export const partitionTag = (net: RealNodeLayout) => `etcd-conductor ${net.prefix} partition`;

/**
 * Pure: the iptables rules (without -I/-D) that cut `node` off from every other node of the stack, in both directions,
 * both the nodes' own addresses (kubelet, kube-proxy, etcd peers on host networking) and their Pod CIDRs (Pod to Pod
 * traffic is routed through the host). They go into `node`'s own namespace; the host and the apiserver stay reachable.
 */
export function partitionRules(net: RealNodeLayout, nodeName: string): string[][] {
  const node = net.nodes.find((n) => n.name === nodeName);
  if (!node)
    throw new Error(`no node ${nodeName} in this stack (${net.nodes.map((n) => n.name).join(', ')})`);
  const tag = ['-m', 'comment', '--comment', partitionTag(net)];
  const rules: string[][] = [];
  for (const other of net.nodes.filter((n) => n.name !== nodeName)) {
    for (const addr of [other.ip, other.podCidr]) {
      rules.push(['INPUT', '-s', addr, ...tag, '-j', 'DROP']);
      rules.push(['OUTPUT', '-d', addr, ...tag, '-j', 'DROP']);
      rules.push(['FORWARD', '-s', addr, ...tag, '-j', 'DROP']);
      rules.push(['FORWARD', '-d', addr, ...tag, '-j', 'DROP']);
    }
  }
  return rules;
}

/** Pure: the freezer cgroup of a process, from /proc/<pid>/cgroup (cgroup v1: `N:freezer:/path`). */
export function freezerCgroup(procCgroup: string): string | undefined {
  for (const line of procCgroup.split('\n')) {
    const [, controllers, path] = line.split(':');
    if (controllers?.split(',').includes('freezer') && path !== undefined) return path;
  }
  return undefined;
}

/** The file `fill` writes at the root of a volume; `release` removes it, and nothing else. */
export const FILL_FILE = '.etcd-conductor-fill';
/** A filesystem bigger than this is not a test volume: `fill` refuses it rather than write gigabytes. */
export const MAX_FILL_BYTES = 1024 * 1024 * 1024;

/**
 * Pure: whether `fill` may write into `volumeDir`: only a volume of the size-limited class, a folder directly in its
 * node's sized folder (a tmpfs of fixed size), never the machine's own disk. Returns the refusal, or undefined.
 */
export function fillRefusal(node: RealNode, volumeDir: string, filesystemBytes: number): string | undefined {
  const inside = volumeDir.startsWith(`${node.sizedVolumesDir}/`);
  const rest = volumeDir.slice(node.sizedVolumesDir.length + 1);
  if (!inside || rest === '' || rest.includes('/') || rest === '..' || rest === '.')
    return `${volumeDir} is not a volume of the size-limited StorageClass on ${node.name} (folders in ${node.sizedVolumesDir}); only those can be filled`;
  if (!(filesystemBytes > 0 && filesystemBytes <= MAX_FILL_BYTES))
    return `the filesystem of ${volumeDir} holds ${filesystemBytes} bytes; fill writes only to one of at most ${MAX_FILL_BYTES}`;
  return undefined;
}

interface SavedProcess {
  name: string;
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  logFile: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Appends zeros to the fill file in `dir` in 1 MiB, then 4 KiB, then 512-byte pieces until ENOSPC, never more than
 * `limit` bytes in all whatever the writes report; returns how many it wrote.
 */
export function topUp(dir: string, limit: number): number {
  const fd = openSync(join(dir, FILL_FILE), 'a');
  let bytes = 0;
  try {
    for (const size of [1024 * 1024, 4096, 512]) {
      const chunk = Buffer.alloc(size);
      while (bytes + size <= limit) {
        try {
          bytes += writeSync(fd, chunk);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw e;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return bytes;
}

export class RealNodeFaults {
  private readonly log: (line: string) => void;
  /** Volumes fillVolume keeps full, by namespace/pod, until releaseVolume. */
  private readonly holds = new Map<string, { stop: () => void }>();
  constructor(private readonly opts: RealNodeFaultsOptions) {
    this.log = opts.log ?? (() => undefined);
  }

  node(name: string): RealNode {
    const n = this.opts.net.nodes.find((x) => x.name === name);
    if (!n)
      throw new Error(`no node ${name} in this stack (${this.opts.net.nodes.map((x) => x.name).join(', ')})`);
    return n;
  }

  private async kubectl(args: string[]): Promise<string> {
    return sh(this.opts.kubectl, ['--kubeconfig', this.opts.kubeconfig, ...args]);
  }

  /** The node a Pod runs on. */
  async podNode(namespace: string, pod: string): Promise<RealNode> {
    const nodeName = (
      await this.kubectl(['-n', namespace, 'get', 'pod', pod, '-o', 'jsonpath={.spec.nodeName}'])
    ).trim();
    if (!nodeName) throw new Error(`pod ${namespace}/${pod} is not on a node`);
    return this.node(nodeName);
  }

  private crictl(node: RealNode, args: string[]): Promise<string> {
    return sh(this.opts.crictl, [
      '--runtime-endpoint',
      `unix://${node.containerdSocket}`,
      '--timeout',
      '10s',
      ...args,
    ]);
  }

  /** The host pid of a running container of a Pod, asked of its node's containerd. */
  async containerPid(
    namespace: string,
    pod: string,
    container: string,
  ): Promise<{ node: RealNode; pid: number; id: string }> {
    const node = await this.podNode(namespace, pod);
    const ids = (
      await this.crictl(node, [
        'ps',
        '-q',
        '--state',
        'running',
        '--label',
        `io.kubernetes.pod.namespace=${namespace}`,
        '--label',
        `io.kubernetes.pod.name=${pod}`,
        '--label',
        `io.kubernetes.container.name=${container}`,
      ])
    )
      .split('\n')
      .map((s) => s.trim())
      .filter(Boolean);
    const id = ids[0];
    if (!id) throw new Error(`no running container ${container} of ${namespace}/${pod} on ${node.name}`);
    const info = JSON.parse(await this.crictl(node, ['inspect', id])) as { info?: { pid?: number } };
    const pid = info.info?.pid;
    if (!pid) throw new Error(`containerd of ${node.name} reports no pid for container ${id}`);
    return { node, pid, id };
  }

  /** SIGKILL to the container's main process, as the OOM killer would; the kubelet restarts it by its restart policy. */
  async killContainer(namespace: string, pod: string, container = 'etcd'): Promise<{ node: string }> {
    const { node, pid, id } = await this.containerPid(namespace, pod, container);
    process.kill(pid, 'SIGKILL');
    this.log(
      `fault: killed container ${container} (${id.slice(0, 12)}, pid ${pid}) of ${namespace}/${pod} on ${node.name}`,
    );
    return { node: node.name };
  }

  /** Freezes the container's cgroup for `seconds`, then thaws it whatever happens in between. */
  async freezeContainer(namespace: string, pod: string, container: string, seconds: number): Promise<void> {
    if (!(seconds > 0 && seconds <= 600)) throw new Error(`freeze for 1-600 s, not ${seconds}`);
    const { node, pid } = await this.containerPid(namespace, pod, container);
    const cgroup = freezerCgroup(readFileSync(`/proc/${pid}/cgroup`, 'utf8'));
    if (!cgroup) throw new Error(`pid ${pid} has no freezer cgroup (cgroup v1 freezer needed)`);
    const state = join('/sys/fs/cgroup/freezer', cgroup, 'freezer.state');
    writeFileSync(state, 'FROZEN');
    this.log(`fault: froze ${namespace}/${pod} ${container} on ${node.name} for ${seconds} s (${cgroup})`);
    try {
      await sleep(seconds * 1000);
    } finally {
      writeFileSync(state, 'THAWED');
      this.log(`fault: thawed ${namespace}/${pod} ${container}`);
    }
  }

  /** The folder on its node that holds the volume of a Pod's claim (the first claim the Pod mounts). */
  async podVolume(namespace: string, pod: string): Promise<{ node: RealNode; claim: string; dir: string }> {
    const node = await this.podNode(namespace, pod);
    const spec = JSON.parse(await this.kubectl(['-n', namespace, 'get', 'pod', pod, '-o', 'json'])) as {
      spec?: { volumes?: { persistentVolumeClaim?: { claimName?: string } }[] };
    };
    const claim = spec.spec?.volumes?.find((v) => v.persistentVolumeClaim?.claimName)?.persistentVolumeClaim
      ?.claimName;
    if (!claim) throw new Error(`pod ${namespace}/${pod} mounts no PersistentVolumeClaim`);
    const pvName = (
      await this.kubectl(['-n', namespace, 'get', 'pvc', claim, '-o', 'jsonpath={.spec.volumeName}'])
    ).trim();
    if (!pvName) throw new Error(`claim ${namespace}/${claim} is not bound`);
    const pv = JSON.parse(await this.kubectl(['get', 'pv', pvName, '-o', 'json'])) as {
      spec?: { hostPath?: { path?: string }; local?: { path?: string } };
    };
    const dir = pv.spec?.hostPath?.path ?? pv.spec?.local?.path;
    if (!dir) throw new Error(`volume ${pvName} of ${namespace}/${claim} is not a folder on a node`);
    return { node, claim, dir };
  }

  /**
   * Fills the filesystem of a Pod's volume (of the size-limited class only) until no byte is left: one file of zeros
   * at the volume's root, written in 1 MiB and then 4 KiB pieces until ENOSPC, never more than the filesystem's
   * size. The space stays taken until releaseVolume: whatever frees space meanwhile (etcd truncating a preallocated
   * WAL segment on restart, say) is taken again within a quarter of a second, as a disk that something else keeps
   * filling would be, for at most `holdSeconds` (default 600) if releaseVolume never comes.
   */
  async fillVolume(
    namespace: string,
    pod: string,
    holdSeconds = 600,
  ): Promise<{ node: string; dir: string; bytes: number }> {
    const { node, dir } = await this.podVolume(namespace, pod);
    const fs = statfsSync(dir);
    const total = fs.blocks * fs.bsize;
    const refusal = fillRefusal(node, dir, total);
    if (refusal) throw new Error(refusal);
    const key = `${namespace}/${pod}`;
    this.holds.get(key)?.stop();
    const bytes = topUp(dir, total);
    const left = statfsSync(dir);
    this.log(
      `fault: filled the volume of ${namespace}/${pod} on ${node.name} (${dir}): ${bytes} bytes written, ${left.bavail * left.bsize} bytes left`,
    );
    let taken = bytes;
    const timer = setInterval(() => {
      try {
        const more = topUp(dir, total - taken);
        taken += more;
        if (more > 0)
          this.log(`fault: ${namespace}/${pod}: ${more} bytes freed on the full volume taken again`);
      } catch (e) {
        this.log(`fault: ${namespace}/${pod}: could not keep the volume full: ${String(e)}`);
      }
    }, 250);
    timer.unref();
    const until = setTimeout(() => hold.stop(), holdSeconds * 1000);
    until.unref();
    const hold = {
      stop: () => {
        clearInterval(timer);
        clearTimeout(until);
        if (this.holds.get(key) === hold) this.holds.delete(key);
      },
    };
    this.holds.set(key, hold);
    return { node: node.name, dir, bytes };
  }

  /** Frees what fillVolume took (stops keeping it full, removes its file only); safe to call any time. */
  async releaseVolume(namespace: string, pod: string): Promise<void> {
    this.holds.get(`${namespace}/${pod}`)?.stop();
    const { node, dir } = await this.podVolume(namespace, pod);
    const refusal = fillRefusal(node, dir, 1);
    if (refusal) throw new Error(refusal);
    rmSync(join(dir, FILL_FILE), { force: true });
    this.log(`fault: released the volume of ${namespace}/${pod} on ${node.name}`);
  }

  /** Fill for `seconds`, then release, whatever happens in between. */
  async fillVolumeFor(namespace: string, pod: string, seconds: number): Promise<void> {
    if (!(seconds > 0 && seconds <= 600)) throw new Error(`fill for 1-600 s, not ${seconds}`);
    try {
      await this.fillVolume(namespace, pod, seconds);
      await sleep(seconds * 1000);
    } finally {
      await this.releaseVolume(namespace, pod);
    }
  }

  /** Cuts `node` off from the other nodes (both ways) until heal(); idempotent. */
  async partition(nodeName: string): Promise<void> {
    const node = this.node(nodeName);
    await this.heal(nodeName);
    for (const rule of partitionRules(this.opts.net, nodeName))
      await sh('ip', ['netns', 'exec', node.netns, 'iptables', '-w', '-I', ...rule]);
    this.log(`fault: ${nodeName} partitioned from ${this.others(nodeName).join(', ')}`);
  }

  /** Removes the partition rules of `node` (every node when none is named); safe to call any time. */
  async heal(nodeName?: string): Promise<void> {
    const names = nodeName ? [nodeName] : this.opts.net.nodes.map((n) => n.name);
    for (const name of names) {
      const node = this.node(name);
      if (!existsSync(`/run/netns/${node.netns}`)) continue;
      for (const rule of partitionRules(this.opts.net, name))
        while (await shQuiet('ip', ['netns', 'exec', node.netns, 'iptables', '-w', '-D', ...rule]));
    }
    if (nodeName) this.log(`fault: ${nodeName} healed`);
  }

  /** Partition for `seconds`, then heal, whatever happens in between. */
  async partitionFor(nodeName: string, seconds: number): Promise<void> {
    if (!(seconds > 0 && seconds <= 600)) throw new Error(`partition for 1-600 s, not ${seconds}`);
    await this.partition(nodeName);
    try {
      await sleep(seconds * 1000);
    } finally {
      await this.heal(nodeName);
    }
  }

  private others(nodeName: string): string[] {
    return this.opts.net.nodes.filter((n) => n.name !== nodeName).map((n) => n.name);
  }

  private savedFile(node: RealNode): string {
    return join(node.dir, 'stopped-node.json');
  }

  /**
   * A power cut: the node's kubelet, kube-proxy and containerd (whose exact command lines are saved first, for
   * startNode), its shims and every process in its cgroups are killed. Its volumes and network stay, as a disk and a
   * cable would.
   */
  async stopNode(nodeName: string): Promise<void> {
    const node = this.node(nodeName);
    if (existsSync(this.savedFile(node))) throw new Error(`${nodeName} is already stopped`);
    const procs = listProcesses();
    const saved: SavedProcess[] = [];
    for (const [name, marker] of [
      ['containerd', `--config ${containerdPaths(node).config}`],
      ['kubelet', `--config=${kubeletPaths(node).config}`],
      ['kube-proxy', `--config=${kubeProxyPaths(node).config}`],
    ] as const) {
      // nsenter exec'd the program: its pid now runs the program itself, in the node's network namespace.
      const p = procs.find((x) => x.command.includes(marker));
      if (!p) continue;
      const argv = readFileSync(`/proc/${p.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      const env = Object.fromEntries(
        readFileSync(`/proc/${p.pid}/environ`, 'utf8')
          .split('\0')
          .filter(Boolean)
          .map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]),
      );
      saved.push({
        name,
        argv: ['nsenter', `--net=/run/netns/${node.netns}`, '--', ...argv],
        cwd: readlinkSync(`/proc/${p.pid}/cwd`),
        env,
        logFile: join(this.opts.logsDir, `${nodeName}-${name}.log`),
      });
    }
    if (saved.length === 0) throw new Error(`${nodeName} runs no kubelet or containerd`);
    writeFileSync(this.savedFile(node), JSON.stringify(saved));
    let killed = 0;
    for (const p of procs) {
      if (p.pid === process.pid) continue;
      if (p.command.includes(node.dir + '/') || p.command.includes(node.containerdSocket)) {
        try {
          process.kill(p.pid, 'SIGKILL');
          killed++;
        } catch {
          // already gone
        }
      }
    }
    killed += killCgroupProcesses(node.cgroupRoot);
    this.log(`fault: ${nodeName} stopped (${killed} processes killed)`);
  }

  /** Starts what stopNode saved, with the same command lines and log files, detached (the stack's `down` ends them). */
  async startNode(nodeName: string): Promise<void> {
    const node = this.node(nodeName);
    const file = this.savedFile(node);
    if (!existsSync(file)) throw new Error(`${nodeName} was not stopped by this tool`);
    const saved = JSON.parse(readFileSync(file, 'utf8')) as SavedProcess[];
    // containerd first, and answering, before the kubelet: a kubelet that cannot reach its runtime exits at once. The
    // killed containerd left its socket file behind, which would look ready.
    rmSync(node.containerdSocket, { force: true });
    for (const p of saved) {
      const fd = openSync(p.logFile, 'a');
      const [command, ...args] = p.argv;
      const child = spawn(command ?? '', args, {
        cwd: p.cwd,
        env: p.env,
        stdio: ['ignore', fd, fd],
        detached: true,
      });
      closeSync(fd);
      child.unref();
      if (p.name === 'containerd') await waitForSocket(node.containerdSocket, 30000);
    }
    // Removed only once every process is started again.
    rmSync(file, { force: true });
    this.log(`fault: ${nodeName} started again`);
  }

  /**
   * Undoes every lasting fault of this tool: partitions healed, stopped nodes started. For a stack that outlives a
   * test file (the default stack the suites share), so the next file finds every node as the stack brought it up.
   */
  async restoreAll(): Promise<string[]> {
    for (const hold of [...this.holds.values()]) hold.stop();
    await this.heal();
    const started: string[] = [];
    for (const node of this.opts.net.nodes)
      if (existsSync(this.savedFile(node))) {
        await this.startNode(node.name);
        started.push(node.name);
      }
    return started;
  }

  async stopNodeFor(nodeName: string, seconds: number): Promise<void> {
    if (!(seconds > 0 && seconds <= 900)) throw new Error(`stop a node for 1-900 s, not ${seconds}`);
    await this.stopNode(nodeName);
    try {
      await sleep(seconds * 1000);
    } finally {
      await this.startNode(nodeName);
    }
  }
}

/** Until something accepts connections on the unix socket. */
async function waitForSocket(path: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      const c = createConnection(path);
      c.once('connect', () => {
        c.destroy();
        resolve(true);
      });
      c.once('error', () => resolve(false));
    });
    if (ok) return;
    await sleep(200);
  }
  throw new Error(`nothing answers on ${path} within ${timeoutMs / 1000} s`);
}

/** SIGKILL to every process in the node's cgroups (the containers), read from the pids hierarchy. */
function killCgroupProcesses(cgroupRoot: string): number {
  const root = join('/sys/fs/cgroup/pids', cgroupRoot);
  let killed = 0;
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const pid of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) {
      try {
        process.kill(Number(pid), 'SIGKILL');
        killed++;
      } catch {
        // already gone
      }
    }
    for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) walk(join(dir, e.name));
  };
  walk(root);
  return killed;
}
