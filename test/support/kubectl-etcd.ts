// `kubectl etcd` run the way users run it: kubectl finds an executable named kubectl-etcd on the PATH (what
// `npm install -g` puts there), here a shim in a temporary folder that runs dist/plugin/main.js against the stack.
import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Harness } from './cluster-harness';

const execFileAsync = promisify(execFile);

export interface KubectlEtcd {
  /** Resolves with its output; rejects when it exits non-zero (the error carries stdout and stderr). */
  run(...args: string[]): Promise<{ stdout: string; stderr: string }>;
  /** Waits for it and returns its exit code, for tests of the exit codes themselves. */
  runSync(...args: string[]): { code: number | null; stdout: string; stderr: string };
  /** Removes the shim's folder. */
  remove(): void;
}

export function installKubectlEtcd(h: Harness, timeoutMs = 700_000): KubectlEtcd {
  const binDir = mkdtempSync(join(tmpdir(), 'kubectl-etcd-'));
  const script = join(binDir, 'kubectl-etcd');
  writeFileSync(
    script,
    `#!/bin/sh\nexec "${process.execPath}" "${resolve(__dirname, '..', '..', 'dist', 'plugin', 'main.js')}" "$@"\n`,
  );
  chmodSync(script, 0o755);
  const env = (): NodeJS.ProcessEnv => ({
    ...process.env,
    PATH: `${binDir}${delimiter}${process.env['PATH'] ?? ''}`,
    KUBECONFIG: h.stack.kubeconfig,
    TEMPORAL_ADDRESS: h.stack.temporal.address,
    TEMPORAL_NAMESPACE: h.stack.temporal.namespace,
  });
  return {
    run: (...args) =>
      execFileAsync(h.stack.tools.kubectl, ['etcd', ...args], {
        encoding: 'utf8',
        timeout: timeoutMs,
        env: env(),
      }),
    runSync: (...args) => {
      const r = spawnSync(h.stack.tools.kubectl, ['etcd', ...args], {
        encoding: 'utf8',
        timeout: timeoutMs,
        env: env(),
      });
      return { code: r.status, stdout: r.stdout, stderr: r.stderr };
    },
    remove: () => rmSync(binDir, { recursive: true, force: true }),
  };
}
