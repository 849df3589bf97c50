// Table tests of the defrag decisions: when a Defrag starts, over which members, and in which order.
import type { DefragConfig, DefragMemberView } from './defrag-plan';
import {
  defragConfigOf,
  defragTrigger,
  fragmentationPercent,
  noSpaceMessage,
  planDefragMember,
  quantityBytes,
  quotaBytesOf,
  THRESHOLD_DEFRAG_COOLDOWN_MS,
  thresholdCoolingDown,
} from './defrag-plan';

const MIB = 1024 * 1024;

const member = (ordinal: number, more: Partial<DefragMemberView> = {}): DefragMemberView => ({
  id: String(100 + ordinal),
  name: `main-${ordinal}`,
  ordinal,
  isLearner: false,
  healthy: true,
  ready: true,
  raftIndex: '500',
  ...more,
});

const config = (more: Partial<DefragConfig> = {}): DefragConfig => ({
  minDbSizeBytes: 100 * MIB,
  scheduleDue: false,
  quotaBytes: 2048 * MIB,
  ...more,
});

describe('defragTrigger', () => {
  const sized = (ordinal: number, dbMiB: number, inUseMiB: number) =>
    member(ordinal, { dbSize: dbMiB * MIB, dbSizeInUse: inUseMiB * MIB });

  test.each<
    [string, Parameters<typeof defragTrigger>[0], { trigger: string; members: string[] } | undefined]
  >([
    [
      'a NOSPACE alarm defragments every member, with or without spec.maintenance',
      {
        members: [sized(1, 10, 9), sized(0, 10, 9)],
        alarms: [{ memberId: '101', alarm: 'NOSPACE' }],
        config: undefined,
      },
      { trigger: 'NoSpace', members: ['main-0', 'main-1'] },
    ],
    [
      "a CORRUPT alarm is not the defragmenter's business",
      { members: [sized(0, 10, 9)], alarms: [{ memberId: '100', alarm: 'CORRUPT' }], config: config() },
      undefined,
    ],
    [
      'a due schedule defragments every member, fragmented or not',
      { members: [sized(0, 10, 10), sized(1, 10, 10)], alarms: [], config: config({ scheduleDue: true }) },
      { trigger: 'Schedule', members: ['main-0', 'main-1'] },
    ],
    [
      'the threshold picks only the members over it',
      {
        members: [sized(0, 200, 50), sized(1, 200, 190), sized(2, 300, 100)],
        alarms: [],
        config: config({ thresholdPercent: 50 }),
      },
      { trigger: 'Threshold', members: ['main-0', 'main-2'] },
    ],
    [
      'a database below minDbSize is left alone however fragmented',
      { members: [sized(0, 50, 1)], alarms: [], config: config({ thresholdPercent: 10 }) },
      undefined,
    ],
    [
      'exactly at the threshold is not over it',
      { members: [sized(0, 200, 100)], alarms: [], config: config({ thresholdPercent: 50 }) },
      undefined,
    ],
    [
      'without a threshold, sizes alone start nothing',
      { members: [sized(0, 2000, 1)], alarms: [], config: config() },
      undefined,
    ],
    [
      'a member that reported no sizes is never over the threshold',
      { members: [member(0)], alarms: [], config: config({ thresholdPercent: 1, minDbSizeBytes: 0 }) },
      undefined,
    ],
  ])('%s', (_name, input, expected) => {
    const step = defragTrigger(input);
    expect(step && { trigger: step.trigger, members: step.members }).toEqual(expected);
  });

  test('NOSPACE wins over a due schedule and the threshold, and names the member that raised it', () => {
    const step = defragTrigger({
      members: [sized(0, 200, 10), sized(1, 200, 10)],
      alarms: [{ memberId: '101', alarm: 'NOSPACE' }],
      config: config({ scheduleDue: true, thresholdPercent: 10 }),
    });
    expect(step?.trigger).toBe('NoSpace');
    expect(step?.message).toContain('main-1');
  });
});

describe('the threshold cooldown', () => {
  const sized = (ordinal: number, dbMiB: number, inUseMiB: number) =>
    member(ordinal, { dbSize: dbMiB * MIB, dbSizeInUse: inUseMiB * MIB });
  const ended = '2026-11-21T03:00:00.000Z';
  const after = (minutes: number) => new Date(Date.parse(ended) + minutes * 60_000).toISOString();
  const fragmented = [sized(0, 200, 20), sized(1, 200, 20)];

  test('lasts an hour', () => {
    expect(THRESHOLD_DEFRAG_COOLDOWN_MS).toBe(60 * 60_000);
  });

  test.each<[string, { lastDefragAt: string; now: string } | undefined, boolean]>([
    ['no Defrag remembered holds nothing back', undefined, false],
    [
      'a Defrag that ended a minute ago holds the threshold back',
      { lastDefragAt: ended, now: after(1) },
      true,
    ],
    ['59 minutes later it still does', { lastDefragAt: ended, now: after(59) }, true],
    ['an hour later it no longer does', { lastDefragAt: ended, now: after(60) }, false],
    ['an unreadable time holds nothing back', { lastDefragAt: 'yesterday', now: after(1) }, false],
  ])('%s', (_name, cooldown, cooling) => {
    expect(thresholdCoolingDown(cooldown)).toBe(cooling);
  });

  test.each<[string, Parameters<typeof defragTrigger>[0], string | undefined]>([
    [
      'fragmentation that came back within the hour starts no second threshold Defrag',
      {
        members: fragmented,
        alarms: [],
        config: config({ thresholdPercent: 50, cooldown: { lastDefragAt: ended, now: after(10) } }),
      },
      undefined,
    ],
    [
      'after the hour the threshold applies again',
      {
        members: fragmented,
        alarms: [],
        config: config({ thresholdPercent: 50, cooldown: { lastDefragAt: ended, now: after(61) } }),
      },
      'Threshold',
    ],
    [
      'a due schedule is not subject to the cooldown',
      {
        members: fragmented,
        alarms: [],
        config: config({
          thresholdPercent: 50,
          scheduleDue: true,
          cooldown: { lastDefragAt: ended, now: after(1) },
        }),
      },
      'Schedule',
    ],
    [
      'a NOSPACE alarm is not subject to the cooldown',
      {
        members: fragmented,
        alarms: [{ memberId: '100', alarm: 'NOSPACE' }],
        config: config({ thresholdPercent: 50, cooldown: { lastDefragAt: ended, now: after(1) } }),
      },
      'NoSpace',
    ],
  ])('%s', (_name, input, trigger) => {
    expect(defragTrigger(input)?.trigger).toBe(trigger);
  });
});

describe('planDefragMember', () => {
  const three = [member(0), member(1, { raftIndex: '499' }), member(2)];

  test.each<[string, Parameters<typeof planDefragMember>[0], ReturnType<typeof planDefragMember>]>([
    [
      'followers go first, lowest ordinal first, the leader stays for last',
      { members: three, leaderId: '100', pending: ['main-0', 'main-1', 'main-2'] },
      { kind: 'DefragmentMember', member: 'main-1', id: '101' },
    ],
    [
      'once only the leader is left, leadership moves to the most caught-up voter',
      { members: three, leaderId: '100', pending: ['main-0'] },
      { kind: 'MoveLeader', from: { name: 'main-0', id: '100' }, to: { name: 'main-2', id: '102' } },
    ],
    [
      'after the move the former leader is a follower and is defragmented',
      { members: three, leaderId: '102', pending: ['main-0'] },
      { kind: 'DefragmentMember', member: 'main-0', id: '100' },
    ],
    [
      'a single member has nowhere to hand leadership and is defragmented as leader',
      { members: [member(0)], leaderId: '100', pending: ['main-0'] },
      { kind: 'DefragmentMember', member: 'main-0', id: '100' },
    ],
    [
      'leadership never moves to a learner',
      {
        members: [member(0), member(1, { isLearner: true, ready: false })],
        leaderId: '100',
        pending: ['main-0'],
      },
      { kind: 'DefragmentMember', member: 'main-0', id: '100' },
    ],
    ['nothing pending is done', { members: three, leaderId: '100', pending: [] }, { kind: 'Done' }],
    [
      'a pending name etcd no longer lists is done',
      { members: three, leaderId: '100', pending: ['main-7'] },
      { kind: 'Done' },
    ],
  ])('%s', (_name, input, expected) => {
    expect(planDefragMember(input)).toEqual(expected);
  });

  test.each([
    ['a member that does not answer', member(2, { healthy: false })],
    ['a voter whose Pod is not Ready', member(2, { ready: false })],
  ])('%s holds every defragmentation back (blocking another could cost quorum)', (_name, sick) => {
    const d = planDefragMember({
      members: [member(0), member(1), sick],
      leaderId: '100',
      pending: ['main-1'],
    });
    expect(d).toMatchObject({ kind: 'Wait', reason: 'MemberNotReady' });
    expect(d.kind === 'Wait' && d.message).toContain('main-2');
  });

  test('a learner that is not Ready (as learners never are) holds nothing back', () => {
    const d = planDefragMember({
      members: [member(0), member(1), member(2, { isLearner: true, ready: false })],
      leaderId: '100',
      pending: ['main-2'],
    });
    expect(d).toEqual({ kind: 'DefragmentMember', member: 'main-2', id: '102' });
  });
});

describe('sizes and quotas', () => {
  test.each<[string | number, number | undefined]>([
    ['100Mi', 100 * MIB],
    ['1Gi', 1024 * MIB],
    ['1.5Mi', 1.5 * MIB],
    ['5000000', 5_000_000],
    [5_000_000, 5_000_000],
    ['2G', 2e9],
    ['10k', 10_000],
    ['100MB', undefined],
    ['-1', undefined],
  ])('the quantity %s is %s bytes', (q, bytes) => {
    expect(quantityBytes(q)).toBe(bytes);
  });

  test.each<[Record<string, string> | undefined, number]>([
    [undefined, 2 * 1024 * MIB],
    [{ 'quota-backend-bytes': '16777216' }, 16 * MIB],
    [{ 'quota-backend-bytes': '0' }, 2 * 1024 * MIB],
    [{ 'quota-backend-bytes': 'lots' }, 2 * 1024 * MIB],
  ])('options %j run with quota %s', (options, quota) => {
    expect(quotaBytesOf(options)).toBe(quota);
  });

  test.each<[number | undefined, number | undefined, number]>([
    [100, 25, 75],
    [100, 100, 0],
    [0, 0, 0],
    [undefined, 5, 0],
  ])('dbSize %s with %s in use is %s%% free', (dbSize, inUse, percent) => {
    expect(
      fragmentationPercent({
        ...(dbSize !== undefined ? { dbSize } : {}),
        ...(inUse !== undefined ? { dbSizeInUse: inUse } : {}),
      }),
    ).toBe(percent);
  });

  test('the spec gives the planner its threshold, minimum size (default 100Mi) and quota', () => {
    expect(defragConfigOf({})).toEqual({
      minDbSizeBytes: 100 * MIB,
      scheduleDue: false,
      quotaBytes: 2048 * MIB,
    });
    expect(
      defragConfigOf(
        {
          options: { 'quota-backend-bytes': '16777216' },
          maintenance: { defrag: { thresholdPercent: 30, minDbSize: '1Mi' } },
        },
        true,
      ),
    ).toEqual({ thresholdPercent: 30, minDbSizeBytes: MIB, scheduleDue: true, quotaBytes: 16 * MIB });
  });

  test('the NOSPACE message names the member and the quota, and what clears it', () => {
    const text = noSpaceMessage([{ memberId: '101', alarm: 'NOSPACE' }], [member(0), member(1)], 16 * MIB);
    expect(text).toContain('main-1');
    expect(text).toContain('16777216');
    expect(text).toMatch(/compacted, defragmented every member and disarmed/);
  });
});
