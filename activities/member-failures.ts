// Reads why a member's etcd exited, from the tail of its log that the kubelet keeps as the termination message.

/**
 * What etcd (3.5 and 3.6) prints when it restarts on a data dir that lost its raft log while the rest of
 * the cluster still counts it as a member. Which one depends on its --initial-cluster flag:
 * - it lists the cluster as it is now: etcd joins with an empty log, the leader sends a commit index the
 *   log cannot hold, and raft panics with "tocommit(13) is out of range [lastIndex(0)]. Was the raft log
 *   corrupted, truncated, or lost?". The kubelet keeps only the log's last 2048 bytes and the Go stack
 *   trace follows the panic line, so the panicking frame (`(*raftLog).commitTo`) counts too;
 * - it lists the cluster as it was when the member joined (fewer members): etcd takes the path of a
 *   member joining for the first time, which only a data dir without a WAL takes, and refuses with
 *   "discovery failed ... error validating peerURLs ...: member count is unequal";
 * - it is one of a brand-new cluster's initial members, started together with `--initial-cluster-state=new`: etcd
 *   takes the path of a member bootstrapping a new cluster, asks its peers, finds itself already started there, and
 *   refuses with "member 8e9e05c52164694d has already been bootstrapped" (etcd's guard against a second bootstrap).
 * Planning replaces a member for it only when etcd lists the member as started, so it had a WAL once
 * (workflows/plan.ts memberState); a learner failing its first start is not judged by it.
 */
const RAFT_LOG_LOST = [
  /Was the raft log corrupted, truncated, or lost\?/,
  /tocommit\(\d+\) is out of range \[lastIndex\(\d+\)\]/,
  /\(\*raftLog\)\.commitTo\(/,
  /discovery failed.*error validating peerURLs/,
  /member [0-9a-f]+ has already been bootstrapped/,
];

/**
 * True when a terminated etcd container's message shows its data no longer holds what the cluster
 * committed to it: the member can never rejoin with that data, only be removed and added afresh.
 */
export function reportsLostRaftLog(message: string | undefined): boolean {
  if (!message) return false;
  return RAFT_LOG_LOST.some((pattern) => pattern.test(message));
}
