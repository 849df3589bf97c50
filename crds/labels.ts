// Label and annotation keys of the API and the member naming rule, shared so every part finds the same objects.
import { API_GROUP } from './etcd-cluster';

/** Labels the operator puts on the Pods and claims it owns; podLabels may not use this prefix. */
export const Labels = {
  /** The EtcdCluster's name. */
  cluster: `${API_GROUP}/cluster`,
  /** The member's name, `<cluster>-<ordinal>`. */
  member: `${API_GROUP}/member`,
  /** `voter` or `learner`; the client Service selects voters only. */
  role: `${API_GROUP}/role`,
} as const;

export const Annotations = {
  /**
   * On an EtcdCluster: set to a new value (any string, e.g. a timestamp) to retry an operation that was
   * cancelled or ran past its deadline, without changing the spec.
   */
  retry: `${API_GROUP}/retry`,
  /**
   * On a member's claim: "true" says the data on it cannot be trusted; the member is removed and re-added
   * as a fresh learner (the same path as a claim that disappeared).
   */
  dataLost: `${API_GROUP}/data-lost`,
  /**
   * On an EtcdCluster whose quorum is lost for good (status says PermanentQuorumLoss): set to the EtcdCluster's
   * uid to let the operator rebuild it from the surviving member with the newest data (docs/operations.md). A value
   * that is not the uid is refused; the operator removes the annotation when the recovery starts (used once).
   */
  approveRecovery: `${API_GROUP}/approve-recovery`,
  /**
   * Set to the EtcdCluster's uid to let the operator roll it back in place to spec.rollback (docs/backup-restore.md);
   * a value that is not the uid approves nothing; the operator removes the annotation when the rollback starts.
   */
  approveRollback: `${API_GROUP}/approve-rollback`,
  /**
   * On the claims and Pods of a brand-new cluster whose initial members start together: their names, comma-separated
   * (the Pods' --initial-cluster). A bootstrap interrupted half-way starts the rest with the same membership.
   */
  initialMembers: `${API_GROUP}/initial-members`,
  /**
   * On a member's claim: the etcd member id of the learner whose Pod the operator restarted once because etcd kept
   * it waiting on its own publish (contracts/learner-restart.ts); a learner is restarted at most once.
   */
  restartedLearner: `${API_GROUP}/restarted-learner`,
} as const;

/** Label selector of a cluster's member Pods, as status.selector and the scale subresource expect it. */
export function clusterSelector(cluster: string): string {
  return `${Labels.cluster}=${cluster}`;
}

/**
 * Member names are `<cluster>-<ordinal>`; the Pod, the claim and the etcd member name are all this
 * string, so an activity that retries finds its own earlier work by name.
 */
export function memberName(cluster: string, ordinal: number): string {
  return `${cluster}-${ordinal}`;
}

/** The ordinal of one of this cluster's member names, or undefined for a name the operator did not give. */
export function memberOrdinal(cluster: string, name: string): number | undefined {
  const prefix = `${cluster}-`;
  if (!name.startsWith(prefix)) return undefined;
  const rest = name.slice(prefix.length);
  if (!/^(0|[1-9][0-9]*)$/.test(rest)) return undefined;
  return Number(rest);
}
