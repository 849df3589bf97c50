// DEPRECATED PATH: runs started before patch 'defrag-on-temporal-schedule' judge the schedule here until they continue
// as new (and replaying their histories needs it); new runs keep a Temporal Schedule instead
// (contracts/defrag-schedule.ts, workflows/defrag-due-workflow.ts). CRON_PATTERN stays in use: the CRD's CEL rule.
//
// Parses spec.maintenance.defrag.schedule (five-field cron in UTC) and finds its next firing time: what the cluster workflow's idle timer waits for.
//
// Pure and sandbox-safe: the time comes in as a parameter. The cluster workflow sleeps until the next firing
// (or its 10-minute drift check, whichever is first), so a schedule adds one wake-up per firing and no
// per-minute timers to an idle cluster.
import { CRON_MACROS } from '../contracts/defrag-schedule';

// One field: `*`, a value or a range, each optionally with a /step, comma-separated. Value bounds per field
// are in the pattern (no backslashes: it goes into a CEL string literal as is) so the apiserver refuses "61 * * * *" with a message (crds/etcdcluster.yaml uses
// CRON_PATTERN verbatim; defrag-schedule.test.ts proves it).
const fieldPattern = (value: string) =>
  `([*]|(${value})(-(${value}))?)(/[1-9][0-9]?)?(,([*]|(${value})(-(${value}))?)(/[1-9][0-9]?)?)*`;
const MINUTE = '[0-5]?[0-9]';
const HOUR = '[01]?[0-9]|2[0-3]';
const DAY_OF_MONTH = '0?[1-9]|[12][0-9]|3[01]';
const MONTH = '0?[1-9]|1[0-2]';
const DAY_OF_WEEK = '[0-7]';

/** The RE2/ECMAScript pattern a schedule must match; the CRD's CEL rule is `self.matches(<this>)`. */
export const CRON_PATTERN =
  `^(@(hourly|daily|midnight|weekly|monthly|yearly|annually)|` +
  [MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK].map((v) => `(${fieldPattern(v)})`).join(' ') +
  `)$`;

export interface Cron {
  minutes: Set<number>;
  hours: Set<number>;
  daysOfMonth: Set<number>;
  months: Set<number>;
  /** 0 = Sunday; 7 is folded into 0. */
  daysOfWeek: Set<number>;
  /** cron's rule: when both day fields are restricted, a day matching either fires. */
  domRestricted: boolean;
  dowRestricted: boolean;
}

function parseField(text: string, min: number, max: number): Set<number> | undefined {
  const out = new Set<number>();
  for (const part of text.split(',')) {
    const [range = '', stepText] = part.split('/');
    const step = stepText === undefined ? 1 : Number(stepText);
    let lo = min;
    let hi = max;
    if (range !== '*') {
      const [a = '', b] = range.split('-');
      lo = Number(a);
      hi = b === undefined ? (stepText === undefined ? lo : max) : Number(b);
    }
    if (!Number.isInteger(lo) || !Number.isInteger(hi) || !Number.isInteger(step) || step < 1)
      return undefined;
    if (lo < min || hi > max || lo > hi) return undefined;
    for (let v = lo; v <= hi; v += step) out.add(v);
  }
  return out;
}

/** The parsed schedule, or a message saying what is wrong with it. */
export function parseCron(schedule: string): Cron | { error: string } {
  const text = CRON_MACROS[schedule.trim()] ?? schedule.trim();
  if (!new RegExp(CRON_PATTERN).test(text)) {
    return { error: `"${schedule}" is not a five-field cron expression such as "0 3 * * *"` };
  }
  const [m = '', h = '', dom = '', mon = '', dow = ''] = text.split(/ +/);
  const minutes = parseField(m, 0, 59);
  const hours = parseField(h, 0, 23);
  const daysOfMonth = parseField(dom, 1, 31);
  const months = parseField(mon, 1, 12);
  const daysOfWeekRaw = parseField(dow, 0, 7);
  if (!minutes || !hours || !daysOfMonth || !months || !daysOfWeekRaw) {
    return { error: `"${schedule}" has a range whose start is after its end` };
  }
  const daysOfWeek = new Set([...daysOfWeekRaw].map((d) => d % 7));
  return {
    minutes,
    hours,
    daysOfMonth,
    months,
    daysOfWeek,
    domRestricted: !dom.startsWith('*'),
    dowRestricted: !dow.startsWith('*'),
  };
}

function dayMatches(cron: Cron, date: Date): boolean {
  const dom = cron.daysOfMonth.has(date.getUTCDate());
  const dow = cron.daysOfWeek.has(date.getUTCDay());
  if (cron.domRestricted && cron.dowRestricted) return dom || dow;
  return dom && dow;
}

const MINUTE_MS = 60_000;
// Five years covers every satisfiable schedule (Feb 29 included); an unsatisfiable one ("0 0 31 2 *") never fires.
const SEARCH_DAYS = 5 * 366;

/** The first firing strictly after `after` (RFC 3339 in, RFC 3339 out), or undefined when it never fires. */
export function nextFiring(cron: Cron, after: string): string | undefined {
  const start = new Date(Math.floor(Date.parse(after) / MINUTE_MS) * MINUTE_MS + MINUTE_MS);
  const day = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate()));
  for (let d = 0; d < SEARCH_DAYS; d++, day.setUTCDate(day.getUTCDate() + 1)) {
    if (!cron.months.has(day.getUTCMonth() + 1) || !dayMatches(cron, day)) continue;
    for (const hour of [...cron.hours].sort((a, b) => a - b)) {
      for (const minute of [...cron.minutes].sort((a, b) => a - b)) {
        const t = day.getTime() + hour * 3_600_000 + minute * MINUTE_MS;
        if (t >= start.getTime()) return new Date(t).toISOString();
      }
    }
  }
  return undefined;
}

/** What the cluster workflow remembers of spec.maintenance.defrag.schedule across observations and continue-as-new. */
export interface DefragScheduleState {
  schedule: string;
  /** The next firing (RFC 3339); absent when the schedule never fires or does not parse. */
  next?: string;
}

/**
 * The schedule state after an observation at `now`: a new or changed schedule starts counting from now (a
 * schedule added at 03:10 first fires at the next 03:00, not at once), and `fired` moves past a firing that
 * a Defrag operation has served. Without a schedule there is nothing to remember.
 */
export function advanceSchedule(
  state: DefragScheduleState | undefined,
  schedule: string | undefined,
  now: string,
  fired = false,
): DefragScheduleState | undefined {
  if (schedule === undefined) return undefined;
  if (state && state.schedule === schedule && !fired) return state;
  const cron = parseCron(schedule);
  const next = 'error' in cron ? undefined : nextFiring(cron, now);
  return { schedule, ...(next !== undefined ? { next } : {}) };
}

/** Whether the schedule's firing time has come. */
export function scheduleDue(state: DefragScheduleState | undefined, now: string): boolean {
  return state?.next !== undefined && Date.parse(state.next) <= Date.parse(now);
}

/** How long an idle cluster may sleep: its drift interval, or less when the schedule fires sooner. */
export function idleWaitMs(state: DefragScheduleState | undefined, now: string, driftMs: number): number {
  if (state?.next === undefined) return driftMs;
  return Math.max(1000, Math.min(driftMs, Date.parse(state.next) - Date.parse(now)));
}
