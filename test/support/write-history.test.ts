import type { StoredKey, WriteRecord } from './write-history';
import {
  checkMemberCopy,
  highestAcknowledgedRevision,
  longestGap,
  stalledWithin,
  writeFigures,
} from './write-history';

const ack = (key: string, endedAt: number, revision: number): WriteRecord => ({
  key,
  value: `v-${key}`,
  startedAt: endedAt - 5,
  endedAt,
  ok: true,
  revision,
});
const failed = (key: string, endedAt: number): WriteRecord => ({
  key,
  value: `v-${key}`,
  startedAt: endedAt - 1000,
  endedAt,
  ok: false,
  error: 'deadline exceeded',
});

describe('longestGap', () => {
  test.each([
    {
      case: 'acknowledgements every 50 ms give a 50 ms gap',
      acks: [1050, 1100, 1150],
      start: 1000,
      stop: 1200,
      want: { ms: 50, from: 1000, to: 1050, wallMs: 50, stalledMs: 0 },
    },
    {
      case: 'an outage between two acknowledgements is the gap',
      acks: [1050, 1100, 4100, 4150],
      start: 1000,
      stop: 4200,
      want: { ms: 3000, from: 1100, to: 4100, wallMs: 3000, stalledMs: 0 },
    },
    {
      case: 'no acknowledgement after some moment counts up to the stop',
      acks: [1050, 1100],
      start: 1000,
      stop: 3100,
      want: { ms: 2000, from: 1100, to: 3100, wallMs: 2000, stalledMs: 0 },
    },
    {
      case: 'a slow first acknowledgement counts from the start',
      acks: [2500, 2550],
      start: 1000,
      stop: 2600,
      want: { ms: 1500, from: 1000, to: 2500, wallMs: 1500, stalledMs: 0 },
    },
    {
      case: 'no acknowledgement at all is one gap over the whole run',
      acks: [],
      start: 1000,
      stop: 9000,
      want: { ms: 8000, from: 1000, to: 9000, wallMs: 8000, stalledMs: 0 },
    },
    {
      case: 'acknowledgements out of order are sorted first',
      acks: [1150, 1050, 1100],
      start: 1000,
      stop: 1160,
      want: { ms: 50, from: 1000, to: 1050, wallMs: 50, stalledMs: 0 },
    },
  ])('$case', ({ acks, start, stop, want }) => {
    expect(longestGap(acks, start, stop)).toEqual(want);
  });

  test.each([
    {
      case: "the writer's own stall inside a gap is not the cluster's",
      acks: [1050, 1100, 3400, 3450],
      stop: 3450,
      stalls: [{ from: 1150, to: 3350 }],
      want: { ms: 100, from: 1100, to: 3400, wallMs: 2300, stalledMs: 2200 },
    },
    {
      case: 'an outage beside a stall still counts in full',
      acks: [1050, 1100, 5100, 5150],
      stop: 5150,
      stalls: [{ from: 1200, to: 1700 }],
      want: { ms: 3500, from: 1100, to: 5100, wallMs: 4000, stalledMs: 500 },
    },
    {
      case: 'a stall elsewhere changes nothing; the longest counted gap wins',
      acks: [1050, 1900, 1950, 2000],
      stop: 2000,
      stalls: [{ from: 1960, to: 1990 }],
      want: { ms: 850, from: 1050, to: 1900, wallMs: 850, stalledMs: 0 },
    },
    {
      case: 'a stall across an acknowledgement is split between the two gaps',
      acks: [1050, 2000, 2100],
      stop: 2100,
      stalls: [{ from: 1900, to: 2050 }],
      want: { ms: 850, from: 1050, to: 2000, wallMs: 950, stalledMs: 100 },
    },
  ])('$case', ({ acks, stop, stalls, want }) => {
    expect(longestGap(acks, 1000, stop, stalls)).toEqual(want);
  });
});

describe('stalledWithin', () => {
  test.each([
    { case: 'inside', stalls: [{ from: 10, to: 20 }], from: 0, to: 100, want: 10 },
    { case: 'clipped at both ends', stalls: [{ from: 0, to: 200 }], from: 50, to: 100, want: 50 },
    { case: 'outside', stalls: [{ from: 200, to: 300 }], from: 0, to: 100, want: 0 },
    {
      case: 'several added up',
      stalls: [
        { from: 10, to: 20 },
        { from: 90, to: 120 },
      ],
      from: 0,
      to: 100,
      want: 20,
    },
  ])('$case', ({ stalls, from, to, want }) => {
    expect(stalledWithin(stalls, from, to)).toBe(want);
  });
});

describe('writeFigures', () => {
  test('counts acknowledged and failed writes, the gap over acknowledgements only, and the rate', () => {
    const records = [ack('a', 1100, 5), failed('b', 2100), failed('c', 3100), ack('d', 3150, 6)];
    expect(writeFigures(records, 1000, 3200)).toEqual({
      acknowledged: 2,
      failed: 2,
      longestGap: { ms: 2050, from: 1100, to: 3150, wallMs: 2050, stalledMs: 0 },
      rate: 0.9,
      stalls: 0,
      longestStallMs: 0,
    });
  });
});

describe('checkMemberCopy', () => {
  const stored = (entries: [string, string, number][]) =>
    new Map<string, StoredKey>(entries.map(([k, value, modRevision]) => [k, { value, modRevision }]));

  test.each([
    {
      case: 'a member holding every acknowledged write with its value and revision passes',
      records: [ack('k1', 1, 10), ack('k2', 2, 11)],
      held: stored([
        ['k1', 'v-k1', 10],
        ['k2', 'v-k2', 11],
      ]),
      want: { lost: [], changed: [], unexpected: [], recovered: 0 },
    },
    {
      case: 'an acknowledged write the member lacks is lost',
      records: [ack('k1', 1, 10), ack('k2', 2, 11)],
      held: stored([['k1', 'v-k1', 10]]),
      want: { lost: ['k2'], changed: [], unexpected: [], recovered: 0 },
    },
    {
      case: 'another value is a changed key',
      records: [ack('k1', 1, 10)],
      held: stored([['k1', 'other', 10]]),
      want: { lost: [], changed: ['k1'], unexpected: [], recovered: 0 },
    },
    {
      case: 'another mod_revision is a changed key (history rewritten, as a wrong restore would)',
      records: [ack('k1', 1, 10)],
      held: stored([['k1', 'v-k1', 12]]),
      want: { lost: [], changed: ['k1'], unexpected: [], recovered: 0 },
    },
    {
      case: 'a failed write that was applied anyway is recovered, not an error',
      records: [ack('k1', 1, 10), failed('k2', 2)],
      held: stored([
        ['k1', 'v-k1', 10],
        ['k2', 'v-k2', 11],
      ]),
      want: { lost: [], changed: [], unexpected: [], recovered: 1 },
    },
    {
      case: 'a failed write that never applied is neither lost nor recovered',
      records: [failed('k1', 1)],
      held: stored([]),
      want: { lost: [], changed: [], unexpected: [], recovered: 0 },
    },
    {
      case: 'a key the writer never tried is unexpected',
      records: [ack('k1', 1, 10)],
      held: stored([
        ['k1', 'v-k1', 10],
        ['zz', 'x', 13],
      ]),
      want: { lost: [], changed: [], unexpected: ['zz'], recovered: 0 },
    },
  ])('$case', ({ records, held, want }) => {
    expect(checkMemberCopy(records, held)).toEqual(want);
  });
});

describe('highestAcknowledgedRevision', () => {
  test('is the highest revision among acknowledged writes, 0 without any', () => {
    expect(
      highestAcknowledgedRevision([ack('a', 1, 7), failed('b', 2), ack('c', 3, 9), ack('d', 4, 8)]),
    ).toBe(9);
    expect(highestAcknowledgedRevision([failed('b', 2)])).toBe(0);
  });
});
