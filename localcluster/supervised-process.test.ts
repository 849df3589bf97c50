import type { ManagedProcess } from './managed-process';
import { restartDelayMs, STABLE_RUN_MS, supervise } from './supervised-process';

describe('restartDelayMs', () => {
  test.each([
    ['no exit yet means no delay', 0, 0],
    ['the first exit waits one second', 1, 1000],
    ['the second exit doubles it', 2, 2000],
    ['the fifth exit waits sixteen seconds', 5, 16000],
    ['a long crash loop is capped at thirty seconds', 12, 30000],
  ])('%s', (_name, exits, expected) => {
    expect(restartDelayMs(exits)).toBe(expected);
  });
});

/** A stand-in process whose exit the test controls. */
function fakeProcess(pid: number) {
  let exit: (status: string) => void = () => undefined;
  let status: string | undefined;
  const exited = new Promise<void>((resolve) => {
    exit = (s) => {
      status = s;
      resolve();
    };
  });
  const p: ManagedProcess = {
    name: 'operator',
    pid,
    logFile: '/dev/null',
    exitStatus: () => status,
    exited,
    stop: () => {
      exit('killed by SIGTERM');
      return Promise.resolve();
    },
  };
  return { p, exit };
}

describe('supervise', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  test('a process that exits on its own is started again after the back-off, and stop() ends it for good', async () => {
    const started: ReturnType<typeof fakeProcess>[] = [];
    const restarts: string[] = [];
    const s = supervise(
      () => {
        const f = fakeProcess(100 + started.length);
        started.push(f);
        return f.p;
      },
      { onRestart: (next, why, delay) => restarts.push(`${next.pid} after ${why} in ${delay}`) },
    );
    expect(s.current().pid).toBe(100);

    started[0]?.exit('killed by SIGKILL');
    await Promise.resolve();
    await jest.advanceTimersByTimeAsync(999);
    expect(started).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(started).toHaveLength(2);
    expect(s.current().pid).toBe(101);

    started[1]?.exit('exited with code 1');
    await jest.advanceTimersByTimeAsync(2000);
    expect(s.current().pid).toBe(102);
    expect(restarts).toEqual(['101 after killed by SIGKILL in 1000', '102 after exited with code 1 in 2000']);

    await s.stop();
    await jest.advanceTimersByTimeAsync(60000);
    expect(started).toHaveLength(3);
    expect(started[2]?.p.exitStatus()).toBe('killed by SIGTERM');
  });

  test('an exit pending restart is not restarted once stop() was called', async () => {
    const started: ReturnType<typeof fakeProcess>[] = [];
    const s = supervise(
      () => {
        const f = fakeProcess(200 + started.length);
        started.push(f);
        return f.p;
      },
      { onRestart: () => undefined },
    );
    started[0]?.exit('exited with code 1');
    await Promise.resolve();
    await s.stop();
    await jest.advanceTimersByTimeAsync(60000);
    expect(started).toHaveLength(1);
  });

  test('a process that ran STABLE_RUN_MS before it exited restarts after the first step; one that dies as it starts backs off', async () => {
    // The supervisor's clock is Date.now, which the fake timers move.
    const started: ReturnType<typeof fakeProcess>[] = [];
    const delays: number[] = [];
    const s = supervise(
      () => {
        const f = fakeProcess(300 + started.length);
        started.push(f);
        return f.p;
      },
      { onRestart: (_next, _why, delay) => delays.push(delay) },
    );
    /** The newest process runs `ranMs`, is killed, and is started again (time stops at the restart). */
    const exitAfter = async (ranMs: number) => {
      await jest.advanceTimersByTimeAsync(ranMs);
      const count = started.length;
      started.at(-1)?.exit('killed by SIGKILL');
      await Promise.resolve();
      for (let waited = 0; started.length === count && waited < 30000; waited += 100)
        await jest.advanceTimersByTimeAsync(100);
    };
    // Dying as it starts, three times: 1 s, 2 s, 4 s.
    await exitAfter(500);
    await exitAfter(500);
    await exitAfter(STABLE_RUN_MS - 100);
    // Killed after running STABLE_RUN_MS (a kill at a step of an operation), twice: 1 s each time.
    await exitAfter(STABLE_RUN_MS);
    await exitAfter(STABLE_RUN_MS + 20000);
    // Dying as it starts after that grows again from the first step.
    await exitAfter(100);
    expect(delays).toEqual([1000, 2000, 4000, 1000, 1000, 2000]);
    expect(started).toHaveLength(7);
    await s.stop();
  });
});
