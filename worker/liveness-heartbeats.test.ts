import type { Context } from '@temporalio/activity';
import type { ActivityExecuteInput } from '@temporalio/worker';
import { livenessBeatEveryMs, livenessHeartbeats } from './liveness-heartbeats';

describe('livenessBeatEveryMs', () => {
  const cases: Array<[string, number | undefined, number | undefined]> = [
    ['no heartbeat timeout: nobody would notice, no beats', undefined, undefined],
    ['a zero timeout is none', 0, undefined],
    ['5 s: a fifth, every second', 5000, 1000],
    ['10 s: every 2 s', 10_000, 2000],
    ['30 s: capped at every 3 s', 30_000, 3000],
    ['500 ms: never faster than every 200 ms', 500, 200],
  ];
  test.each(cases)('%s', (_what, timeoutMs, want) => {
    expect(livenessBeatEveryMs(timeoutMs)).toBe(want);
  });
});

describe('livenessHeartbeats', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  function run(heartbeatTimeoutMs: number | undefined, work: Promise<unknown>) {
    const beats = { count: 0 };
    const ctx = {
      info: heartbeatTimeoutMs === undefined ? {} : { heartbeatTimeoutMs },
      heartbeat: () => void beats.count++,
    } as unknown as Context;
    const inbound = livenessHeartbeats(ctx).inbound!;
    const result = inbound.execute!({ args: [] } as unknown as ActivityExecuteInput, () => work);
    return { beats, result };
  }

  test('beats every fifth of the timeout while the call runs, and stops when it returns', async () => {
    let finish!: (v: string) => void;
    const { beats, result } = run(5000, new Promise<string>((r) => (finish = r)));
    await jest.advanceTimersByTimeAsync(999);
    expect(beats.count).toBe(0); // a call shorter than a beat costs nothing
    await jest.advanceTimersByTimeAsync(6001);
    expect(beats.count).toBe(7);
    finish('done');
    await expect(result).resolves.toBe('done');
    await jest.advanceTimersByTimeAsync(10_000);
    expect(beats.count).toBe(7);
  });

  test('stops beating when the call throws, and the error passes through', async () => {
    let fail!: (e: Error) => void;
    const { beats, result } = run(5000, new Promise((_r, j) => (fail = j)));
    await jest.advanceTimersByTimeAsync(2000);
    fail(new Error('etcd said no'));
    await expect(result).rejects.toThrow('etcd said no');
    const after = beats.count;
    await jest.advanceTimersByTimeAsync(10_000);
    expect(beats.count).toBe(after);
  });

  test('an activity without a heartbeat timeout is never beaten for', async () => {
    let finish!: (v: string) => void;
    const { beats, result } = run(undefined, new Promise<string>((r) => (finish = r)));
    await jest.advanceTimersByTimeAsync(60_000);
    finish('done');
    await expect(result).resolves.toBe('done');
    expect(beats.count).toBe(0);
  });
});
