// Can this machine run containers? Checked in a second before anything starts, so `up` fails at once with one message
// naming everything that is missing instead of a kubelet that never becomes Ready. There is no other kind of node.
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { sh, shQuiet } from './host-commands';
import { parseCgroupMounts } from './node-cgroups';

export interface MachineFacts {
  uid: number;
  cgroupMountinfo: string;
  filesystems: string;
  commandsFound: Record<string, boolean>;
  netnsSupported: boolean;
  /** Undefined when not tried (not root). */
  vethBridgeError: string | undefined;
}

export const REQUIRED_COMMANDS = ['ip', 'nsenter', 'umount', 'iptables', 'umoci', 'tar'];
const V1_CONTROLLERS = ['cpu', 'cpuacct', 'cpuset', 'memory', 'pids', 'devices', 'freezer'];

/** Pure: every problem, as one line each; empty means the machine can run real nodes. */
export function preflightProblems(f: MachineFacts): string[] {
  const problems: string[] = [];
  if (f.uid !== 0)
    problems.push(
      'not root: real nodes create network namespaces, bridges, mounts and cgroups (run as root)',
    );
  const mounts = parseCgroupMounts(f.cgroupMountinfo);
  const v1 = new Set(mounts.filter((m) => m.type === 'cgroup').flatMap((m) => m.controllers));
  const missingV1 = V1_CONTROLLERS.filter((c) => !v1.has(c));
  const hasV2 = mounts.some((m) => m.type === 'cgroup2');
  if (mounts.length === 0) problems.push('no cgroups: nothing of type cgroup or cgroup2 is mounted');
  else if (missingV1.length > 0 && !hasV2)
    problems.push(`cgroup controllers not mounted: ${missingV1.join(', ')}`);
  if (!/\toverlay$/m.test(f.filesystems))
    problems.push('kernel feature missing: overlay filesystem (containerd snapshotter)');
  if (!f.netnsSupported) problems.push('kernel feature missing: network namespaces (/proc/self/ns/net)');
  if (f.vethBridgeError) problems.push(`kernel feature missing: veth or bridge links (${f.vethBridgeError})`);
  const missing = Object.entries(f.commandsFound)
    .filter(([, ok]) => !ok)
    .map(([c]) => c);
  if (missing.length > 0)
    problems.push(
      `commands missing: ${missing.join(', ')} (Debian: apt-get install iproute2 util-linux iptables umoci tar)`,
    );
  return problems;
}

function onPath(command: string): boolean {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .some((d) => {
      try {
        accessSync(join(d, command), constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
}

/** Creates and deletes a throw-away bridge and veth pair named after the stack, proving the kernel has both. */
async function probeVethBridge(prefix: string): Promise<string | undefined> {
  const br = `${prefix}-pfb`;
  const veth = `${prefix}-pfv`;
  try {
    await sh('ip', ['link', 'add', br, 'type', 'bridge']);
    await sh('ip', ['link', 'add', veth, 'type', 'veth', 'peer', 'name', `${prefix}-pfp`]);
    return undefined;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  } finally {
    await shQuiet('ip', ['link', 'del', veth]);
    await shQuiet('ip', ['link', 'del', br]);
  }
}

export async function machineFacts(prefix: string): Promise<MachineFacts> {
  const uid = process.getuid?.() ?? -1;
  const commandsFound = Object.fromEntries(REQUIRED_COMMANDS.map((c) => [c, onPath(c)]));
  return {
    uid,
    cgroupMountinfo: readFileSync('/proc/self/mountinfo', 'utf8'),
    filesystems: readFileSync('/proc/filesystems', 'utf8'),
    commandsFound,
    netnsSupported: existsSync('/proc/self/ns/net'),
    vethBridgeError: uid === 0 && commandsFound.ip ? await probeVethBridge(prefix) : undefined,
  };
}

export class RealNodesUnsupportedError extends Error {
  constructor(problems: string[]) {
    super(`this machine cannot run real nodes: ${problems.join('; ')}`);
    this.name = 'RealNodesUnsupportedError';
  }
}

export async function assertMachineCanRunNodes(prefix: string): Promise<void> {
  const problems = preflightProblems(await machineFacts(prefix));
  if (problems.length > 0) throw new RealNodesUnsupportedError(problems);
}
