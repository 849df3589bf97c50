// The soak's seeded plan: a sequence of spec changes (scale 1-7, upgrade and downgrade within the supported path, pause
// and resume) and faults (member killed or frozen, the leader killed; on real nodes a node stopped or partitioned),
// drawn from the seed alone, so the same seed always gives the same actions; and the bounds each action is held to.

/** mulberry32: a small, fast generator whose whole state is one 32-bit number, so a seed fixes every draw. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type FaultKind = 'kill' | 'kill-leader' | 'freeze' | 'node-stop' | 'partition';

/** Faults that need real nodes (a node's kubelet, runtime and network). */
export const NODE_FAULTS: readonly FaultKind[] = ['node-stop', 'partition'];
export const CONTAINER_FAULTS: readonly FaultKind[] = ['kill', 'kill-leader', 'freeze'];

export interface Fault {
  kind: FaultKind;
  /** Which member by ordinal among the current ones (mod their count); ignored by kill-leader. */
  target: number;
  /** How long it lasts before it is healed (freeze, node-stop, partition); 0 for a kill. */
  seconds: number;
}

export type SoakAction =
  | { kind: 'scale'; replicas: number; fault?: Fault & { afterSeconds: number } }
  | { kind: 'upgrade' | 'downgrade'; version: string }
  | { kind: 'pause' }
  | { kind: 'resume'; replicas: number }
  | { kind: 'fault'; fault: Fault };

export interface SoakPlanOptions {
  seed: number;
  /** At most this many actions (the run also stops when its time is up). */
  count: number;
  /** The cluster the soak creates. */
  startReplicas: number;
  startVersion: string;
  /** The supported one-minor path: `lower` upgrades to `upper`, `upper` downgrades to `lower`. */
  versions: { lower: string; upper: string };
  faults: readonly FaultKind[];
  /** Memory-backed members cannot be paused (the apiserver refuses it). */
  canPause: boolean;
}

export const MAX_REPLICAS = 7;

/** The spec as the plan leaves it after each action (what the cluster must converge to). */
export interface PlannedSpec {
  replicas: number;
  version: string;
}

const pick = <T>(rnd: () => number, items: readonly T[]): T => {
  const item = items[Math.floor(rnd() * items.length)];
  if (item === undefined) throw new Error('pick from an empty list');
  return item;
};
const between = (rnd: () => number, lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));

function drawFault(rnd: () => number, kinds: readonly FaultKind[], replicas: number): Fault {
  const kind = pick(rnd, kinds);
  const target = between(rnd, 0, Math.max(0, replicas - 1));
  const seconds =
    kind === 'freeze'
      ? between(rnd, 5, 15)
      : kind === 'node-stop'
        ? between(rnd, 20, 45)
        : kind === 'partition'
          ? between(rnd, 10, 20)
          : 0;
  return { kind, target, seconds };
}

/**
 * The whole plan for a seed. A paused cluster is only ever resumed; a scale sometimes has a fault injected while it
 * runs (the operator must then finish it or compensate, never lose quorum). Scales never pick the current count.
 */
export function soakPlan(o: SoakPlanOptions): { action: SoakAction; spec: PlannedSpec }[] {
  const rnd = seededRandom(o.seed);
  const plan: { action: SoakAction; spec: PlannedSpec }[] = [];
  let spec: PlannedSpec = { replicas: o.startReplicas, version: o.startVersion };
  for (let i = 0; i < o.count; i++) {
    let action: SoakAction;
    if (spec.replicas === 0) {
      action = { kind: 'resume', replicas: between(rnd, 1, MAX_REPLICAS) };
    } else {
      const kinds: SoakAction['kind'][] = ['scale', 'scale', 'scale', 'upgrade'];
      if (o.faults.length > 0) kinds.push('fault', 'fault', 'fault');
      if (o.canPause) kinds.push('pause');
      const kind = pick(rnd, kinds);
      if (kind === 'scale') {
        const choices = [1, 2, 3, 4, 5, 6, 7].filter((n) => n !== spec.replicas);
        const replicas = pick(rnd, choices);
        const withFault = o.faults.length > 0 && rnd() < 0.3;
        action = withFault
          ? {
              kind: 'scale',
              replicas,
              fault: { ...drawFault(rnd, o.faults, spec.replicas), afterSeconds: between(rnd, 2, 10) },
            }
          : { kind: 'scale', replicas };
      } else if (kind === 'upgrade') {
        // One kind of draw for a version change; which way it goes follows from the version running.
        action =
          spec.version === o.versions.lower
            ? { kind: 'upgrade', version: o.versions.upper }
            : { kind: 'downgrade', version: o.versions.lower };
      } else if (kind === 'fault') {
        action = { kind: 'fault', fault: drawFault(rnd, o.faults, spec.replicas) };
      } else {
        action = { kind: 'pause' };
      }
    }
    spec = nextSpec(spec, action);
    plan.push({ action, spec });
  }
  return plan;
}

export function nextSpec(spec: PlannedSpec, action: SoakAction): PlannedSpec {
  switch (action.kind) {
    case 'scale':
    case 'resume':
      return { ...spec, replicas: action.replicas };
    case 'upgrade':
    case 'downgrade':
      return { ...spec, version: action.version };
    case 'pause':
      return { ...spec, replicas: 0 };
    case 'fault':
      return spec;
  }
}

/** How long the cluster may take to converge to the spec after an action, from its start (faults included). */
export function convergeBoundMs(before: PlannedSpec, action: SoakAction): number {
  const faultMs = (f?: Fault) => (f ? f.seconds * 1000 + 60_000 : 0);
  switch (action.kind) {
    case 'scale':
      return 180_000 + 60_000 * Math.abs(action.replicas - before.replicas) + faultMs(action.fault) + 10_000;
    case 'resume':
      return 180_000 + 60_000 * action.replicas;
    case 'pause':
      return 120_000 + 45_000 * before.replicas;
    case 'upgrade':
    case 'downgrade':
      // Every member rolls, one at a time, each waiting to be Ready and caught up.
      return 180_000 + 90_000 * before.replicas;
    case 'fault':
      return 240_000 + action.fault.seconds * 1000;
  }
}

/**
 * The fewest voters the member list may show during an action: the operator adds before it removes and changes one
 * member at a time, so a change between n and m never shows fewer than min(n, m); a pause goes down to its last
 * member. A fault alone changes no membership; the operator may at most replace the member it hit (one removal,
 * which keeps quorum of the rest), so one less is allowed then and nothing less.
 */
export function voterFloor(before: PlannedSpec, action: SoakAction): number {
  const withFault = action.kind === 'fault' || (action.kind === 'scale' && action.fault !== undefined);
  const base =
    action.kind === 'pause'
      ? 1
      : action.kind === 'resume'
        ? 1
        : action.kind === 'scale'
          ? Math.min(before.replicas, action.replicas)
          : before.replicas;
  return Math.max(1, base - (withFault ? 1 : 0));
}

/** A short text for the timeline and the summary. */
export function describeAction(a: SoakAction): string {
  const fault = (f: Fault) =>
    `${f.kind}${f.kind === 'kill-leader' ? '' : ` #${f.target}`}${f.seconds > 0 ? ` ${f.seconds}s` : ''}`;
  switch (a.kind) {
    case 'scale':
      return `scale to ${a.replicas}${a.fault ? ` + ${fault(a.fault)} after ${a.fault.afterSeconds}s` : ''}`;
    case 'upgrade':
    case 'downgrade':
      return `${a.kind} to ${a.version}`;
    case 'pause':
      return 'pause';
    case 'resume':
      return `resume at ${a.replicas}`;
    case 'fault':
      return fault(a.fault);
  }
}
