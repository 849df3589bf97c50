// The one home of the member views and the safety rules every planner applies to members: where a member stands
// (its Pod and claim against etcd's list), who votes now, who serves, quorum arithmetic, which removal keeps
// quorum, when a member is caught up, and who takes over leadership.
//
// Pure and sandbox-safe. The planners (plan.ts and its chains, rollout-plan.ts, upgrade-plan.ts, defrag-plan.ts),
// status (conditions.ts) and the operations decide with these functions and never restate them, so the rules
// that keep quorum cannot drift apart.
import type { StorageMedium } from '../crds/etcd-cluster';
import { memberName, memberOrdinal } from '../crds/labels';
import type { EtcdMemberView, EtcdView, KubeMemberView, Observed } from './plan-types';

// ---------------------------------------------------------------------------------------------------
// Member views

/**
 * Where one etcd member stands once its Kubernetes objects are taken into account:
 * - running:     its Pod exists (healthy or not yet);
 * - podMissing:  its data survives (claim kept) but no live Pod runs it: recreate the Pod, same member;
 * - terminating: its Pod is being deleted: wait for it to go before starting another;
 * - lost:        it has started once but its data is gone (claim missing or marked, or a Memory Pod gone):
 *                it must be removed and a fresh member added, never restarted on empty data under its id;
 * - zombie:      it never started and nothing can run it (no Pod, no claim), e.g. MemberAddAsLearner
 *                succeeded and the claim and Pod were never created: remove it, a later AddMember redoes it.
 */
export type MemberState = 'running' | 'podMissing' | 'terminating' | 'lost' | 'zombie';

export function podLive(k: KubeMemberView | undefined): boolean {
  const pod = k?.pod;
  return pod !== undefined && !pod.terminating && pod.phase !== 'Failed' && pod.phase !== 'Succeeded';
}

export function dataKept(k: KubeMemberView | undefined, medium: StorageMedium): boolean {
  if (medium === 'Memory') return podLive(k);
  return k?.claim !== undefined && !k.claim.terminating && !k.claim.dataLost;
}

export function memberState(
  m: EtcdMemberView,
  k: KubeMemberView | undefined,
  medium: StorageMedium,
): MemberState {
  const kept = dataKept(k, medium);
  if (m.started && !kept) return 'lost';
  if (podLive(k)) return 'running';
  if (k?.pod?.terminating) return 'terminating';
  if (kept) return 'podMissing';
  return 'zombie';
}

// Names the operator did not give sort last, so they are never preferred as "lowest" and go first as "newest".
export function ordinalFor(cluster: string, name: string): number {
  return memberOrdinal(cluster, name) ?? Number.MAX_SAFE_INTEGER;
}

/**
 * The lowest ordinal no etcd member and no Pod or claim uses. Lowest-free keeps names dense like a
 * StatefulSet's, so "newest" is "highest ordinal" and a replaced member gets its old name back once the
 * old objects are gone; names still being deleted count as used, so a new member never inherits them.
 */
export function nextMemberName(cluster: string, used: Iterable<string>): string {
  const taken = new Set<number>();
  for (const name of used) {
    const ordinal = memberOrdinal(cluster, name);
    if (ordinal !== undefined) taken.add(ordinal);
  }
  let ordinal = 0;
  while (taken.has(ordinal)) ordinal++;
  return memberName(cluster, ordinal);
}

/** Members the cluster has now: etcd's count when it answers, else the member Pods that run. */
export function currentSize(observed: Observed): number {
  if (observed.etcd) return observed.etcd.members.length;
  return observed.kube.filter((k) => podLive(k)).length;
}

/** One etcd member as the planner sees it: etcd's view, where it stands, whether it votes now, its ordinal. */
export interface ClusterMember extends EtcdMemberView {
  state: MemberState;
  healthy: boolean;
  ordinal: number;
}

/**
 * Whether a member votes now: etcd lists it as started, its status answers, and its Pod is live. A member
 * marked data-lost still votes until it is removed, so it counts for quorum even though it is about to go.
 */
export function votesNow(
  m: Pick<EtcdMemberView, 'started' | 'reachable'>,
  k: KubeMemberView | undefined,
): boolean {
  return m.started && m.reachable && podLive(k);
}

/**
 * What proves that a quorum of voters exists, read the same way by the planner and by the `Available` condition:
 * - votes:      at least a quorum of voters vote now (votesNow: listed as started, status answered, Pod live);
 * - memberList: fewer voters answered their own status in time, but etcd answered a linearizable member list,
 *               which only a quorum can serve: the others are slow to answer (a loaded machine, fresh TLS
 *               connections), and quorum holds. Too few voters are known to vote to change membership safely;
 * - none:       etcd did not answer a linearizable member list: quorum cannot be shown.
 */
export type QuorumProof = 'votes' | 'memberList' | 'none';

export interface QuorumEvidence {
  holds: boolean;
  proof: QuorumProof;
  /** Voters etcd lists, voters that vote now, and the votes a commit needs. */
  voters: number;
  voting: number;
  needed: number;
}

/** Whether a quorum holds and what shows it: the one rule for the planner and for status. */
export function quorumEvidence(etcd: EtcdView | undefined, kube: readonly KubeMemberView[]): QuorumEvidence {
  if (!etcd) return { holds: false, proof: 'none', voters: 0, voting: 0, needed: 0 };
  const byName = new Map(kube.map((k) => [k.name, k]));
  const voterViews = etcd.members.filter((m) => !m.isLearner);
  const voting = voterViews.filter((m) => votesNow(m, byName.get(m.name))).length;
  const needed = quorum(voterViews.length);
  const proof: QuorumProof = voting >= needed ? 'votes' : 'memberList';
  return { holds: true, proof, voters: voterViews.length, voting, needed };
}

/** Quorum shown only by the member list, in words (status and the planner's wait say the same). */
export function slowVotersMessage(q: QuorumEvidence): string {
  return `${q.voting} of ${q.voters} voters answered their status in time, ${q.needed} needed; etcd's linearizable member list answered, so a quorum holds`;
}

/** Every member etcd lists, with its Kubernetes objects taken into account. */
export function clusterMembers(
  etcd: EtcdView,
  kube: readonly KubeMemberView[],
  cluster: string,
  medium: StorageMedium,
): ClusterMember[] {
  const byName = new Map(kube.map((k) => [k.name, k]));
  return etcd.members.map((m) => ({
    ...m,
    state: memberState(m, byName.get(m.name), medium),
    healthy: votesNow(m, byName.get(m.name)),
    ordinal: ordinalFor(cluster, m.name),
  }));
}

/**
 * A member as the rolling planners (upgrade, downgrade, rollout, defrag) read it: who it is, whether it votes
 * now, and whether its Pod is Ready (what isServing judges).
 */
export function servingView(
  m: Pick<ClusterMember, 'id' | 'name' | 'ordinal' | 'isLearner' | 'healthy'>,
  pod: { ready: boolean } | undefined,
): { id: string; name: string; ordinal: number; isLearner: boolean; healthy: boolean; ready: boolean } {
  return {
    id: m.id,
    name: m.name,
    ordinal: m.ordinal,
    isLearner: m.isLearner,
    healthy: m.healthy,
    ready: pod?.ready === true,
  };
}

// ---------------------------------------------------------------------------------------------------
// Safety rules

/** What the rules read of a member: etcd's member id and whether it votes. */
interface MemberIdentity {
  id: string;
  isLearner: boolean;
}

type Health = MemberIdentity & { healthy: boolean };

/** Votes needed to commit anything in a cluster of `voters` voters. */
export function quorum(voters: number): number {
  return Math.floor(voters / 2) + 1;
}

/**
 * Whether removing member `id` keeps the cluster able to commit, both for the removal itself and after it.
 *
 * - The removal is a raft entry: a quorum of the current voters must be healthy to commit it.
 * - Afterwards a quorum of the remaining voters must be healthy, or the cluster is down once it applies.
 * - A learner does not vote, so only the first rule applies to it.
 * - The last voter is never removed.
 *
 * For 2 -> 1 this means both members must be healthy (quorum of 2 is 2). etcd calls removal from a
 * 2-member cluster unsafe because a failure of either member mid-removal leaves a 2-member configuration
 * with one live voter, which cannot commit anything; and a leader that removes itself may stop before the
 * follower learns the entry committed. The planner therefore also never removes the leader (it moves
 * leadership first), so in 2 -> 1 the healthy leader removes its healthy follower; if the follower dies
 * mid-way the cluster stalls only until its Pod restarts, because it is still a member.
 */
export function canRemove(members: readonly Health[], id: string): boolean {
  const target = members.find((m) => m.id === id);
  if (!target) return false;
  const voters = members.filter((m) => !m.isLearner);
  if (voters.filter((m) => m.healthy).length < quorum(voters.length)) return false;
  if (target.isLearner) return true;
  const remaining = voters.filter((m) => m.id !== id);
  if (remaining.length === 0) return false;
  return remaining.filter((m) => m.healthy).length >= quorum(remaining.length);
}

/** etcd promotes a learner only when its match index is at least 90% of the leader's (`isLearnerReady`). */
export const LEARNER_READY_RATIO = { numerator: 9n, denominator: 10n } as const;

/** Whether a learner is close enough to the leader's raft index that MemberPromote should succeed. */
export function learnerCaughtUp(
  learnerRaftIndex: string | undefined,
  leaderRaftIndex: string | undefined,
): boolean {
  if (learnerRaftIndex === undefined || leaderRaftIndex === undefined) return false;
  const { numerator, denominator } = LEARNER_READY_RATIO;
  return BigInt(learnerRaftIndex) * denominator >= BigInt(leaderRaftIndex) * numerator;
}

/**
 * How far behind the leader's raft index a restarted member (rollout, upgrade) may be and still count as caught up. The
 * observer reads each member's status at a slightly different moment, so under a steady write load even a
 * member in sync shows a lag of tens of entries; a member replaying its log after a restart lags by far more.
 */
export const MAX_RAFT_LAG = 1000n;

type RaftProgress = { raftIndex?: string };

/** Whether a restarted member is in sync enough to take the next member down. */
export function caughtUp(member: RaftProgress, leader: RaftProgress | undefined): boolean {
  if (member.raftIndex === undefined || leader?.raftIndex === undefined) return false;
  return BigInt(leader.raftIndex) - BigInt(member.raftIndex) <= MAX_RAFT_LAG;
}

/**
 * Whether a member serves for the purpose of taking another one down: it answers, and a voter's Pod is Ready
 * too. A rolling step (restart, upgrade, defragmentation) waits until every member serves, so quorum
 * survives the one member it takes down.
 */
export function isServing(m: { healthy: boolean; ready: boolean; isLearner: boolean }): boolean {
  return m.healthy && (m.isLearner || m.ready);
}

/**
 * Who takes leadership over from `from` among `candidates` (the caller passes the voters it trusts: healthy
 * ones, or ones already restarted): the most caught-up, ties to the lowest ordinal, so the election that
 * MoveLeader triggers is short. Undefined when no other candidate exists.
 */
export function leaderSuccessor<M extends MemberIdentity & RaftProgress & { ordinal: number }>(
  candidates: readonly M[],
  from: { id: string },
): M | undefined {
  const index = (m: M) => BigInt(m.raftIndex ?? '0');
  return candidates
    .filter((m) => !m.isLearner && m.id !== from.id)
    .sort((a, b) => (index(a) === index(b) ? a.ordinal - b.ordinal : index(a) > index(b) ? -1 : 1))[0];
}
