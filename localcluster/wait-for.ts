// Polls a readiness check until it passes; fails fast with the server's log tail when the process it waits on has died.
import { logTail, type ManagedProcess } from './managed-process';

export interface WaitOptions {
  timeoutMs: number;
  intervalMs?: number;
  /** The process whose readiness is awaited: if it exits, waiting is pointless. */
  process?: ManagedProcess;
}

export async function waitFor(what: string, check: () => Promise<boolean>, opts: WaitOptions): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  let lastError = '';
  for (;;) {
    const status = opts.process?.exitStatus();
    if (status !== undefined && opts.process) {
      throw new Error(
        `${opts.process.name} ${status} before ${what}; last lines of ${opts.process.logFile}:\n${logTail(opts.process.logFile)}`,
      );
    }
    try {
      if (await check()) return;
    } catch (e) {
      lastError = e instanceof Error ? e.message : String(e);
    }
    if (Date.now() > deadline) {
      const tail = opts.process
        ? `\nlast lines of ${opts.process.logFile}:\n${logTail(opts.process.logFile)}`
        : '';
      throw new Error(
        `timed out after ${opts.timeoutMs / 1000}s waiting for ${what}${lastError ? ` (last error: ${lastError})` : ''}${tail}`,
      );
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 200));
  }
}
