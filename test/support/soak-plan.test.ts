import type { SoakAction, SoakPlanOptions } from './soak-plan';
import {
  CONTAINER_FAULTS,
  MAX_REPLICAS,
  NODE_FAULTS,
  convergeBoundMs,
  describeAction,
  nextSpec,
  seededRandom,
  soakPlan,
  voterFloor,
} from './soak-plan';

const options = (o: Partial<SoakPlanOptions> = {}): SoakPlanOptions => ({
  seed: 15,
  count: 200,
  startReplicas: 3,
  startVersion: '3.6.16',
  versions: { lower: '3.5.35', upper: '3.6.16' },
  faults: CONTAINER_FAULTS,
  canPause: true,
  ...o,
});

describe('seededRandom', () => {
  it('gives the same draws for the same seed and other draws for another', () => {
    const a = seededRandom(7);
    const b = seededRandom(7);
    const c = seededRandom(8);
    const draws = (r: () => number) => Array.from({ length: 5 }, r);
    const first = draws(a);
    expect(draws(b)).toEqual(first);
    expect(draws(c)).not.toEqual(first);
    expect(first.every((x) => x >= 0 && x < 1)).toBe(true);
  });
});

describe('soakPlan', () => {
  it('is the same sequence of actions for the same seed', () => {
    expect(soakPlan(options())).toEqual(soakPlan(options()));
    expect(soakPlan(options({ seed: 16 }))).not.toEqual(soakPlan(options()));
  });

  it('keeps every planned spec within replicas 0..7 and the two versions of the supported path', () => {
    for (const { spec } of soakPlan(options({ count: 500 }))) {
      expect(spec.replicas).toBeGreaterThanOrEqual(0);
      expect(spec.replicas).toBeLessThanOrEqual(MAX_REPLICAS);
      expect(['3.5.35', '3.6.16']).toContain(spec.version);
    }
  });

  it('draws every kind of action over a long plan, and scales to every count 1..7', () => {
    const plan = soakPlan(options({ count: 500 }));
    const kinds = new Set(plan.map((p) => p.action.kind));
    expect([...kinds].sort()).toEqual(['downgrade', 'fault', 'pause', 'resume', 'scale', 'upgrade']);
    const counts = new Set(plan.flatMap((p) => (p.action.kind === 'scale' ? [p.action.replicas] : [])));
    expect([...counts].sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(plan.some((p) => p.action.kind === 'scale' && p.action.fault)).toBe(true);
  });

  it('only ever resumes a paused cluster, to 1..7 members, and never scales to the count it has', () => {
    const plan = soakPlan(options({ count: 500 }));
    let replicas = 3;
    for (const { action, spec } of plan) {
      if (replicas === 0) {
        expect(action.kind).toBe('resume');
        expect(spec.replicas).toBeGreaterThanOrEqual(1);
      }
      if (action.kind === 'scale') expect(action.replicas).not.toBe(replicas);
      replicas = spec.replicas;
    }
  });

  it('upgrades from the lower version and downgrades from the upper one, never skipping', () => {
    let version = '3.6.16';
    for (const { action, spec } of soakPlan(options({ count: 500 }))) {
      if (action.kind === 'upgrade') expect([version, spec.version]).toEqual(['3.5.35', '3.6.16']);
      if (action.kind === 'downgrade') expect([version, spec.version]).toEqual(['3.6.16', '3.5.35']);
      version = spec.version;
    }
  });

  it.each([
    ['no pause where members cannot be paused', { canPause: false }, ['pause', 'resume'], []],
    ['node faults only where they are offered', {}, [], NODE_FAULTS],
    ['no fault at all when none is offered', { faults: [] }, ['fault'], CONTAINER_FAULTS],
  ] as const)('%s', (_, o, kindsAbsent, faultsAbsent) => {
    const plan = soakPlan(options({ count: 500, ...o }));
    for (const { action } of plan) {
      expect(kindsAbsent as readonly string[]).not.toContain(action.kind);
      const fault =
        action.kind === 'fault' ? action.fault : action.kind === 'scale' ? action.fault : undefined;
      if (fault) expect(faultsAbsent as readonly string[]).not.toContain(fault.kind);
    }
  });

  it('offers node faults on real nodes', () => {
    const plan = soakPlan(options({ count: 500, faults: [...CONTAINER_FAULTS, ...NODE_FAULTS] }));
    const kinds = new Set(plan.flatMap((p) => (p.action.kind === 'fault' ? [p.action.fault.kind] : [])));
    expect([...kinds].sort()).toEqual(['freeze', 'kill', 'kill-leader', 'node-stop', 'partition']);
  });
});

const fault = { kind: 'kill', target: 0, seconds: 0 } as const;
describe('voterFloor', () => {
  it.each<[string, number, SoakAction, number]>([
    ['a scale-up never shows fewer voters than it started with', 3, { kind: 'scale', replicas: 5 }, 3],
    ['a scale-down never shows fewer voters than it ends with', 5, { kind: 'scale', replicas: 2 }, 2],
    [
      'a fault during a scale allows the hit member to be replaced',
      3,
      { kind: 'scale', replicas: 5, fault: { ...fault, afterSeconds: 3 } },
      2,
    ],
    ['a fault alone allows one replacement at most', 5, { kind: 'fault', fault }, 4],
    ['a one-member cluster under a fault still has its one voter', 1, { kind: 'fault', fault }, 1],
    ['a version change rolls members without removing any', 3, { kind: 'upgrade', version: '3.6.16' }, 3],
    ['a pause goes down to the last member', 5, { kind: 'pause' }, 1],
    ['a resume starts from the last member', 0, { kind: 'resume', replicas: 3 }, 1],
  ])('%s', (_, replicas, action, floor) => {
    expect(voterFloor({ replicas, version: '3.6.16' }, action)).toBe(floor);
  });
});

describe('convergeBoundMs', () => {
  it.each<[string, number, SoakAction, number]>([
    ['a scale by one: 3 min and 1 min a member', 3, { kind: 'scale', replicas: 4 }, 250_000],
    ['a scale by six', 7, { kind: 'scale', replicas: 1 }, 550_000],
    [
      'a scale with a freeze adds the freeze and a minute',
      3,
      { kind: 'scale', replicas: 4, fault: { kind: 'freeze', target: 1, seconds: 10, afterSeconds: 2 } },
      320_000,
    ],
    ['an upgrade of three members: 1.5 min a member', 3, { kind: 'upgrade', version: '3.6.16' }, 450_000],
    ['a pause of five members', 5, { kind: 'pause' }, 345_000],
    ['a resume to seven', 0, { kind: 'resume', replicas: 7 }, 600_000],
    [
      'a node stopped 30 s',
      3,
      { kind: 'fault', fault: { kind: 'node-stop', target: 0, seconds: 30 } },
      270_000,
    ],
  ])('%s', (_, replicas, action, bound) => {
    expect(convergeBoundMs({ replicas, version: '3.6.16' }, action)).toBe(bound);
  });
});

describe('nextSpec and describeAction', () => {
  it.each<[SoakAction, { replicas: number; version: string }, string]>([
    [{ kind: 'scale', replicas: 6 }, { replicas: 6, version: '3.6.16' }, 'scale to 6'],
    [{ kind: 'downgrade', version: '3.5.35' }, { replicas: 3, version: '3.5.35' }, 'downgrade to 3.5.35'],
    [{ kind: 'pause' }, { replicas: 0, version: '3.6.16' }, 'pause'],
    [{ kind: 'resume', replicas: 2 }, { replicas: 2, version: '3.6.16' }, 'resume at 2'],
    [
      { kind: 'fault', fault: { kind: 'freeze', target: 2, seconds: 9 } },
      { replicas: 3, version: '3.6.16' },
      'freeze #2 9s',
    ],
    [
      { kind: 'fault', fault: { kind: 'kill-leader', target: 2, seconds: 0 } },
      { replicas: 3, version: '3.6.16' },
      'kill-leader',
    ],
    [
      { kind: 'scale', replicas: 5, fault: { kind: 'kill', target: 1, seconds: 0, afterSeconds: 4 } },
      { replicas: 5, version: '3.6.16' },
      'scale to 5 + kill #1 after 4s',
    ],
  ])('%j', (action, spec, text) => {
    expect(nextSpec({ replicas: 3, version: '3.6.16' }, action)).toEqual(spec);
    expect(describeAction(action)).toBe(text);
  });
});
