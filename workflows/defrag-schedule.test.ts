// Table tests of the defrag cron: parsing, next firing in UTC, and the CRD rule using the very same pattern.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { CRON_MACROS, defragScheduleSpec } from '../contracts/defrag-schedule';
import {
  CRON_PATTERN,
  advanceSchedule,
  idleWaitMs,
  nextFiring,
  parseCron,
  scheduleDue,
} from './defrag-schedule';

const next = (schedule: string, after: string) => {
  const cron = parseCron(schedule);
  if ('error' in cron) throw new Error(cron.error);
  return nextFiring(cron, after);
};

describe('nextFiring', () => {
  test.each([
    ['0 3 * * *', '2026-11-21T02:59:00.000Z', '2026-11-21T03:00:00.000Z'],
    ['0 3 * * *', '2026-11-21T03:00:00.000Z', '2026-11-22T03:00:00.000Z'],
    ['0 3 * * *', '2026-11-21T03:00:30.500Z', '2026-11-22T03:00:00.000Z'],
    ['*/15 * * * *', '2026-11-21T10:07:00.000Z', '2026-11-21T10:15:00.000Z'],
    ['30 1 1 * *', '2026-11-21T00:00:00.000Z', '2026-12-01T01:30:00.000Z'],
    ['0 0 * * 0', '2026-11-21T12:00:00.000Z', '2026-11-22T00:00:00.000Z'], // 2026-11-22 is a Sunday
    ['0 0 * * 7', '2026-11-21T12:00:00.000Z', '2026-11-22T00:00:00.000Z'], // 7 is Sunday too
    ['0 0 1 * 1', '2026-11-21T12:00:00.000Z', '2026-11-23T00:00:00.000Z'], // day-of-month OR day-of-week
    ['0 12 29 2 *', '2026-03-01T00:00:00.000Z', '2028-02-29T12:00:00.000Z'],
    ['0 9-17/4 * * 1-5', '2026-11-20T17:30:00.000Z', '2026-11-23T09:00:00.000Z'],
    ['5,35 * * * *', '2026-11-21T10:06:00.000Z', '2026-11-21T10:35:00.000Z'],
    ['@daily', '2026-11-21T10:00:00.000Z', '2026-11-22T00:00:00.000Z'],
    ['@hourly', '2026-11-21T10:00:00.000Z', '2026-11-21T11:00:00.000Z'],
    ['0 0 31 2 *', '2026-11-21T10:00:00.000Z', undefined],
  ])('"%s" after %s fires at %s', (schedule, after, expected) => {
    expect(next(schedule, after)).toBe(expected);
  });
});

describe('parseCron', () => {
  test.each([
    ['61 * * * *', 'not a five-field cron'],
    ['* * * *', 'not a five-field cron'],
    ['0 24 * * *', 'not a five-field cron'],
    ['*/0 * * * *', 'not a five-field cron'],
    ['@reboot', 'not a five-field cron'],
    ['30-10 * * * *', 'start is after its end'],
  ])('refuses "%s" (%s)', (schedule, why) => {
    const cron = parseCron(schedule);
    expect('error' in cron && cron.error).toContain(why);
  });
});

describe('the schedule state the cluster workflow keeps', () => {
  const now = '2026-11-21T03:10:00.000Z';

  test("a new schedule counts from now: added after today's firing, it waits for tomorrow's", () => {
    const s = advanceSchedule(undefined, '0 3 * * *', now);
    expect(s).toEqual({ schedule: '0 3 * * *', next: '2026-11-22T03:00:00.000Z' });
    expect(scheduleDue(s, now)).toBe(false);
    expect(scheduleDue(s, '2026-11-22T03:00:00.000Z')).toBe(true);
  });

  test('an unchanged schedule keeps its due firing until a Defrag serves it, then moves on', () => {
    const s = { schedule: '0 3 * * *', next: '2026-11-21T03:00:00.000Z' };
    expect(advanceSchedule(s, '0 3 * * *', now)).toBe(s);
    expect(advanceSchedule(s, '0 3 * * *', now, true)?.next).toBe('2026-11-22T03:00:00.000Z');
  });

  test('a changed schedule is counted again; a removed one is forgotten', () => {
    const s = { schedule: '0 3 * * *', next: '2026-11-22T03:00:00.000Z' };
    expect(advanceSchedule(s, '0 4 * * *', now)?.next).toBe('2026-11-21T04:00:00.000Z');
    expect(advanceSchedule(s, undefined, now)).toBeUndefined();
  });

  test.each<[string, { schedule: string; next?: string } | undefined, number]>([
    ['no schedule sleeps the drift interval', undefined, 600_000],
    [
      'a firing in 5 minutes wakes the cluster then',
      { schedule: 'x', next: '2026-11-21T03:15:00.000Z' },
      300_000,
    ],
    [
      'a firing after the drift interval does not shorten it',
      { schedule: 'x', next: '2026-11-22T03:00:00.000Z' },
      600_000,
    ],
    ['a schedule that never fires sleeps the drift interval', { schedule: 'x' }, 600_000],
    [
      'an overdue firing still waits a second, never zero',
      { schedule: 'x', next: '2026-11-21T03:00:00.000Z' },
      1000,
    ],
  ])('%s', (_name, state, ms) => {
    expect(idleWaitMs(state, now, 600_000)).toBe(ms);
  });
});

describe('the CRD rule', () => {
  test('spec.maintenance.defrag.schedule is checked with exactly CRON_PATTERN', () => {
    const crd = parse(readFileSync(join(__dirname, '..', 'crds', 'etcdcluster.yaml'), 'utf8'));
    const schedule =
      crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.maintenance.properties.defrag
        .properties.schedule;
    expect(schedule['x-kubernetes-validations'][0].rule).toBe(`self.matches('${CRON_PATTERN}')`);
  });
});

describe('the macros Temporal gets as five fields (contracts/defrag-schedule.ts)', () => {
  test.each(Object.entries(CRON_MACROS))('%s -> %s, which the CRD would accept too', (macro, cron) => {
    expect(macro).toMatch(new RegExp(CRON_PATTERN));
    expect(cron).toMatch(new RegExp(CRON_PATTERN));
    expect(defragScheduleSpec(macro).cronExpressions).toEqual([cron]);
  });
});
