// plan() as the workflows call it: the decision rules that changed after histories were recorded are switched on
// here, each behind its patch, so a running workflow replays the decisions it made before.
import { patched } from '@temporalio/workflow';
import { quorumEvidence } from './cluster-state';
import { judgeQuorumLoss } from './quorum-loss';
import type { EtcdClusterRollback, EtcdClusterSpec } from '../crds/etcd-cluster';
import { rollbackGate } from './rebuild-point';
import type { Decision, Desired, Observed } from './plan';
import { plan } from './plan';

/** Quorum shown only by etcd's linearizable member list is not QuorumLost (cluster-state.ts quorumEvidence). */
export const QUORUM_BY_MEMBER_LIST_PATCH = 'quorum-by-member-list';

/** A quorum lost for good is judged and gated (workflows/quorum-loss.ts) rather than waited on as QuorumLost. */
export const PERMANENT_QUORUM_LOSS_PATCH = 'permanent-quorum-loss';

/** A quorum lost for good with no member keeping its data is gated as a rebuild from the backup (rebuild-point.ts). */
export const REBUILD_FROM_BACKUP_PATCH = 'rebuild-from-backup';

/** A brand-new cluster starts its initial members together rather than a seed that grows (plan-without-etcd.ts). */
export const BOOTSTRAP_TOGETHER_PATCH = 'bootstrap-together';

/** spec.auth with etcd's auth state unread is a wait (AuthUnknown), not converged (auth-plan.ts planAuth). */
export const AUTH_UNKNOWN_WAITS_PATCH = 'auth-unknown-waits';

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
  const auth = authUnread(desired, observed) ? { authUnknownWaits: true } : {};
  // Asked only when the rule decides differently, so histories that never met the case record no marker.
  const slowVoters = quorumEvidence(observed.etcd, observed.kube).proof === 'memberList';
  if (slowVoters && patched(QUORUM_BY_MEMBER_LIST_PATCH))
    return plan({ ...desired, quorumByMemberList: true, ...judged, ...auth }, observed);
  if (startsTogether(desired, observed))
    return plan({ ...desired, bootstrapTogether: true, ...judged, ...auth }, observed);
  return plan({ ...desired, ...judged, ...auth }, observed);
}

/**
 * spec.auth with etcd answering its member list but not its auth status. Asked of the patch only then: histories
 * that never met it record no marker (one that did planned nothing and called the cluster converged).
 */
function authUnread(desired: Desired, observed: Observed): boolean {
  return (
    desired.auth === true &&
    observed.etcd !== undefined &&
    observed.auth?.etcd.state === 'unknown' &&
    patched(AUTH_UNKNOWN_WAITS_PATCH)
  );
}

/**
 * Whether a cluster that never formed starts its initial members together: one of more than one member that is not
 * a restore, or one whose members already started together. Asked of the patch only then: histories that never
 * bootstrapped such a cluster record no marker.
 */
function startsTogether(desired: Desired, observed: Observed): boolean {
  if (observed.etcd !== undefined || observed.recorded.clusterId !== undefined) return false;
  const fresh = desired.replicas > 1 && !desired.restore;
  const begun = observed.kube.some((k) => k.initialMembers !== undefined);
  return (fresh || begun) && patched(BOOTSTRAP_TOGETHER_PATCH);
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

/** spec.rollback, approved by the approve-rollback annotation naming the uid, rolls the cluster back in place. */
export const ROLLBACK_IN_PLACE_PATCH = 'rollback-in-place';

/**
 * The approved rollback in place of the plan's step, when there is one to start: only over a plan with nothing
 * else to do (None: the cluster is whole and healthy), and only when etcd says every member is a healthy voter.
 * Asked of the patch only then: histories that never met one record no marker.
 */
export function withRollback(
  decision: Decision,
  input: {
    uid: string;
    replicas: number;
    rollback?: EtcdClusterRollback;
    approval?: string;
    observed: Pick<Observed, 'etcd'>;
  },
): Decision {
  if (!input.rollback || input.approval === undefined || decision.step.kind !== 'None') return decision;
  const gate = rollbackGate({
    uid: input.uid,
    replicas: input.replicas,
    rollback: input.rollback,
    approval: input.approval,
    ...(input.observed.etcd ? { etcd: input.observed.etcd } : {}),
  });
  if (gate.kind !== 'Rollback' || !patched(ROLLBACK_IN_PLACE_PATCH)) return decision;
  return { check: 'rollbackApproved', step: gate.step };
}

/** The approvals a user can give by annotation, as the cluster workflow holds them. */
export interface HeldApprovals {
  recoveryApproval?: string;
  rollbackApproval?: string;
}

/**
 * planNow with every gate a user's approval opens (recovery from a permanent loss, a rollback in place), so the
 * cluster workflow names none of them. `used` is the approval the decision starts an operation with: it is used once.
 */
export function planWithApprovals(
  desired: Desired,
  observed: Observed,
  cluster: { uid: string; spec: Pick<EtcdClusterSpec, 'replicas' | 'rollback'>; held: HeldApprovals },
): { decision: Decision; used?: keyof HeldApprovals } {
  const { uid, spec, held } = cluster;
  const decision = withRollback(
    planNow(desired, observed, {
      uid,
      ...(held.recoveryApproval !== undefined ? { approval: held.recoveryApproval } : {}),
    }),
    {
      uid,
      replicas: spec.replicas,
      ...(spec.rollback ? { rollback: spec.rollback } : {}),
      ...(held.rollbackApproval !== undefined ? { approval: held.rollbackApproval } : {}),
      observed,
    },
  );
  return decision.check === 'rollbackApproved' ? { decision, used: 'rollbackApproval' } : { decision };
}
