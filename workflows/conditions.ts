// Computes EtcdCluster status from an observation and the running operation; lastTransitionTime moves only when a condition flips.
//
// Pure: `now` comes in as a parameter (the workflow passes its deterministic clock), so the same inputs
// always give the same status, and `statusChanged` lets the caller skip writes that would change nothing.
import { ConditionTypes, Reasons } from '../crds/conditions';
import type { ConditionType, Reason } from '../crds/conditions';
import type {
  Condition,
  ConditionStatus,
  CurrentOperation,
  EtcdClusterStatus,
  LastOperation,
  MemberStatus,
  OperationResult,
  OperationType,
} from '../crds/etcd-cluster';
import { MEMBER_PROBLEM_REASONS, operationFor } from './plan';
import { DEFAULT_QUOTA_BACKEND_BYTES, NOSPACE_ALARM, noSpaceMessage } from './defrag-plan';
import type { Decision, Desired, EtcdMemberView, KubeMemberView, Observed } from './plan';
import {
  currentSize,
  memberState,
  ordinalFor,
  quorumEvidence,
  slowVotersMessage,
  votesNow,
} from './cluster-state';
import { sameData } from './canonical';

export interface StatusInput {
  /** metadata.generation of the spec these inputs were computed for. */
  generation: number;
  desired: Desired;
  observed: Observed;
  /** The latest plan for this observation. */
  decision: Decision;
  currentOperation?: CurrentOperation;
  lastOperation?: LastOperation;
  /**
   * The last operation stopped short (deadline, cancel, failure) and the cluster starts nothing until the
   * spec changes or the retry annotation is set.
   */
  halted: boolean;
  selector: string;
  clientEndpoint: string;
  previous?: EtcdClusterStatus;
  /** RFC 3339, from the workflow's clock. */
  now: string;
  /** Each member's raft lag and last error go into status (behind a patch: older runs wrote without them). */
  memberDetail?: boolean;
}

const progressingReason: Record<OperationType, Reason> = {
  Bootstrap: Reasons.Bootstrapping,
  ScaleUp: Reasons.ScalingUp,
  ScaleDown: Reasons.ScalingDown,
  Heal: Reasons.Healing,
  Pause: Reasons.Pausing,
  Resume: Reasons.Resuming,
  Upgrade: Reasons.Upgrading,
  Downgrade: Reasons.Downgrading,
  Rollout: Reasons.RollingOut,
  EnableAuth: Reasons.EnablingAuth,
  Defrag: Reasons.Defragmenting,
  RotateAuth: Reasons.RotatingAuth,
  Recover: Reasons.Recovering,
  Rebuild: Reasons.Rebuilding,
};

const haltedReason: Record<Exclude<OperationResult, 'Succeeded'>, Reason> = {
  DeadlineExceeded: Reasons.Stalled,
  Cancelled: Reasons.OperationCancelled,
  Failed: Reasons.OperationFailed,
};

/** A member is ready when it answers from a live Pod; a voter's Pod must also be Ready (learners fail /readyz by design). */
export function memberReady(m: EtcdMemberView, k: KubeMemberView | undefined): boolean {
  return votesNow(m, k) && (m.isLearner || k?.pod?.ready === true);
}

type Verdict = { status: ConditionStatus; reason: Reason; message: string };

/** A decimal uint64 member id as etcdctl prints it (%x: lower-case hex, no padding); an unparsable id as it is. */
export function hexMemberId(id: string): string {
  return /^\d+$/.test(id) ? BigInt(id).toString(16) : id;
}

/** Raft entries behind, rounded down to a power of ten; 0 within the normal in-flight window of 100. */
export function roundedLag(leaderIndex: string, memberIndex: string): number | undefined {
  if (!/^\d+$/.test(leaderIndex) || !/^\d+$/.test(memberIndex)) return undefined;
  const lag = BigInt(leaderIndex) - BigInt(memberIndex);
  if (lag < 100n) return 0;
  return 10 ** (lag.toString().length - 1);
}

/** What is wrong with one member, in words: its Pod's problem first, then an alarm it raised, then silence. */
export function memberError(
  m: Pick<EtcdMemberView, 'id' | 'reachable'> | undefined,
  k: KubeMemberView | undefined,
  alarms: readonly { memberId: string; alarm: string }[] | undefined,
): string | undefined {
  if (k?.problem) return `${k.problem.reason}: ${k.problem.message}`;
  const raised = (alarms ?? []).filter((a) => a.memberId === m?.id).map((a) => a.alarm);
  if (raised.length > 0) return `etcd alarm ${[...new Set(raised)].sort().join(', ')} raised on this member`;
  if (m && !m.reachable) return 'did not answer the operator (etcd status request failed or timed out)';
  return undefined;
}

function members(input: StatusInput): MemberStatus[] {
  const { observed, previous, desired } = input;
  const ordinal = (name: string) => ordinalFor(desired.cluster, name);
  const byName = (a: MemberStatus, b: MemberStatus) =>
    ordinal(a.name) - ordinal(b.name) || a.id.localeCompare(b.id);
  const kube = new Map(observed.kube.map((k) => [k.name, k]));
  if (!observed.etcd) {
    // Without etcd's answer the last known members stay listed while something of theirs exists (a paused
    // cluster shows its kept member), but none is ready or leads.
    return (previous?.members ?? [])
      .filter((m) => kube.has(m.name))
      .map((m) => {
        if (!input.memberDetail) return { ...m, ready: false, leader: false };
        const { raftLag: _lag, lastError: _error, ...rest } = m;
        const lastError = memberError(undefined, kube.get(m.name), undefined);
        return { ...rest, ready: false, leader: false, ...(lastError ? { lastError } : {}) };
      })
      .sort(byName);
  }
  const { leaderId, alarms } = observed.etcd;
  const leaderIndex = observed.etcd.members.find((m) => m.id === leaderId && m.reachable)?.raftIndex;
  return observed.etcd.members
    .map((m): MemberStatus => {
      const status: MemberStatus = {
        id: m.id,
        hexId: hexMemberId(m.id),
        name: m.name,
        role: m.isLearner ? 'learner' : 'voter',
        ready: memberReady(m, kube.get(m.name)),
        leader: m.id === leaderId,
      };
      if (m.version !== undefined) status.version = m.version;
      const template = kube.get(m.name)?.pod?.template;
      if (template) status.upToDate = template.upToDate && template.metadataCurrent;
      if (m.dbSize !== undefined) status.dbSize = m.dbSize;
      if (m.dbSizeInUse !== undefined) status.dbSizeInUse = m.dbSizeInUse;
      if (input.memberDetail) {
        const lag =
          leaderIndex !== undefined && m.reachable && m.raftIndex !== undefined
            ? roundedLag(leaderIndex, m.raftIndex)
            : undefined;
        if (lag !== undefined) status.raftLag = lag;
        const lastError = memberError(m, kube.get(m.name), alarms);
        if (lastError !== undefined) status.lastError = lastError;
      }
      return status;
    })
    .sort(byName);
}

function available(input: StatusInput): Verdict {
  const { observed, decision, desired } = input;
  const etcd = observed.etcd;
  if (!etcd) {
    if (decision.step.kind === 'None' && decision.step.reason === Reasons.Paused) {
      return { status: 'False', reason: Reasons.Paused, message: 'paused by replicas 0; the data is kept' };
    }
    if (observed.recorded.paused && desired.replicas > 0) {
      return { status: 'False', reason: Reasons.Paused, message: 'resuming from the kept claim' };
    }
    if (observed.recorded.clusterId === undefined) {
      return { status: 'False', reason: Reasons.Bootstrapping, message: 'the cluster has not answered yet' };
    }
    if (decision.step.kind === 'Wait' && decision.step.reason === Reasons.AllMembersLost) {
      return { status: 'False', reason: Reasons.AllMembersLost, message: decision.step.message };
    }
    // A majority's data is gone for good: what is left, and the approval that lets the operator rebuild from it.
    if (decision.step.kind === 'Wait' && decision.step.reason === Reasons.PermanentQuorumLoss) {
      return { status: 'False', reason: Reasons.PermanentQuorumLoss, message: decision.step.message };
    }
    // Members refuse the operator's certificate: they may serve their clients well; the operator cannot tell.
    if (decision.step.kind === 'Wait' && decision.step.reason === Reasons.TLSTrustBroken) {
      return { status: 'Unknown', reason: Reasons.TLSTrustBroken, message: decision.step.message };
    }
    return { status: 'False', reason: Reasons.QuorumLost, message: 'no member answers' };
  }
  // The planner reads quorum by the same rule (cluster-state.ts quorumEvidence). When only the linearizable member
  // list shows quorum, saying QuorumLost would be untrue; Degraded names the members that did not answer.
  const q = quorumEvidence(etcd, observed.kube);
  if (q.proof === 'votes') {
    const message = `${q.voting} of ${q.voters} voters answer; ${q.needed} needed`;
    return { status: 'True', reason: Reasons.ClusterAvailable, message };
  }
  return { status: 'True', reason: Reasons.ClusterAvailable, message: slowVotersMessage(q) };
}

function degraded(input: StatusInput, availability: Verdict): Verdict {
  const { observed, desired, decision } = input;
  const etcd = observed.etcd;
  if (decision.step.kind === 'Wait' && decision.step.reason === Reasons.RestoreFailed) {
    return { status: 'True', reason: Reasons.RestoreFailed, message: decision.step.message };
  }
  // A member Pod that cannot run (no image, crash loop, unschedulable, claim pending) is what to fix first,
  // whether the cluster is bootstrapping, scaling or has lost quorum over it.
  if (decision.step.kind === 'Wait' && MEMBER_PROBLEM_REASONS.includes(decision.step.reason)) {
    return { status: 'True', reason: decision.step.reason, message: decision.step.message };
  }
  if (
    availability.reason === Reasons.Paused ||
    availability.reason === Reasons.Bootstrapping ||
    availability.reason === Reasons.AllMembersLost ||
    availability.reason === Reasons.PermanentQuorumLoss
  ) {
    const lost =
      availability.reason === Reasons.AllMembersLost || availability.reason === Reasons.PermanentQuorumLoss;
    const status: ConditionStatus = lost ? 'True' : 'False';
    return { status, reason: availability.reason, message: availability.message };
  }
  if (availability.reason === Reasons.TLSTrustBroken)
    return { status: 'True', reason: Reasons.TLSTrustBroken, message: availability.message };
  if (availability.status === 'False')
    return { status: 'True', reason: Reasons.QuorumLost, message: availability.message };
  // NOSPACE refuses every write cluster-wide: the most urgent thing a user should read here.
  const noSpace = (etcd?.alarms ?? []).filter((a) => a.alarm === NOSPACE_ALARM);
  if (noSpace.length > 0 && etcd) {
    return {
      status: 'True',
      reason: Reasons.NoSpace,
      message: noSpaceMessage(
        noSpace,
        etcd.members.map((m) => ({ ...m, ordinal: 0, healthy: true, ready: true })),
        desired.defrag?.quotaBytes ?? DEFAULT_QUOTA_BACKEND_BYTES,
      ),
    };
  }
  const kube = new Map(observed.kube.map((k) => [k.name, k]));
  const all = etcd?.members ?? [];
  const lost = all.filter((m) => {
    const state = memberState(m, kube.get(m.name), desired.medium);
    return state === 'lost' || state === 'zombie';
  });
  if (lost.length > 0) {
    return {
      status: 'True',
      reason: Reasons.MemberDataLost,
      message: `${lost.map((m) => m.name).join(', ')} must be replaced`,
    };
  }
  // A learner that is still catching up is the normal course of a scale up, not a degradation.
  const unready = all.filter((m) => !m.isLearner && !memberReady(m, kube.get(m.name)));
  if (unready.length > 0) {
    return {
      status: 'True',
      reason: Reasons.MemberNotReady,
      message: `${unready.map((m) => m.name).join(', ')} not ready`,
    };
  }
  return { status: 'False', reason: Reasons.MembersHealthy, message: `${all.length} members healthy` };
}

function progressing(input: StatusInput): Verdict {
  const { currentOperation, lastOperation, halted, decision, desired } = input;
  if (currentOperation) {
    return {
      status: 'True',
      reason: progressingReason[currentOperation.type],
      message: currentOperation.step ?? `${currentOperation.type} running`,
    };
  }
  if (halted && lastOperation && lastOperation.result !== 'Succeeded') {
    return {
      status: 'False',
      reason: haltedReason[lastOperation.result],
      message: `${lastOperation.type} ${lastOperation.workflowId}: ${lastOperation.message ?? lastOperation.result}; change the spec or set the retry annotation`,
    };
  }
  const step = decision.step;
  if (step.kind === 'Wait' || step.kind === 'None')
    return { status: 'False', reason: step.reason, message: step.message };
  // A step is planned and its operation is about to start.
  return {
    status: 'True',
    reason: progressingReason[operationFor(step, desired.replicas)],
    message: 'starting',
  };
}

/**
 * Sets `next` in the list the way metav1 does: lastTransitionTime changes only when the status flips, so
 * a new reason or message alone does not look like a transition.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  next: Omit<Condition, 'lastTransitionTime'>,
  now: string,
): Condition[] {
  const list = [...(conditions ?? [])];
  const index = list.findIndex((c) => c.type === next.type);
  const old = index >= 0 ? list[index] : undefined;
  const condition: Condition = {
    ...next,
    lastTransitionTime: old && old.status === next.status ? old.lastTransitionTime : now,
  };
  if (index >= 0) list[index] = condition;
  else list.push(condition);
  return list;
}

export function findCondition(
  status: EtcdClusterStatus | undefined,
  type: ConditionType,
): Condition | undefined {
  return status?.conditions?.find((c) => c.type === type);
}

/** The whole status for this observation; write it only when `statusChanged(previous, result)`. */
export function computeStatus(input: StatusInput): EtcdClusterStatus {
  const { previous, observed, generation, now } = input;
  const availability = available(input);
  const verdicts: [ConditionType, Verdict][] = [
    [ConditionTypes.Available, availability],
    [ConditionTypes.Progressing, progressing(input)],
    [ConditionTypes.Degraded, degraded(input, availability)],
  ];
  let conditions = previous?.conditions ?? [];
  for (const [type, v] of verdicts) {
    conditions = setCondition(conditions, { type, ...v, observedGeneration: generation }, now);
  }
  const memberList = members(input);
  const status: EtcdClusterStatus = {
    observedGeneration: generation,
    replicas: currentSize(observed),
    readyReplicas: memberList.filter((m) => m.role === 'voter' && m.ready).length,
    selector: input.selector,
    clientEndpoint: input.clientEndpoint,
    members: memberList,
    conditions,
  };
  const leader = memberList.find((m) => m.leader);
  if (leader) status.leader = leader.name;
  const clusterId = observed.etcd?.clusterId ?? previous?.clusterId ?? observed.recorded.clusterId;
  if (clusterId !== undefined) status.clusterId = clusterId;
  // Only when some Pod was compared with the spec's template: status written before rollouts stays as it was.
  if (memberList.some((m) => m.upToDate !== undefined)) {
    status.updatedReplicas = memberList.filter((m) => m.upToDate === true).length;
  }
  if (input.currentOperation) status.currentOperation = input.currentOperation;
  if (input.lastOperation) status.lastOperation = input.lastOperation;
  return status;
}

/** Key order and absent-versus-undefined do not count as a change, or every pass would write status. */
export function equalStatus(a: EtcdClusterStatus | undefined, b: EtcdClusterStatus | undefined): boolean {
  return sameData(a, b);
}

/** A member's database size that moved by less than this is not news by itself: it goes out with the next write that is. */
export const DB_SIZE_NEWS_BYTES = 1024 * 1024;

const smallMove = (a: number | undefined, b: number | undefined) =>
  a !== undefined && b !== undefined && Math.abs(a - b) < DB_SIZE_NEWS_BYTES;

/**
 * Pure: `next` with each member's dbSize and dbSizeInUse as `previous` had them, where both moved by less than
 * DB_SIZE_NEWS_BYTES. An idle etcd's in-use size moves by a page or two between looks; only a status that differs
 * from `previous` beyond that is worth a write.
 */
export function withoutSmallSizeMoves(
  previous: EtcdClusterStatus | undefined,
  next: EtcdClusterStatus,
): EtcdClusterStatus {
  const before = new Map((previous?.members ?? []).map((m) => [m.name, m]));
  if (!next.members || before.size === 0) return next;
  return {
    ...next,
    members: next.members.map((m) => {
      const was = before.get(m.name);
      if (!was || !smallMove(was.dbSize, m.dbSize) || !smallMove(was.dbSizeInUse, m.dbSizeInUse)) return m;
      return { ...m, dbSize: was.dbSize, dbSizeInUse: was.dbSizeInUse };
    }),
  };
}

/** Whether writing `next` would change anything a reader can see. */
export function statusChanged(previous: EtcdClusterStatus | undefined, next: EtcdClusterStatus): boolean {
  return !equalStatus(previous, next);
}
