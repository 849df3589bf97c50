// A member's removal: etcd removes it, then its Pod and claim go and the PodDisruptionBudget follows the new size;
// in a scale-down, removals that more follow hand the next one their look and leave their clean-up for later.
import { patched, proxyActivities } from '@temporalio/workflow';
import type { ClusterActivities } from '../../activities/cluster-activities';
import { ActivityKinds } from '../activity-kinds';
import type { RemoveReason } from '../plan-types';
import type { StepContext } from './step-context';
import { defer, ensureClusterObjects, settleDeferred, startPostponed } from './step-context';

const acts = proxyActivities<ClusterActivities>(ActivityKinds.operationStep);

/**
 * The patch behind a removed member's clean-up (its Pod, its claim, the PodDisruptionBudget for the new size) going
 * out together once etcd has removed it, instead of one call after another: none waits on another, and the next
 * membership change waits on all of them.
 */
export const REMOVAL_CLEANUP_TOGETHER_PATCH = 'removal-cleanup-together';

/**
 * The patch behind a scale-down's removals following each other without waiting for the removed members' clean-up:
 * while the look before a removal counted more members than spec.replicas after it, the next look and removal go
 * ahead while the Pod, claim and PodDisruptionBudget of this one are dealt with; the last removal waits for every
 * clean-up, so the operation still ends with nothing left behind.
 */
export const REMOVAL_CLEANUP_DEFERRED_PATCH = 'removal-cleanup-deferred';

/**
 * The patch behind a scale-down's last removal waiting only for its member's Pod and claim deletions before the look
 * after it: the Services and PodDisruptionBudget for the new size are settled before the operation ends
 * (settleDeferred), while that look runs.
 */
export const REMOVAL_BUDGET_DEFERRED_PATCH = 'removal-budget-deferred';

/**
 * The patch behind a scale-down's removals following one another from one look: while more removals follow, the
 * next is planned on the look before this one less the member just removed (workflows/observation.ts
 * lookAfterRemoval), and this one's clean-up starts after it. Histories recorded before it look between removals
 * and start each clean-up at once.
 */
export const REMOVALS_FROM_ONE_LOOK_PATCH = 'scale-down-removals-from-one-look';

/**
 * The patch behind a scale-down ending on the look after its last removal (workflows/observation.ts
 * lookAfterRemoval): the plan on it saying nothing is left ends the operation, and status is written from it, without
 * a fresh look first (the cluster workflow looks afresh right after the end). Histories recorded before it looked
 * once more after the last removal's Pod and claim deletions.
 */
export const END_ON_LOOK_AFTER_REMOVAL_PATCH = 'scale-down-ends-on-look-after-removal';

/** Whether the end of a scale-down is planned on the look after this, its last, removal. */
export function endsOnLookAfterRemoval(step: { reason: RemoveReason }): boolean {
  return step.reason === 'ScaleDown' && patched(END_ON_LOOK_AFTER_REMOVAL_PATCH);
}

/** etcd removes the member; then its Pod and claim go and the PodDisruptionBudget follows the new size. */
export async function removeMember(
  ctx: StepContext,
  step: { member: string; id: string; reason: RemoveReason },
): Promise<void> {
  const { ref, spec } = ctx;
  // Members this operation removed before, whose Pods may still be there, are not asked (their etcd exits): named
  // only when there are (REMOVALS_FROM_ONE_LOOK_PATCH).
  const removed = ctx.removedBefore ?? [];
  await acts.removeMember({ ref, id: step.id, ...(removed.length > 0 ? { removed: [...removed] } : {}) });
  // What removals before this one held back starts now that etcd has removed this one too.
  startPostponed(ctx);
  if (patched(REMOVAL_CLEANUP_TOGETHER_PATCH)) {
    if (moreRemovalsFollow(ctx, step) && patched(REMOVALS_FROM_ONE_LOOK_PATCH)) {
      // The next removal goes out at once, from this removal's look: the worker's time goes to it, then to the
      // clean-ups of both (a scale 5 -> 3's second removal waited 0.4 s behind the first one's clean-up and a look).
      // The budget is not asked for here: the last removal asks for the same size (until then it counts the larger
      // cluster, which only refuses more evictions).
      (ctx.postponed ??= []).push({
        member: step.member,
        start: () =>
          Promise.all([
            acts.deleteMemberPod({ ref, member: step.member }),
            acts.deleteMemberClaim({ ref, member: step.member }),
          ]).then(() => undefined),
      });
      (ctx.removedBefore ??= []).push(step.member);
      return;
    }
    const podAndClaim = Promise.all([
      acts.deleteMemberPod({ ref, member: step.member }),
      acts.deleteMemberClaim({ ref, member: step.member }),
    ]);
    const budget = ensureClusterObjects(ctx, Math.max(spec.replicas, 1));
    const cleanup = Promise.all([podAndClaim, budget]).then(() => undefined);
    if (moreRemovalsFollow(ctx, step) && patched(REMOVAL_CLEANUP_DEFERRED_PATCH)) {
      defer(ctx, cleanup);
      return;
    }
    if (step.reason === 'ScaleDown' && patched(REMOVAL_BUDGET_DEFERRED_PATCH)) {
      // The next look must find the Pod and claim going (else it plans to delete them as orphans); the Services and
      // budget need not be settled for it. Until they are, the budget still counts the larger cluster, which only
      // refuses more evictions.
      const earlier = settleDeferred(ctx);
      defer(ctx, cleanup);
      await Promise.all([podAndClaim, earlier]);
      return;
    }
    await Promise.all([cleanup, settleDeferred(ctx)]);
    return;
  }
  await acts.deleteMemberPod({ ref, member: step.member });
  await acts.deleteMemberClaim({ ref, member: step.member });
  await ensureClusterObjects(ctx, Math.max(spec.replicas, 1));
}

/** Pure: a scale-down whose last look counted more members than spec.replicas plus this one removes another next. */
export function moreRemovalsFollow(
  ctx: Pick<StepContext, 'spec' | 'recordedMembers'>,
  step: { reason: RemoveReason },
): boolean {
  return step.reason === 'ScaleDown' && ctx.recordedMembers().length - 1 > ctx.spec.replicas;
}
