// Why a member Pod does not run, as the kubelet or scheduler said it: what observeCluster reports and the planner waits on.

/** Why a member Pod does not run, as the kubelet or scheduler said it. */
export interface MemberProblem {
  reason: MemberProblemReason;
  /** Names the Pod (or claim) and carries the kubelet's or scheduler's message. */
  message: string;
}

export type MemberProblemReason =
  'ImagePullFailed' | 'MemberCrashLooping' | 'PodUnschedulable' | 'ClaimPending';
