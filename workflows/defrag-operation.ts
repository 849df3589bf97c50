// The Defrag operation's loop inside the operation workflow: (compact when NOSPACE is raised,) defragment members one at a time in defrag-plan's order, then disarm NOSPACE.
//
// Invariants: one member is blocked at a time and only while every member is healthy; the leader is never
// the one blocked (leadership moves first); no key is deleted (compaction drops only superseded revisions);
// NOSPACE is disarmed only after every member was defragmented, and a NOSPACE that defragmentation cannot
// cure (the live data itself exceeds the quota) fails the operation with what to do instead of looping.
import { ApplicationFailure, proxyActivities, sleep } from '@temporalio/workflow';
import type { ClusterActivities } from '../activities/cluster-activities';
import type { DefragActivities } from '../activities/defrag-activities';
import type { ClusterObservation } from '../contracts/observation';
import { FailureTypes } from '../crds/conditions';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import type { DefragMemberView } from './defrag-plan';
import {
  NOSPACE_ALARM,
  defragConfigOf,
  defragTrigger,
  describeDefragDecision,
  planDefragMember,
} from './defrag-plan';
import { ordinalFor, votesNow } from './cluster-state';
import type { ClusterRef } from '../contracts/cluster-ref';
import type { DefragmentResult } from '../contracts/defrag';
import { ActivityKinds } from './activity-kinds';

const acts = proxyActivities<ClusterActivities>(ActivityKinds.operationStep);

// Longer than DEFRAG_CALL_TIMEOUT_MS (activities/defrag-activities.ts): etcd's answer ends a slow rewrite. The
// activities heartbeat while they wait on etcd, so a worker that died is noticed in 30 s, not 6 minutes.
const defragActs = proxyActivities<DefragActivities>(ActivityKinds.longStepWithHeartbeat);

const WAIT_INTERVAL = '1s';
const MIB = 1024 * 1024;
const mib = (bytes: number) => `${(bytes / MIB).toFixed(1)} MiB`;

/** The members as defrag-plan sees them in one observation. */
export function defragViews(ref: Pick<ClusterRef, 'name'>, o: ClusterObservation): DefragMemberView[] {
  const kube = new Map(o.kube.map((k) => [k.name, k]));
  return (o.etcd?.members ?? []).map((m) => ({
    id: m.id,
    name: m.name,
    ordinal: ordinalFor(ref.name, m.name),
    isLearner: m.isLearner,
    healthy: votesNow(m, kube.get(m.name)),
    ready: kube.get(m.name)?.pod?.ready === true,
    ...(m.dbSize !== undefined ? { dbSize: m.dbSize } : {}),
    ...(m.dbSizeInUse !== undefined ? { dbSizeInUse: m.dbSizeInUse } : {}),
    ...(m.raftIndex !== undefined ? { raftIndex: m.raftIndex } : {}),
  }));
}

function describeResult(r: DefragmentResult): string {
  if (!r.before || !r.after) return `${r.member} defragmented`;
  return `${r.member} defragmented: dbSize ${mib(r.before.dbSize)} -> ${mib(r.after.dbSize)} (in use ${mib(r.after.dbSizeInUse)})`;
}

export async function runDefragOperation(input: {
  ref: ClusterRef;
  spec: EtcdClusterSpec;
  /** The schedule's firing was what started this operation (the cluster workflow knows; the observation does not). */
  scheduleDue: boolean;
  details: (line: string) => void;
}): Promise<string> {
  const { ref, spec, details } = input;
  const first = await observe(ref, spec);
  const trigger = defragTrigger({
    members: defragViews(ref, first),
    alarms: first.etcd?.alarms ?? [],
    config: defragConfigOf(spec, input.scheduleDue),
  });
  if (!trigger) return 'nothing to defragment any more';
  const noSpace = trigger.trigger === 'NoSpace';
  details(trigger.message);
  if (noSpace) await compactForNoSpace(ref, first, details);
  const done = await defragmentOneByOne(ref, spec, trigger.members, details);
  const disarmed = await disarmNoSpace(ref, spec, trigger.members, noSpace, details);
  return `${trigger.trigger}: ${done.join('; ') || 'no member needed it'}${disarmed}`;
}

const observe = (ref: ClusterRef, spec: EtcdClusterSpec) =>
  acts.observeCluster({ ref, version: spec.version });

/** The voters that answer: where compaction and alarm disarming are sent. */
const voters = (o: ClusterObservation) =>
  (o.etcd?.members ?? []).filter((m) => !m.isLearner && m.reachable).map((m) => m.name);

/** NOSPACE: compact to the current revision first, so defragmentation has superseded revisions to free. */
async function compactForNoSpace(
  ref: ClusterRef,
  first: ClusterObservation,
  details: (line: string) => void,
): Promise<void> {
  details('compacting to the current revision (only superseded revisions go; every key keeps its value)');
  const c = await defragActs.compactToCurrentRevision({ ref, voters: voters(first) });
  await acts.recordEvent({
    ref,
    type: 'Normal',
    reason: 'Compacted',
    message: c.alreadyCompacted
      ? `revision ${c.revision} was already compacted`
      : `compacted to revision ${c.revision} to clear NOSPACE`,
  });
}

/** Defragments the members one at a time in defrag-plan's order; returns what each freed. */
async function defragmentOneByOne(
  ref: ClusterRef,
  spec: EtcdClusterSpec,
  members: readonly string[],
  details: (line: string) => void,
): Promise<string[]> {
  let pending = [...members];
  const done: string[] = [];
  for (;;) {
    const o = await observe(ref, spec);
    const decision = planDefragMember({
      members: defragViews(ref, o),
      ...(o.etcd?.leaderId !== undefined ? { leaderId: o.etcd.leaderId } : {}),
      pending,
    });
    if (decision.kind === 'Done') return done;
    details(describeDefragDecision(decision));
    if (decision.kind === 'Wait') {
      await sleep(WAIT_INTERVAL, { summary: decision.reason });
      continue;
    }
    if (decision.kind === 'MoveLeader') {
      await acts.moveLeader({ ref, from: decision.from.name, toId: decision.to.id });
      continue;
    }
    const result = await defragActs.defragmentMember({ ref, member: decision.member });
    pending = pending.filter((m) => m !== decision.member);
    done.push(describeResult(result));
    await acts.recordEvent({
      ref,
      type: 'Normal',
      reason: 'MemberDefragmented',
      message: describeResult(result),
    });
  }
}

/** After every member: disarm NOSPACE if it was the trigger or is still raised; fail if the live data cannot fit. */
async function disarmNoSpace(
  ref: ClusterRef,
  spec: EtcdClusterSpec,
  members: readonly string[],
  noSpace: boolean,
  details: (line: string) => void,
): Promise<string> {
  const after = await observe(ref, spec);
  const stillRaised = (after.etcd?.alarms ?? []).some((a) => a.alarm === NOSPACE_ALARM);
  if (!noSpace && !stillRaised) return '';
  const config = defragConfigOf(spec);
  const inUse = Math.max(0, ...(after.etcd?.members ?? []).map((m) => m.dbSizeInUse ?? 0));
  if (inUse >= config.quotaBytes) {
    // Disarming would only let the next write raise it again: the live data itself does not fit.
    throw ApplicationFailure.nonRetryable(
      `NOSPACE cannot be cleared: after compaction and defragmentation ${mib(inUse)} is still in use, ` +
        `at or above quota-backend-bytes ${config.quotaBytes} (${mib(config.quotaBytes)}); raise ` +
        `spec.options quota-backend-bytes (etcd suggests at most 8 GiB) or delete keys you no longer need`,
      FailureTypes.NoSpacePersists,
    );
  }
  details('disarming NOSPACE');
  const ids = await defragActs.disarmNoSpace({ ref, voters: voters(after) });
  await acts.recordEvent({
    ref,
    type: 'Normal',
    reason: 'NoSpaceCleared',
    message: `compacted, defragmented ${members.join(', ')} and disarmed NOSPACE (${ids.length} alarm${ids.length === 1 ? '' : 's'})`,
  });
  return ids.length > 0 ? '; NOSPACE disarmed, writes accepted again' : '; NOSPACE was no longer raised';
}
