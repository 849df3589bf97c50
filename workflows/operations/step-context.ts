// What a step shares with the operation running it, and the clean-ups removals leave under way for it to await.
import { proxyActivities } from '@temporalio/workflow';
import type { ClusterActivities } from '../../activities/cluster-activities';
import type { ClusterRef } from '../../contracts/cluster-ref';
import type { EtcdClusterSpec } from '../../crds/etcd-cluster';
import { ActivityKinds } from '../activity-kinds';

const acts = proxyActivities<ClusterActivities>(ActivityKinds.operationStep);

/** What a step needs from the operation running it. */
export interface StepContext {
  ref: ClusterRef;
  spec: EtcdClusterSpec;
  details: (line: string) => void;
  /** The members the operation last recorded (etcd's downgrade API asks them). */
  recordedMembers: () => string[];
  /** The learner this operation added and has not promoted: what its compensation removes. */
  pendingLearner?: { member: string; id: string };
  /** Removed members' clean-ups under way and not awaited yet (REMOVAL_CLEANUP_DEFERRED_PATCH). */
  deferred?: Promise<void>[];
  /** Removed members' clean-ups not started yet: the next removal goes first (REMOVALS_FROM_ONE_LOOK_PATCH). */
  postponed?: { member: string; start: () => Promise<void> }[];
  /**
   * The members this operation's removals that more followed removed: their Pods may still be there (their deletion
   * starts after the next removal, and takes its time), so later removals are not sent through them.
   */
  removedBefore?: string[];
}

/** Whether the last removal left its clean-up for after the next one: that one is taken from its look. */
export function nextRemovalFromLook(ctx: StepContext): boolean {
  return (ctx.postponed?.length ?? 0) > 0;
}

/** Leaves a clean-up under way for settleDeferred to await. */
export function defer(ctx: StepContext, cleanup: Promise<void>): void {
  // Handled here so that a failure surfaces where it is awaited (settleDeferred), not as an unhandled rejection.
  cleanup.catch(() => undefined);
  (ctx.deferred ??= []).push(cleanup);
}

/** Starts the clean-ups earlier removals postponed, leaving them under way like any deferred one. */
export function startPostponed(ctx: StepContext): void {
  for (const p of ctx.postponed?.splice(0) ?? []) defer(ctx, p.start());
}

/**
 * Waits for every clean-up a removal left under way or postponed: before an operation ends, continues as new or
 * looks at a cluster whose removed members' Pods must be seen going.
 */
export async function settleDeferred(ctx: StepContext): Promise<void> {
  startPostponed(ctx);
  const pending = ctx.deferred?.splice(0) ?? [];
  if (pending.length > 0) await Promise.all(pending);
}

/** The cluster's Services and PodDisruptionBudget for `voters`, made with the spec's additionalMetadata. */
export async function ensureClusterObjects(ctx: StepContext, voters: number): Promise<void> {
  await acts.ensureClusterObjects({
    ref: ctx.ref,
    voters,
    additionalMetadata: ctx.spec.additionalMetadata,
  });
}
