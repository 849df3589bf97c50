// Which learner the operator restarts because etcd keeps it waiting on its own publish: the one rule for the planner
// (workflows/plan-with-etcd.ts) and for the wait that watches a joining member (activities/cluster-observation.ts).
//
// A member that joins etcd 3.6 after its leader has applied 100 entries is sent a snapshot (the leader compacts its
// raft log to at least index 1 at every in-memory snapshot), and that snapshot is a copy of the leader's database as
// it is when it leaves. The joiner proposes its own `publish` (its name and client URLs) as soon as it hears from the
// leader, and the leader commits it within milliseconds, usually before the snapshot leaves; the joiner then applies
// the snapshot, which already holds that entry, and when the entry itself arrives it is skipped as applied without
// answering the request that waits on it (etcd's applyEntryNormal returns before it triggers the waiter when the
// entry is older than the backend's consistent index). The joiner serves clients only after etcd's request timeout
// (5 s plus two election timeouts, 7 s by default) asks again. Restarted at that point, it publishes at once: its
// data dir now holds the snapshot, so the new entry reaches it as an ordinary log entry.
//
// Seen from outside: etcd lists the learner as started (its publish was applied everywhere else), its client port
// does not answer, and its own readiness checks (which read linearizably through the leader, so it has applied the
// snapshot) pass. A learner is restarted at most once (its claim records its member id), so a client port that
// fails for another reason (a broken client certificate) never restarts it in a loop, and only a member with a
// claim is restarted: a Memory-medium member would lose its data with its Pod.
import type { EtcdMemberObservation, KubeMemberObservation } from './observation';

/** What the rule reads: etcd's members and each name's Pod and claim (a ClusterObservation, or the planner's view of one). */
export interface LearnerRestartInput {
  etcd?: {
    members: Pick<
      EtcdMemberObservation,
      'id' | 'name' | 'isLearner' | 'started' | 'reachable' | 'awaitingOwnPublish'
    >[];
  };
  kube: (Pick<KubeMemberObservation, 'name'> & {
    pod?: { terminating: boolean; uid?: string };
    claim?: { terminating: boolean; dataLost: boolean; restartedLearner?: string };
  })[];
}

/** The learner to restart and the Pod to restart it from (its uid, so a retried delete never hits a newer Pod). */
export interface LearnerRestart {
  member: string;
  id: string;
  podUid: string;
}

/** The first learner (by name) that waits on its own publish and has not been restarted yet; undefined otherwise. */
export function learnerToRestart(observation: LearnerRestartInput): LearnerRestart | undefined {
  const kube = new Map(observation.kube.map((k) => [k.name, k]));
  const waiting = (observation.etcd?.members ?? [])
    .filter((m) => m.isLearner && m.started && !m.reachable && m.awaitingOwnPublish === true)
    .sort((a, b) => a.name.localeCompare(b.name));
  for (const m of waiting) {
    const k = kube.get(m.name);
    if (!k?.pod || k.pod.terminating || !k.pod.uid) continue;
    if (!k.claim || k.claim.terminating || k.claim.dataLost) continue;
    if (k.claim.restartedLearner === m.id) continue;
    return { member: m.name, id: m.id, podUid: k.pod.uid };
  }
  return undefined;
}
