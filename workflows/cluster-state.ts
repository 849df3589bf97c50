// The one home of the safety rules every planner applies to members: quorum arithmetic, which removal keeps
// quorum, who counts as serving, when a member is caught up, and who takes over leadership.
//
// Pure and sandbox-safe. The planners (plan.ts, rollout-plan.ts, upgrade-plan.ts, defrag-plan.ts) decide
// with these functions and never restate them, so the rules that keep quorum cannot drift apart.

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
