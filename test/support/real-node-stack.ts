// A real-node stack of a test file's own (kubelet + containerd per node in network namespaces, the operator as a host
// process): brought up before the file's tests, taken down after them, and made the stack that cluster-harness's
// connect() finds. Each file names its own host address 127.B.0.1 (so its node network 10.B.0.0/24 is its own);
// REAL_NODES_HOST_IP overrides it, for a developer whose machine already runs stacks on that address.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { realNodeLayout, type RealNodeLayout } from '../../localcluster/real-nodes/real-node-layout';
import { RealNodeFaults } from '../../localcluster/real-nodes/node-faults';
import { repoRoot } from '../../localcluster/stack-info';
import { stackLayout, type StackLayout } from '../../localcluster/stack-layout';
import { cacheRoot, toolPaths } from '../../localcluster/tool-cache';

const run = promisify(execFile);

export interface RealNodeStack {
  stateDir: string;
  hostIp: string;
  layout: StackLayout;
  net: RealNodeLayout;
  faults: RealNodeFaults;
  /** `down` now (a test that checks what down leaves); afterAll then does nothing. */
  down(): Promise<string>;
}

/** Registers the file's beforeAll (up) and afterAll (down); call at the top of the test file. */
export function useRealNodeStack(defaultHostIp: string): RealNodeStack {
  const hostIp = process.env.REAL_NODES_HOST_IP ?? defaultHostIp;
  const stateDir = mkdtempSync(join(tmpdir(), 'etcd-conductor-realnodes-'));
  const layout = stackLayout({ repoRoot: repoRoot(), stateDir, hostIp });
  const net = realNodeLayout(layout);
  const tools = toolPaths(cacheRoot());
  const main = join(repoRoot(), 'dist', 'localcluster', 'main.js');
  const cli = async (command: string) =>
    (
      await run(
        process.execPath,
        [main, command, '--state-dir', stateDir, '--host-ip', hostIp, '--no-cert-manager', '--real-nodes'],
        { timeout: 280_000, maxBuffer: 10 << 20 },
      )
    ).stdout;
  let isDown = false;
  const stack: RealNodeStack = {
    stateDir,
    hostIp,
    layout,
    net,
    faults: new RealNodeFaults({
      net,
      kubectl: tools.kubectl,
      kubeconfig: join(stateDir, 'kubeconfig'),
      crictl: tools.crictl,
      logsDir: layout.paths.logsDir,
      log: (line) => console.log(line),
    }),
    down: async () => {
      isDown = true;
      return cli('down');
    },
  };
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
    if (!isDown) await cli('down').catch(() => undefined);
    rmSync(stateDir, { recursive: true, force: true });
  }, 120_000);
  return stack;
}
