// plan() as the workflows call it: the decision rules that changed after histories were recorded are switched on
// here, each behind its patch, so a running workflow replays the decisions it made before.
import { patched } from '@temporalio/workflow';
import { quorumEvidence } from './cluster-state';
import { judgeQuorumLoss } from './quorum-loss';
import type { Decision, Desired, Observed } from './plan';
import { plan } from './plan';

/** Quorum shown only by etcd's linearizable member list is not QuorumLost (cluster-state.ts quorumEvidence). */
export const QUORUM_BY_MEMBER_LIST_PATCH = 'quorum-by-member-list';

/** A quorum lost for good is judged and gated (workflows/quorum-loss.ts) rather than waited on as QuorumLost. */
export const PERMANENT_QUORUM_LOSS_PATCH = 'permanent-quorum-loss';

/** A quorum lost for good with no member keeping its data is gated as a rebuild from the backup (rebuild-point.ts). */
export const REBUILD_FROM_BACKUP_PATCH = 'rebuild-from-backup';

/**
 * The next step, with every rule this code knows that the history allows. `recovery` (the EtcdCluster's uid and
 * approval annotation) is what the quorum-loss gate needs; callers without it never plan a recovery.
 */
export function planNow(
  desired: Desired,
  observed: Observed,
  recovery?: { uid: string; approval?: string },
): Decision {
  const judged = !recovery
    ? {}
    : permanentLoss(desired, observed)
      ? { recovery }
      : lossWithoutSurvivor(desired, observed)
        ? { recovery: { ...recovery, fromBackup: true } }
        : {};
  // Asked only when the rule decides differently, so histories that never met the case record no marker.
  const slowVoters = quorumEvidence(observed.etcd, observed.kube).proof === 'memberList';
  if (slowVoters && patched(QUORUM_BY_MEMBER_LIST_PATCH))
    return plan({ ...desired, quorumByMemberList: true, ...judged }, observed);
  return plan({ ...desired, ...judged }, observed);
}

/** A permanent loss with a survivor, asked of the patch only then: histories that never met one record no marker. */
export function permanentLoss(desired: Desired, observed: Observed): boolean {
  const verdict = judgeQuorumLoss(desired, observed);
  return verdict.kind === 'Permanent' && verdict.survivors.length > 0 && patched(PERMANENT_QUORUM_LOSS_PATCH);
}

/** A permanent loss with no survivor, asked of the patch only then: a recorded history waited on it as AllMembersLost. */
export function lossWithoutSurvivor(desired: Desired, observed: Observed): boolean {
  const verdict = judgeQuorumLoss(desired, observed);
  return verdict.kind === 'Permanent' && verdict.survivors.length === 0 && patched(REBUILD_FROM_BACKUP_PATCH);
}
