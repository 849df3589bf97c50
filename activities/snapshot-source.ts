// Picks the member a snapshot streams from: a healthy follower when there is one, so the leader keeps its disk and network for the cluster.

export interface SourceCandidate {
  name: string;
  isLearner: boolean;
  /** Answered its own Maintenance.Status just now. */
  reachable: boolean;
  leader: boolean;
  /** Raft index it reported; a follower far behind the others gives an older snapshot. */
  raftIndex?: bigint;
}

export type SourceChoice = { member: string; why: string } | { member?: undefined; why: string };

/**
 * Voters only (a learner's data may lag and it refuses some RPCs). Among reachable voters, a follower whose
 * raft index is the highest among followers, else the leader. Names break ties, so the choice is stable.
 */
export function pickSnapshotSource(members: SourceCandidate[]): SourceChoice {
  const voters = members.filter((m) => !m.isLearner && m.reachable);
  if (voters.length === 0) return { why: 'no voter answers' };
  const followers = voters
    .filter((m) => !m.leader)
    .sort((a, b) => {
      const ai = a.raftIndex ?? 0n;
      const bi = b.raftIndex ?? 0n;
      return ai === bi ? a.name.localeCompare(b.name) : bi > ai ? 1 : -1;
    });
  const follower = followers[0];
  if (follower) return { member: follower.name, why: 'a healthy follower' };
  const leader = voters.find((m) => m.leader) ?? voters[0];
  return leader ? { member: leader.name, why: 'the only healthy voter' } : { why: 'no voter answers' };
}
