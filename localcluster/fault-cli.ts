// `npm run fault -- <kind> <target> [seconds]`: the faults users meet, injected into the running stack's real nodes by
// hand (real-nodes/node-faults.ts). Every fault that lasts is given its duration and heals itself when the time is up
// (or on Ctrl-C).
import { RealNodeFaults } from './real-nodes/node-faults';
import { realNodeLayout } from './real-nodes/real-node-layout';
import type { StackInfo } from './stack-info';
import { stackLayout } from './stack-layout';
import { cacheRoot, toolPaths } from './tool-cache';

export type FaultRequest =
  | { kind: 'kill'; namespace: string; pod: string; container: string }
  | { kind: 'freeze'; namespace: string; pod: string; container: string; seconds: number }
  | { kind: 'node-stop'; node: string; seconds: number }
  | { kind: 'partition'; node: string; seconds: number }
  | { kind: 'heal'; node: string | undefined }
  | { kind: 'fill'; namespace: string; pod: string; seconds: number }
  | { kind: 'release'; namespace: string; pod: string };

export const FAULT_USAGE = `usage: npm run fault -- <kind> <target> [seconds]
  kill      <namespace>/<pod>[/<container>]             SIGKILL the container (default container: etcd)
  freeze    <namespace>/<pod>[/<container>] <seconds>   freeze it (cgroup freezer), thaw after <seconds>
  node-stop <node> <seconds>                            power the node off (kubelet, containerd, containers), start it after <seconds>
  partition <node> <seconds>                            cut the node off from the other nodes both ways, heal after <seconds>
  heal      [<node>]                                    remove partition rules now (of every node when none is named)
  fill      <namespace>/<pod> <seconds>                 fill the Pod's volume to the last byte (StorageClass local-path-sized only), free it after <seconds>
  release   <namespace>/<pod>                           free what fill took now`;

/** Pure: the request the arguments describe, or the reason they describe none. */
export function parseFaultArgs(args: string[]): FaultRequest | { error: string } {
  const [kind, target, secondsArg, ...extra] = args;
  if (extra.length > 0) return { error: `too many arguments: ${extra.join(' ')}` };
  const seconds = (max: number): number | { error: string } => {
    const n = Number(secondsArg);
    if (secondsArg === undefined) return { error: `${kind} needs a duration in seconds` };
    if (!Number.isInteger(n) || n < 1 || n > max)
      return { error: `seconds must be a whole number from 1 to ${max}, not ${secondsArg}` };
    return n;
  };
  const podTarget = (): { namespace: string; pod: string; container: string } | { error: string } => {
    const [namespace, pod, container = 'etcd', ...more] = (target ?? '').split('/');
    if (!namespace || !pod || more.length > 0)
      return { error: `${kind} needs <namespace>/<pod>[/<container>], not ${target ?? 'nothing'}` };
    return { namespace, pod, container };
  };
  switch (kind) {
    case 'kill': {
      if (secondsArg !== undefined) return { error: 'kill takes no duration' };
      const t = podTarget();
      return 'error' in t ? t : { kind, ...t };
    }
    case 'freeze': {
      const t = podTarget();
      if ('error' in t) return t;
      const s = seconds(600);
      return typeof s === 'number' ? { kind, ...t, seconds: s } : s;
    }
    case 'node-stop':
    case 'partition': {
      if (!target) return { error: `${kind} needs a node name` };
      const s = seconds(kind === 'node-stop' ? 900 : 600);
      return typeof s === 'number' ? { kind, node: target, seconds: s } : s;
    }
    case 'heal':
      if (secondsArg !== undefined) return { error: 'heal takes no duration' };
      return { kind, node: target };
    case 'fill':
    case 'release': {
      const t = podTarget();
      if ('error' in t) return t;
      if (t.container !== 'etcd' || (target ?? '').split('/').length > 2)
        return { error: `${kind} needs <namespace>/<pod> (a Pod's volume, not a container), not ${target}` };
      if (kind === 'release') {
        if (secondsArg !== undefined) return { error: 'release takes no duration' };
        return { kind, namespace: t.namespace, pod: t.pod };
      }
      const s = seconds(600);
      return typeof s === 'number' ? { kind, namespace: t.namespace, pod: t.pod, seconds: s } : s;
    }
    default:
      return { error: kind ? `unknown fault kind ${kind}` : 'no fault kind given' };
  }
}

/** The faults of the running stack `info` describes (its real nodes, their containerd and cgroups). */
export function stackFaults(info: StackInfo, log: (line: string) => void): RealNodeFaults {
  const layout = stackLayout({ repoRoot: process.cwd(), stateDir: info.stateDir, hostIp: info.hostIp });
  const tools = toolPaths(cacheRoot());
  return new RealNodeFaults({
    net: realNodeLayout(layout),
    kubectl: tools.kubectl,
    kubeconfig: info.kubeconfig,
    crictl: tools.crictl,
    logsDir: info.logsDir,
    log,
  });
}

export async function runFault(
  info: StackInfo,
  request: FaultRequest,
  log: (line: string) => void,
): Promise<void> {
  const faults = stackFaults(info, log);
  switch (request.kind) {
    case 'kill':
      await faults.killContainer(request.namespace, request.pod, request.container);
      return;
    case 'freeze':
      await faults.freezeContainer(request.namespace, request.pod, request.container, request.seconds);
      return;
    case 'node-stop':
      await faults.stopNodeFor(request.node, request.seconds);
      return;
    case 'partition':
      await faults.partitionFor(request.node, request.seconds);
      return;
    case 'heal':
      await faults.heal(request.node);
      return;
    case 'fill':
      await faults.fillVolumeFor(request.namespace, request.pod, request.seconds);
      return;
    case 'release':
      await faults.releaseVolume(request.namespace, request.pod);
      return;
  }
}
