// Runs one server of the stack as a child process with its output in a log file; stop() always ends with the process gone (SIGTERM, grace, SIGKILL).
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** Every process the stack starts carries this variable, so `down` can find stragglers by their environment. */
export const STACK_ENV_MARKER = 'ETCD_CONDUCTOR_STACK_DIR';

export interface ProcessSpec {
  name: string;
  command: string;
  args: string[];
  cwd: string;
  logFile: string;
  env?: Record<string, string>;
  /** The stack's state folder, stamped into the environment as STACK_ENV_MARKER. */
  stackDir: string;
}

export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  /** Set once the process has exited. */
  exitStatus(): string | undefined;
  readonly exited: Promise<void>;
  stop(graceMs?: number): Promise<void>;
}

export function startProcess(spec: ProcessSpec): ManagedProcess {
  mkdirSync(dirname(spec.logFile), { recursive: true });
  const fd = openSync(spec.logFile, 'a');
  const child = spawn(spec.command, spec.args, {
    cwd: spec.cwd,
    env: { ...process.env, ...spec.env, [STACK_ENV_MARKER]: spec.stackDir },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  let status: string | undefined;
  const exited = new Promise<void>((resolve) => {
    child.on('exit', (code, signal) => {
      status = signal ? `killed by ${signal}` : `exited with code ${code}`;
      resolve();
    });
    child.on('error', (e) => {
      status = `failed to start: ${e.message}`;
      resolve();
    });
  });
  return {
    name: spec.name,
    pid: child.pid ?? -1,
    logFile: spec.logFile,
    exitStatus: () => status,
    exited,
    async stop(graceMs = 10000) {
      if (status !== undefined) return;
      child.kill('SIGTERM');
      const timer = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), graceMs).unref());
      if ((await Promise.race([exited.then(() => 'exited' as const), timer])) === 'timeout') {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

export function logTail(file: string, lines = 15): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
