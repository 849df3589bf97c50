// Starts one container as a detached process group in its own mount namespace; the group id is the pid, so a signal reaches the whole container.
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { constants } from 'node:os';
import { dirname } from 'node:path';
import { renderMountScript } from './mount-script';
import type { BindMount, TerminationFile } from './mount-script';

export interface ContainerExit {
  exitCode: number;
  /** Signal number when the main process was killed by one. */
  signal?: number;
  finishedAt: Date;
}

export interface ContainerProcess {
  pid: number;
  startedAt: Date;
  exited: Promise<ContainerExit>;
  /** Signals the container's whole process group; a group that is already gone is not an error. */
  signal(sig: NodeJS.Signals): void;
}

export interface ContainerLaunch {
  argv: string[];
  env: Record<string, string>;
  mounts: BindMount[];
  workingDir: string;
  /** stdout and stderr are appended here. */
  logPath: string;
  /** Gives the container its termination message file (see renderMountScript). */
  termination?: TerminationFile;
  /** The image's folders, kept visible over volumes mounted above them (see renderMountScript). */
  imageRoots?: string[];
}

export function signalGroup(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    // ESRCH: the group has no member left.
  }
}

export function spawnContainer(launch: ContainerLaunch): ContainerProcess {
  mkdirSync(dirname(launch.logPath), { recursive: true });
  const log = openSync(launch.logPath, 'a');
  const script = renderMountScript(launch.mounts, launch.workingDir, launch.termination, launch.imageRoots);
  const child = spawn(
    '/usr/bin/unshare',
    ['-m', '--propagation', 'private', '--', '/bin/sh', '-c', script, 'sh', ...launch.argv],
    {
      detached: true,
      stdio: ['ignore', log, log],
      env: launch.env,
    },
  );
  closeSync(log);
  const startedAt = new Date();
  const exited = new Promise<ContainerExit>((resolve) => {
    child.once('error', () => resolve({ exitCode: 128, finishedAt: new Date() }));
    child.once('exit', (code, sig) => {
      // Stragglers of the group (children the main process left behind) die with it, as in a cgroup.
      if (child.pid !== undefined) signalGroup(child.pid, 'SIGKILL');
      if (sig !== null) {
        const signal = constants.signals[sig];
        resolve({ exitCode: 128 + signal, signal, finishedAt: new Date() });
      } else resolve({ exitCode: code ?? 128, finishedAt: new Date() });
    });
  });
  const pid = child.pid ?? -1;
  return {
    pid,
    startedAt,
    exited,
    signal: (sig) => {
      if (pid > 0) signalGroup(pid, sig);
    },
  };
}

/** SIGTERM, then SIGKILL once the grace period is over; resolves with the exit. */
export async function stopContainer(proc: ContainerProcess, graceMs: number): Promise<ContainerExit> {
  proc.signal('SIGCONT');
  proc.signal('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const killed = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      proc.signal('SIGKILL');
      resolve();
    }, graceMs);
  });
  await Promise.race([proc.exited, killed]);
  clearTimeout(timer);
  return proc.exited;
}
