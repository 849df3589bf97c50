// The one rule for which members an activity sends a cluster-wide etcd call to (member list, add, promote, remove, auth).
//
// Pure: callers map their Pods to CallCandidate. Learners refuse cluster RPCs ("rpc not supported for
// learner") and the etcd client picks any of its hosts per call, so the targets are the voters only; while no
// Pod is labelled a voter yet (the first member starting) any member Pod will do. A Pod that is going away
// (being deleted, or owned by a former EtcdCluster of the same name) is never a target.

export interface CallCandidate {
  /** The member Pod's name. */
  name: string;
  /** The Pod's role label (`voter` or `learner`), when it has one. */
  role: string | undefined;
  /** Being deleted, or owned by another EtcdCluster object: the garbage collector takes it. */
  going: boolean;
}

/** The members to send a cluster-wide call to, in the order given. */
export function callTargets(pods: readonly CallCandidate[]): string[] {
  const live = pods.filter((p) => !p.going && p.name !== '');
  const voters = live.filter((p) => p.role === 'voter');
  return (voters.length > 0 ? voters : live).map((p) => p.name);
}
