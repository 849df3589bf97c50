// Keeps one stack process running the way a Deployment keeps its Pod: a process that exits on its own is started
// again after a back-off, until the stack stops it. The operator runs this way, so killing it (a crash, or a test
// that kills it mid-operation) is followed by a restart, and Temporal resumes its workflows.
import type { ManagedProcess } from './managed-process';

/** Crash-loop back-off: 1 s, 2 s, 4 s ... capped at 30 s. */
export function restartDelayMs(consecutiveExits: number): number {
  if (consecutiveExits <= 0) return 0;
  return Math.min(1000 * 2 ** (consecutiveExits - 1), 30000);
}

/**
 * A process that ran at least this long before exiting starts the back-off again from the beginning. The back-off is
 * there for a process that dies as it starts (a broken build, a bad flag), which dies within a second or two again and
 * again: that one still waits 1, 2, 4 ... 30 s. The operator is up and polling Temporal within about 2 s, so one that
 * ran 5 s and was then killed (a crash in the middle of its work, or a test that kills it at each step of an
 * operation) is not crash-looping and is started again after 1 s. With a minute here, test/faults/operator-kill-steps
 * spent about four of its six minutes waiting out restart delays of up to 30 s that none of its checks is about.
 */
export const STABLE_RUN_MS = 5000;

export interface SupervisedProcess {
  current(): ManagedProcess;
  stop(graceMs?: number): Promise<void>;
}

export interface SuperviseHooks {
  /** Called for every restart, with the new process, how the old one ended, and the delay taken. */
  onRestart(next: ManagedProcess, previousExit: string, delayMs: number): void;
  now?: () => number;
}

export function supervise(start: () => ManagedProcess, hooks: SuperviseHooks): SupervisedProcess {
  const now = hooks.now ?? Date.now;
  let stopping = false;
  let consecutiveExits = 0;
  let proc = start();
  let startedAt = now();
  let timer: NodeJS.Timeout | undefined;

  const watch = (p: ManagedProcess) => {
    void p.exited.then(() => {
      if (stopping) return;
      consecutiveExits = now() - startedAt >= STABLE_RUN_MS ? 1 : consecutiveExits + 1;
      const delay = restartDelayMs(consecutiveExits);
      timer = setTimeout(() => {
        timer = undefined;
        if (stopping) return;
        proc = start();
        startedAt = now();
        hooks.onRestart(proc, p.exitStatus() ?? 'exited', delay);
        watch(proc);
      }, delay);
    });
  };
  watch(proc);

  return {
    current: () => proc,
    async stop(graceMs) {
      stopping = true;
      if (timer) clearTimeout(timer);
      await proc.stop(graceMs);
    },
  };
}
