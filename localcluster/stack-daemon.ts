// `up` and `down` for one stack instance: `up` runs the stack in a detached daemon and returns once it is ready (or already was); `down` stops it and proves no process of the stack is left.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isOk } from './http-probe';
import { logTail } from './managed-process';
import { findStackProcesses } from './process-scan';
import { readStackInfo, type StackInfo } from './stack-info';
import type { StackLayout } from './stack-layout';
import { temporalHealthy } from './temporal-server';
import { pidAlive } from './tools';
import { join } from 'node:path';

export const daemonPidFile = (layout: StackLayout): string => join(layout.stateDir, 'daemon.pid');

/** A recorded stack is usable when its owner lives and its servers answer; checked with short timeouts. */
export async function stackHealthy(layout: StackLayout, info: StackInfo): Promise<boolean> {
  if (info.phase !== 'ready' || !pidAlive(info.ownerPid)) return false;
  try {
    const [api, s3, temporal] = await Promise.all([
      isOk(`${info.apiserverUrl}/readyz`, { insecure: true }),
      isOk(`${info.s3.endpoint}/minio/health/ready`),
      temporalHealthy(layout),
    ]);
    return api && s3 && temporal;
  } catch {
    return false;
  }
}

export interface UpOptions {
  /** Absolute path of dist/localcluster/main.js: the daemon is this same program. */
  mainJs: string;
  extraArgs: string[];
  timeoutMs: number;
  log: (line: string) => void;
  /** Extra clean-up `down` runs for a stack that died uncleanly (e.g. its /etc/hosts block). */
  cleanups?: Array<() => Promise<void>>;
}

export type UpResult = { info: StackInfo; alreadyRunning: boolean };

export type UpDecision = 'already-running' | 'wait-for-starting-daemon' | 'clean-up-then-start' | 'start';

/** What `up` does, given what the state folder says: never two daemons for one stack, never start over a dead one's leftovers. */
export function decideUp(s: {
  recordedHealthy: boolean;
  recorded: boolean;
  startingDaemonAlive: boolean;
  startingDaemonRecorded: boolean;
}): UpDecision {
  if (s.recordedHealthy) return 'already-running';
  if (s.startingDaemonAlive) return 'wait-for-starting-daemon';
  if (s.recorded || s.startingDaemonRecorded) return 'clean-up-then-start';
  return 'start';
}

export async function up(layout: StackLayout, opts: UpOptions): Promise<UpResult> {
  const existing = readStackInfo(layout.paths.stackJson);
  const starting = readPid(daemonPidFile(layout));
  const decision = decideUp({
    recordedHealthy: existing !== undefined && (await stackHealthy(layout, existing)),
    recorded: existing !== undefined,
    startingDaemonAlive: starting !== undefined && pidAlive(starting),
    startingDaemonRecorded: starting !== undefined,
  });
  if (decision === 'already-running' && existing) return { info: existing, alreadyRunning: true };
  if (decision === 'wait-for-starting-daemon' && starting) {
    opts.log(`up: a daemon (pid ${starting}) is already starting this stack; waiting for it`);
    return { info: await waitForReady(layout, starting, opts.timeoutMs), alreadyRunning: true };
  }
  if (decision === 'clean-up-then-start') {
    opts.log('up: the previous stack did not stop cleanly; cleaning up first');
    await down(layout, { log: opts.log, cleanups: opts.cleanups ?? [] });
  }
  mkdirSync(layout.stateDir, { recursive: true });
  const fd = openSync(layout.paths.daemonLog, 'a');
  const child = spawn(
    process.execPath,
    [opts.mainJs, 'daemon', '--state-dir', layout.stateDir, '--host-ip', layout.hostIp, ...opts.extraArgs],
    {
      cwd: layout.repoRoot,
      detached: true, // its own session: the daemon outlives the `npm run up` that started it
      stdio: ['ignore', fd, fd],
    },
  );
  closeSync(fd);
  child.unref();
  if (child.pid === undefined) throw new Error('could not start the stack daemon');
  writeFileSync(daemonPidFile(layout), `${child.pid}\n`);
  opts.log(`up: stack daemon started (pid ${child.pid}, log ${layout.paths.daemonLog})`);
  return { info: await waitForReady(layout, child.pid, opts.timeoutMs), alreadyRunning: false };
}

async function waitForReady(layout: StackLayout, daemonPid: number, timeoutMs: number): Promise<StackInfo> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const info = readStackInfo(layout.paths.stackJson);
    if (info?.phase === 'ready' && info.ownerPid === daemonPid) return info;
    if (!pidAlive(daemonPid)) {
      throw new Error(
        `the stack daemon exited before the stack was ready; last lines of ${layout.paths.daemonLog}:\n${logTail(layout.paths.daemonLog, 25)}`,
      );
    }
    if (Date.now() > deadline) {
      throw new Error(
        `the stack was not ready after ${timeoutMs / 1000}s (daemon pid ${daemonPid} still running; see ${layout.paths.daemonLog})`,
      );
    }
    await sleep(250);
  }
}

export interface DownResult {
  /** Processes that had to be killed because they outlived the daemon's own shutdown. */
  killed: Array<{ pid: number; command: string }>;
  wasRunning: boolean;
}

export async function down(
  layout: StackLayout,
  opts: { log: (line: string) => void; graceMs?: number; cleanups?: Array<() => Promise<void>> },
): Promise<DownResult> {
  const info = readStackInfo(layout.paths.stackJson);
  const owner = info?.ownerPid ?? readPid(daemonPidFile(layout));
  const ownerAlive = owner !== undefined && pidAlive(owner);
  // Collect the tree before the owner goes: its children are reparented when it exits.
  const before = findStackProcesses(layout.stateDir, ownerAlive ? owner : undefined);
  if (ownerAlive && owner !== undefined) {
    process.kill(owner, 'SIGTERM');
    const deadline = Date.now() + (opts.graceMs ?? 45000);
    while (pidAlive(owner) && Date.now() < deadline) await sleep(100);
  }
  const killed: DownResult['killed'] = [];
  const recorded = Object.values(info?.pids ?? {});
  for (let round = 0; round < 50; round++) {
    const alive = new Map(findStackProcesses(layout.stateDir, undefined).map((p) => [p.pid, p.command]));
    for (const p of before) if (pidAlive(p.pid)) alive.set(p.pid, p.command);
    for (const pid of recorded) if (pidAlive(pid) && !alive.has(pid)) alive.set(pid, '(recorded server)');
    if (alive.size === 0) break;
    for (const [pid, command] of alive) {
      try {
        process.kill(pid, 'SIGKILL');
        if (!killed.some((k) => k.pid === pid)) killed.push({ pid, command });
      } catch {
        // already gone
      }
    }
    await sleep(100);
  }
  for (const cleanup of opts.cleanups ?? []) await cleanup();
  for (const f of [layout.paths.stackJson, layout.paths.envSh, daemonPidFile(layout)])
    rmSync(f, { force: true });
  return { killed, wasRunning: ownerAlive || before.length > 0 };
}

function readPid(file: string): number | undefined {
  if (!existsSync(file)) return undefined;
  const n = Number(readFileSync(file, 'utf8').trim());
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
