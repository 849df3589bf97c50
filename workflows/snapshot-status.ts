// Pure status of an EtcdSnapshot: phase, the Ready condition (lastTransitionTime moves only on a flip), and which agent reasons are worth another Job.
import type { SnapshotReason } from '../crds/conditions';
import { SnapshotReasons } from '../crds/conditions';
import type { Condition, ConditionStatus } from '../crds/etcd-cluster';
import type { EtcdSnapshotStatus, SnapshotPhase } from '../crds/etcd-snapshot';
import { SnapshotConditionTypes } from '../crds/etcd-snapshot';

/** The next status: the given fields over the previous ones, with the Ready condition set. */
export function snapshotStatus(
  previous: EtcdSnapshotStatus,
  phase: SnapshotPhase,
  reason: SnapshotReason,
  message: string,
  now: string,
  more: Partial<EtcdSnapshotStatus> = {},
): EtcdSnapshotStatus {
  const ready: ConditionStatus = phase === 'Succeeded' ? 'True' : 'False';
  const before = previous.conditions?.find((c) => c.type === SnapshotConditionTypes.Ready);
  const condition: Condition = {
    type: SnapshotConditionTypes.Ready,
    status: ready,
    reason,
    message,
    lastTransitionTime: before && before.status === ready ? before.lastTransitionTime : now,
  };
  return {
    ...previous,
    ...more,
    phase,
    conditions: [...(previous.conditions ?? []).filter((c) => c.type !== condition.type), condition],
  };
}

/**
 * Agent reasons another Job may fix: the member went away mid-stream, or the store had a hiccup.
 * Credentials, a missing bucket and bad arguments are permanent: retrying them would only repeat them.
 */
const TRANSIENT: ReadonlySet<string> = new Set([
  SnapshotReasons.EtcdUnavailable,
  SnapshotReasons.DestinationUnavailable,
]);

export function isTransientFailure(reason: string): boolean {
  return TRANSIENT.has(reason);
}

/** The agent's reason as a status reason; an unknown one (a newer agent) reads as a failed Job. */
export function snapshotReasonOf(agentReason: string): SnapshotReason {
  return (Object.values(SnapshotReasons) as string[]).includes(agentReason)
    ? (agentReason as SnapshotReason)
    : SnapshotReasons.JobFailed;
}
