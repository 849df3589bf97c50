// The real-node stack a test file runs on (kubelet + containerd per node in network namespaces). When the default stack
// (the one cluster-harness's connect() finds) is itself a ready real-node stack, the file shares it: no stack of its
// own is brought up, which saves minutes per file, and after the file every fault it left is undone and the file waits
// for three Ready nodes, so the files after it find the stack as it was. Otherwise (no ready default stack, a stack.json
// left by the removed process-backed nodes, or REAL_NODES_OWN_STACK=1) the file brings up a stack of its own on its own
// host address 127.B.0.1 (so its node network 10.B.0.0/24 is its own), takes it down after its tests, and makes it the
// stack connect() finds; REAL_NODES_HOST_IP overrides that address, for a developer whose machine already runs stacks
// on it.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { realNodeLayout, type RealNodeLayout } from '../../localcluster/real-nodes/real-node-layout';
import { RealNodeFaults } from '../../localcluster/real-nodes/node-faults';
import { readStackInfo, repoRoot, type StackInfo } from '../../localcluster/stack-info';
import { stackLayout, type StackLayout } from '../../localcluster/stack-layout';
import { cacheRoot, toolPaths } from '../../localcluster/tool-cache';
import { pidAlive } from '../../localcluster/tools';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface RealNodeStack {
  stateDir: string;
  hostIp: string;
  layout: StackLayout;
  net: RealNodeLayout;
  faults: RealNodeFaults;
  /** True when the file runs on the default stack rather than a stack of its own. */
  shared: boolean;
}

/** The default stack, when it is a ready real-node stack a file may share; pure apart from reading stack.json. */
export function shareableDefaultStack(
  env: NodeJS.ProcessEnv = process.env,
  read: (path: string) => StackInfo | undefined = readStackInfo,
  alive: (pid: number) => boolean = pidAlive,
): StackInfo | undefined {
  if (env.REAL_NODES_OWN_STACK === '1') return undefined;
  const info = read(env.ETCD_CONDUCTOR_STACK_JSON ?? join(repoRoot(), '.local', 'stack.json'));
  if (!info || info.phase !== 'ready' || info.nodeRuntime !== 'real' || !alive(info.ownerPid))
    return undefined;
  return info;
}

/** Registers the file's beforeAll and afterAll; call at the top of the test file, before its other hooks. */
export function useRealNodeStack(defaultHostIp: string): RealNodeStack {
  const shared = shareableDefaultStack();
  const hostIp = shared?.hostIp ?? process.env.REAL_NODES_HOST_IP ?? defaultHostIp;
  const stateDir = shared?.stateDir ?? mkdtempSync(join(tmpdir(), 'etcd-conductor-realnodes-'));
  const layout = stackLayout({ repoRoot: repoRoot(), stateDir, hostIp });
  const net = realNodeLayout(layout);
  const tools = toolPaths(cacheRoot());
  const kubeconfig = shared?.kubeconfig ?? join(stateDir, 'kubeconfig');
  const stack: RealNodeStack = {
    stateDir,
    hostIp,
    layout,
    net,
    shared: shared !== undefined,
    faults: new RealNodeFaults({
      net,
      kubectl: tools.kubectl,
      kubeconfig,
      crictl: tools.crictl,
      logsDir: shared?.logsDir ?? layout.paths.logsDir,
      log: (line) => console.log(line),
    }),
  };
  if (shared) {
    afterAll(async () => {
      const started = await stack.faults.restoreAll();
      if (started.length > 0)
        console.log(`real nodes: started ${started.join(', ')} again for the next file`);
      await waitForReadyNodes(tools.kubectl, kubeconfig, net.nodes.length, 180_000);
    }, 240_000);
    return stack;
  }
  const main = join(repoRoot(), 'dist', 'localcluster', 'main.js');
  const cli = async (command: string) =>
    (
      await run(
        process.execPath,
        [main, command, '--state-dir', stateDir, '--host-ip', hostIp, '--no-cert-manager'],
        { timeout: 280_000, maxBuffer: 10 << 20 },
      )
    ).stdout;
  beforeAll(async () => {
    const t0 = Date.now();
    const out = await cli('up');
    if (!/up: ready in/.test(out)) throw new Error(`real-node stack did not come up:\n${out}`);
    process.env.ETCD_CONDUCTOR_STACK_JSON = join(stateDir, 'stack.json');
    console.log(`real nodes: up on ${hostIp} took ${((Date.now() - t0) / 1000).toFixed(1)}s`);
  }, 300_000);
  afterAll(async () => {
    // Heal first: a test that failed mid-partition must not leave rules for the next stack of this address.
    await stack.faults.heal().catch(() => undefined);
    await cli('down').catch(() => undefined);
    rmSync(stateDir, { recursive: true, force: true });
  }, 120_000);
  return stack;
}

/** Waits, bounded, until `count` nodes are Ready; throws naming the ones that are not. */
export async function waitForReadyNodes(
  kubectl: string,
  kubeconfig: string,
  count: number,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let last: string;
    try {
      const list = JSON.parse(
        (
          await run(kubectl, ['--kubeconfig', kubeconfig, 'get', 'nodes', '-o', 'json'], {
            maxBuffer: 10 << 20,
          })
        ).stdout,
      ) as {
        items: Array<{
          metadata: { name: string };
          status: { conditions?: Array<{ type: string; status: string }> };
        }>;
      };
      const ready = list.items.filter((n) =>
        n.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      );
      if (ready.length >= count) return;
      last = `ready: ${ready.map((n) => n.metadata.name).join(', ') || 'none'} of ${list.items.length}`;
    } catch (e) {
      last = e instanceof Error ? e.message : String(e);
    }
    if (Date.now() > deadline)
      throw new Error(`${count} Ready nodes not there within ${timeoutMs} ms (${last})`);
    await sleep(1000);
  }
}
