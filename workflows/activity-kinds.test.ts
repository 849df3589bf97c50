import { msToNumber } from '@temporalio/common/lib/time';
import { ActivityKinds } from './activity-kinds';
import { livenessBeatEveryMs, MAX_HEARTBEAT_THROTTLE_MS } from '../worker/liveness-heartbeats';

type Kind = keyof typeof ActivityKinds;

/** Each kind's timeouts and the reason for them; a changed value must change this table and its reason. */
const table: Array<[Kind, { startToCloseMs: number; heartbeatMs: number | undefined }, string]> = [
  ['operationStep', { startToCloseMs: 30_000, heartbeatMs: 5000 }, 'a killed worker is retried within 5 s'],
  ['entityCall', { startToCloseMs: 30_000, heartbeatMs: 5000 }, 'a killed worker is retried within 5 s'],
  [
    'entityCallBounded',
    { startToCloseMs: 30_000, heartbeatMs: 5000 },
    'a killed worker is retried within 5 s',
  ],
  ['waitingPoll', { startToCloseMs: 30_000, heartbeatMs: 5000 }, 'a killed worker is retried within 5 s'],
  [
    'longStep',
    { startToCloseMs: 360_000, heartbeatMs: undefined },
    "etcd's 5 min call deadline ends it first",
  ],
  [
    'longStepWithHeartbeat',
    { startToCloseMs: 360_000, heartbeatMs: 30_000 },
    'defrag blocks; 30 s of silence',
  ],
];

describe('ActivityKinds', () => {
  test('the table names every kind', () => {
    expect(table.map(([k]) => k).sort()).toEqual(Object.keys(ActivityKinds).sort());
  });

  test.each(table)('%s: %j (%s)', (kind, want) => {
    const options = ActivityKinds[kind] as { startToCloseTimeout: string; heartbeatTimeout?: string };
    expect(msToNumber(options.startToCloseTimeout)).toBe(want.startToCloseMs);
    const heartbeatMs =
      options.heartbeatTimeout === undefined ? undefined : msToNumber(options.heartbeatTimeout);
    expect(heartbeatMs).toBe(want.heartbeatMs);
  });

  test.each(table.filter(([, want]) => want.heartbeatMs !== undefined))(
    '%s: the worker beats and sends at least four times per heartbeat timeout',
    (_kind, want) => {
      const every = livenessBeatEveryMs(want.heartbeatMs)!;
      expect(Math.max(every, MAX_HEARTBEAT_THROTTLE_MS) * 4).toBeLessThanOrEqual(want.heartbeatMs!);
    },
  );

  /** Kinds whose caller reports a failure and goes on: a bounded number of attempts. Every other kind retries on. */
  const bounded: Partial<Record<Kind, number>> = { entityCallBounded: 5 };

  test.each(table)(
    '%s: retries (without a limit unless its caller reports failures), and backs off',
    (kind) => {
      const retry = ActivityKinds[kind].retry as { maximumAttempts?: number; backoffCoefficient: number };
      expect(retry.maximumAttempts).toBe(bounded[kind]);
      expect(retry.backoffCoefficient).toBeGreaterThan(1);
    },
  );
});
