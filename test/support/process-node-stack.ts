// A process-backed stack of a test file's own (the project's node runtime, kept until it is removed): brought up
// before the file's tests, taken down after them, and made the stack that connect() finds. For the tests of that
// runtime's own internals (its fault-control endpoint, its claim folders); everything Kubernetes itself promises is
// tested on the default stack, whose nodes are real.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '../../localcluster/stack-info';

const run = promisify(execFile);

/** The flag that asks `up` for process-backed nodes (the default stack's nodes are real). */
export const PROCESS_NODES_FLAGS: string[] = ['--process-nodes'];

/** Registers the file's beforeAll (up) and afterAll (down); call at the top of the test file, before other hooks. */
export function useProcessNodeStack(defaultHostIp: string): { stateDir: string; hostIp: string } {
  const hostIp = process.env.PROCESS_NODES_HOST_IP ?? defaultHostIp;
  const stateDir = mkdtempSync(join(tmpdir(), 'etcd-conductor-processnodes-'));
  const main = join(repoRoot(), 'dist', 'localcluster', 'main.js');
  const cli = async (command: string) =>
    (
      await run(
        process.execPath,
        [
          main,
          command,
          '--state-dir',
          stateDir,
          '--host-ip',
          hostIp,
          // The runtime's own internals need neither: a lighter stack on a loaded machine.
          '--no-cert-manager',
          '--no-operator',
          ...PROCESS_NODES_FLAGS,
        ],
        { timeout: 280_000, maxBuffer: 10 << 20 },
      )
    ).stdout;
  const previous = process.env.ETCD_CONDUCTOR_STACK_JSON;
  beforeAll(async () => {
    const t0 = Date.now();
    const out = await cli('up');
    if (!/up: ready in/.test(out)) throw new Error(`process-node stack did not come up:\n${out}`);
    process.env.ETCD_CONDUCTOR_STACK_JSON = join(stateDir, 'stack.json');
    console.log(`process nodes: up on ${hostIp} took ${((Date.now() - t0) / 1000).toFixed(1)}s`);
  }, 300_000);
  afterAll(async () => {
    await cli('down').catch(() => undefined);
    rmSync(stateDir, { recursive: true, force: true });
    if (previous === undefined) delete process.env.ETCD_CONDUCTOR_STACK_JSON;
    else process.env.ETCD_CONDUCTOR_STACK_JSON = previous;
  }, 120_000);
  return { stateDir, hostIp };
}
