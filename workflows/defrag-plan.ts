// Decides when members are defragmented and in which order: followers first by ordinal, the leader last after handing leadership away, one member at a time, only while every member is healthy.
//
// Pure and sandbox-safe. Why the leader goes last, after MoveLeader: etcd's defragmentation "blocks reads
// and writes on that member" (etcd op-guide/maintenance) while it rewrites the database file. A follower
// blocked that way only falls behind and catches up afterwards; the leader blocked that way stalls every
// proposal of the cluster for as long as the rewrite takes. Moving leadership first (a transfer, not an
// election: milliseconds) turns the leader's defragmentation into a follower's.
import { Reasons } from '../crds/conditions';
import { isServing, nextOneAtATime } from './cluster-state';

/** Why a Defrag operation runs: etcd's NOSPACE alarm, spec.maintenance.defrag.schedule, or its threshold. */
export type DefragTrigger = 'NoSpace' | 'Schedule' | 'Threshold';

/** etcd's alarm name for a database that reached quota-backend-bytes. */
export const NOSPACE_ALARM = 'NOSPACE';

/** etcd's default quota-backend-bytes (2 GiB) when spec.options does not set one (0 also means the default). */
export const DEFAULT_QUOTA_BACKEND_BYTES = 2 * 1024 * 1024 * 1024;

/** spec.maintenance.defrag.minDbSize's default: databases below 100 MiB are not worth a blocking rewrite. */
export const DEFAULT_MIN_DB_SIZE = '100Mi';

/** One raised etcd alarm (Maintenance.Alarm GET). */
export interface EtcdAlarm {
  memberId: string;
  alarm: string;
}

/** What defragmentation needs to know of one member. */
export interface DefragMemberView {
  id: string;
  name: string;
  ordinal: number;
  isLearner: boolean;
  /** Started, answers, and its Pod is live. */
  healthy: boolean;
  /** Its Pod is Ready (a voter's /readyz passed). */
  ready: boolean;
  dbSize?: number;
  dbSizeInUse?: number;
  raftIndex?: string;
}

/**
 * No threshold-triggered Defrag within this long of the end of the last Defrag (of any trigger). A constant,
 * not a spec field: a database whose free pages come back within an hour churns faster than a blocking
 * rewrite helps, and looping on it would block each member in turn around the clock; who wants a cadence
 * sets spec.maintenance.defrag.schedule, and NOSPACE is always cleared at once. Neither is subject to it.
 */
export const THRESHOLD_DEFRAG_COOLDOWN_MS = 60 * 60_000;

/** When the last Defrag ended, by the cluster workflow's clock (workflow state, so replay sees the same). */
export interface DefragCooldown {
  lastDefragAt: string;
  now: string;
}

/** What the spec and the cluster workflow's clock say about defragmentation. */
export interface DefragConfig {
  thresholdPercent?: number;
  /** Bytes; below it the threshold never triggers. */
  minDbSizeBytes: number;
  /** The schedule's firing time has come and no scheduled Defrag has run since. */
  scheduleDue: boolean;
  /** quota-backend-bytes the members run with (for messages). */
  quotaBytes: number;
  /** Absent: no Defrag has ended that the cluster workflow remembers, so nothing holds the threshold back. */
  cooldown?: DefragCooldown;
}

/** Start a Defrag operation over `members` (names) for `trigger`. */
export interface DefragStep {
  kind: 'Defrag';
  trigger: DefragTrigger;
  members: string[];
  message: string;
}

const MIB = 1024 * 1024;
const UNITS: Record<string, number> = {
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 1024,
  Mi: MIB,
  Gi: 1024 * MIB,
  Ti: 1024 * 1024 * MIB,
};

/** Bytes of a Kubernetes quantity such as 100Mi, 1G or 5000000; undefined for a form it does not know. */
export function quantityBytes(q: string | number): number | undefined {
  if (typeof q === 'number') return Number.isFinite(q) && q >= 0 ? q : undefined;
  const m = /^([0-9]+(?:\.[0-9]+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(q.trim());
  if (!m?.[1]) return undefined;
  return Math.round(Number(m[1]) * (UNITS[m[2] ?? ''] ?? 1));
}

/** quota-backend-bytes from spec.options (etcd's flag value is plain bytes), etcd's default otherwise. */
export function quotaBytesOf(options: Record<string, string> | undefined): number {
  const raw = options?.['quota-backend-bytes'];
  const bytes = raw === undefined ? undefined : Number(raw);
  return bytes !== undefined && Number.isInteger(bytes) && bytes > 0 ? bytes : DEFAULT_QUOTA_BACKEND_BYTES;
}

/** The planner's defrag inputs from the spec; `scheduleDue` comes from the cluster workflow's clock. */
export function defragConfigOf(
  spec: {
    options?: Record<string, string>;
    maintenance?: { defrag?: { thresholdPercent?: number; minDbSize?: string | number } };
  },
  scheduleDue = false,
): DefragConfig {
  const defrag = spec.maintenance?.defrag;
  return {
    ...(defrag?.thresholdPercent !== undefined ? { thresholdPercent: defrag.thresholdPercent } : {}),
    minDbSizeBytes:
      quantityBytes(defrag?.minDbSize ?? DEFAULT_MIN_DB_SIZE) ??
      (quantityBytes(DEFAULT_MIN_DB_SIZE) as number),
    scheduleDue,
    quotaBytes: quotaBytesOf(spec.options),
  };
}

/** Free pages as a whole percentage of the database file; 0 when the sizes are unknown. */
export function fragmentationPercent(m: Pick<DefragMemberView, 'dbSize' | 'dbSizeInUse'>): number {
  if (m.dbSize === undefined || m.dbSizeInUse === undefined || m.dbSize <= 0) return 0;
  return Math.floor(((m.dbSize - m.dbSizeInUse) * 100) / m.dbSize);
}

/** Whether the threshold asks for this member: large enough to matter and more than thresholdPercent free. */
export function overThreshold(m: DefragMemberView, config: DefragConfig): boolean {
  if (config.thresholdPercent === undefined || m.dbSize === undefined) return false;
  return m.dbSize >= config.minDbSizeBytes && fragmentationPercent(m) > config.thresholdPercent;
}

/** Whether the threshold is held back: the last Defrag ended less than THRESHOLD_DEFRAG_COOLDOWN_MS ago. */
export function thresholdCoolingDown(cooldown: DefragCooldown | undefined): boolean {
  if (!cooldown) return false;
  const since = Date.parse(cooldown.now) - Date.parse(cooldown.lastDefragAt);
  return Number.isFinite(since) && since < THRESHOLD_DEFRAG_COOLDOWN_MS;
}

const byOrdinal = (a: DefragMemberView, b: DefragMemberView) => a.ordinal - b.ordinal;
const mib = (bytes: number) => `${(bytes / MIB).toFixed(1)} MiB`;

/** The member names an alarm list says hit NOSPACE (an id etcd no longer lists stays an id). */
export function noSpaceMembers(alarms: readonly EtcdAlarm[], members: readonly DefragMemberView[]): string[] {
  return alarms
    .filter((a) => a.alarm === NOSPACE_ALARM)
    .map((a) => members.find((m) => m.id === a.memberId)?.name ?? `member ${a.memberId}`)
    .sort();
}

/** The Degraded message while NOSPACE is raised. */
export function noSpaceMessage(
  alarms: readonly EtcdAlarm[],
  members: readonly DefragMemberView[],
  quotaBytes: number,
): string {
  return (
    `etcd raised NOSPACE on ${noSpaceMembers(alarms, members).join(', ')}: the database reached ` +
    `quota-backend-bytes ${quotaBytes} (${mib(quotaBytes)}); writes are refused until the operator has ` +
    `compacted, defragmented every member and disarmed the alarm`
  );
}

/**
 * Whether a Defrag operation should start, and over which members. NOSPACE comes first (writes fail until
 * it is cleared), then a due schedule (every member), then the threshold (only the members over it, and
 * not within THRESHOLD_DEFRAG_COOLDOWN_MS of the last Defrag).
 */
export function defragTrigger(input: {
  members: readonly DefragMemberView[];
  alarms: readonly EtcdAlarm[];
  config: DefragConfig | undefined;
}): DefragStep | undefined {
  const { alarms, config } = input;
  const members = [...input.members].sort(byOrdinal);
  const all = members.map((m) => m.name);
  if (alarms.some((a) => a.alarm === NOSPACE_ALARM)) {
    return {
      kind: 'Defrag',
      trigger: 'NoSpace',
      members: all,
      message: `clear NOSPACE on ${noSpaceMembers(alarms, members).join(', ')}: compact, defragment ${all.join(', ')}, disarm`,
    };
  }
  if (!config) return undefined;
  if (config.scheduleDue) {
    return {
      kind: 'Defrag',
      trigger: 'Schedule',
      members: all,
      message: `scheduled defragmentation of ${all.join(', ')}`,
    };
  }
  // After the schedule: a due firing is served whatever the cooldown says.
  if (thresholdCoolingDown(config.cooldown)) return undefined;
  const over = members.filter((m) => overThreshold(m, config));
  if (over.length === 0) return undefined;
  const detail = over.map((m) => `${m.name} ${fragmentationPercent(m)}% free of ${mib(m.dbSize ?? 0)}`);
  return {
    kind: 'Defrag',
    trigger: 'Threshold',
    members: over.map((m) => m.name),
    message: `defragment ${detail.join(', ')} (threshold ${config.thresholdPercent ?? '?'}%)`,
  };
}

export type DefragMemberDecision =
  | { kind: 'DefragmentMember'; member: string; id: string }
  | { kind: 'MoveLeader'; from: { name: string; id: string }; to: { name: string; id: string } }
  | { kind: 'Wait'; reason: typeof Reasons.MemberNotReady; message: string }
  | { kind: 'Done' };

/**
 * The next member to defragment among `pending`. Nothing is touched while any member is unhealthy or a
 * voter not Ready: a blocked member plus an unhealthy one could cost quorum for the defragmentation's
 * length. Followers go first by ordinal; the leader last, after leadership moves to a voter already done.
 */
export function planDefragMember(input: {
  members: readonly DefragMemberView[];
  leaderId?: string;
  pending: readonly string[];
}): DefragMemberDecision {
  const members = [...input.members].sort(byOrdinal);
  const pending = members.filter((m) => input.pending.includes(m.name));
  if (pending.length === 0) return { kind: 'Done' };
  const unready = members.find((m) => !isServing(m));
  if (unready) {
    return {
      kind: 'Wait',
      reason: Reasons.MemberNotReady,
      message: `${unready.name} is not ready; defragmentation blocks one member at a time and waits until every member is`,
    };
  }
  // When the leader is all that is left every other member is done, so any voter may take over. A single voter
  // has nowhere to hand leadership: its defragmentation briefly stalls the cluster.
  const step = nextOneAtATime({ pending, leaderId: input.leaderId, successors: members });
  if (!step) return { kind: 'Done' };
  if (step.kind === 'MoveLeader') {
    return {
      kind: 'MoveLeader',
      from: { name: step.from.name, id: step.from.id },
      to: { name: step.to.name, id: step.to.id },
    };
  }
  return { kind: 'DefragmentMember', member: step.member.name, id: step.member.id };
}

/** One line for the Temporal UI and status while a Defrag runs. */
export function describeDefragDecision(d: DefragMemberDecision): string {
  switch (d.kind) {
    case 'DefragmentMember':
      return `defragment ${d.member} (its reads and writes block until the rewrite ends)`;
    case 'MoveLeader':
      return `move leadership from ${d.from.name} to ${d.to.name} before defragmenting ${d.from.name}`;
    case 'Wait':
      return `wait (${d.reason}): ${d.message}`;
    case 'Done':
      return 'every member defragmented';
  }
}
