// How each kind of step is carried out, shared by every operation that takes it: one case per StepKind, each a few idempotent activities.
//
// Invariant: a step records what compensation must undo (the learner it added) before it can be interrupted
// after that change; no step removes a voter or data the plan did not name.
import { ActivityFailure, ApplicationFailure, proxyActivities, sleep } from '@temporalio/workflow';
import type { ClusterActivities } from '../../activities/cluster-activities';
import type { DowngradeActivities } from '../../activities/downgrade-activities';
import type { RestoreActivities } from '../../activities/restore-activities';
import type { RestoreInit } from '../../activities/restore-manifests';
import type { ClusterRef } from '../../contracts/cluster-ref';
import { FailureTypes, Reasons } from '../../crds/conditions';
import { ActivityKinds } from '../activity-kinds';
import { enableAuthStep, rotateAuthStep } from '../auth-step';
import { DowngradeEvents } from '../downgrade-steps';
import type { ActionStep, Step } from '../plan';
import { executeRolloutStep } from '../rollout-execute';
import { removeMember } from './member-removal';
import type { StepContext } from './step-context';
import { ensureClusterObjects } from './step-context';

export type { StepContext } from './step-context';
export { nextRemovalFromLook, settleDeferred } from './step-context';

const acts = proxyActivities<ClusterActivities>(ActivityKinds.operationStep);

// Activities that wait inside themselves (addLearner's refusals) heartbeat on every poll: a worker that died
// is noticed within the heartbeat timeout, not the 30 s start-to-close.
const waitingActs = proxyActivities<Pick<ClusterActivities, 'addLearner' | 'stopLearnerPod'>>(
  ActivityKinds.waitingPoll,
);

// The restore preparation only reads; registered beside the snapshot activities.
const restoreActs = proxyActivities<RestoreActivities>(ActivityKinds.operationStep);

// etcd's downgrade API (activities/downgrade-activities.ts).
const downgradeActs = proxyActivities<DowngradeActivities>(ActivityKinds.operationStep);

// How often a restore whose EtcdSnapshot has not succeeded yet looks again.
const RESTORE_SOURCE_INTERVAL = '5s';
// A learner not caught up yet is promoted at a later turn, after this pause.
const WAIT_INTERVAL = '1s';
// etcd's refusal of a new member lasts until its 5 s health interval has passed: addLearner asks again
// inside the activity for up to NOT_READY_WAIT_MS; the workflow asks a few more times after that.
const NOT_READY_INTERVAL = '500ms';
const NOT_READY_ASKS = 20;
const NOT_READY_WAIT_MS = 8000;

/** A permanent restore failure ends the operation Failed (with an Event): no restart can fix it. */
export async function refuseRestore(ref: ClusterRef, message: string): Promise<never> {
  await acts.recordEvent({ ref, type: 'Warning', reason: Reasons.RestoreFailed, message });
  throw ApplicationFailure.nonRetryable(message, FailureTypes.RestoreFailed);
}

/** Whether a wait is a restore that cannot succeed: the operation ends Failed instead of waiting. */
export function refusesRestore(step: Step): step is Extract<Step, { kind: 'Wait' }> {
  return step.kind === 'Wait' && step.reason === Reasons.RestoreFailed;
}

/**
 * The seed's restore init container when spec.bootstrap.restore is set; 'waiting' while the named
 * EtcdSnapshot has not succeeded (nothing is created meanwhile); a failed snapshot ends the operation.
 */
async function seedRestore(ctx: StepContext, member: string): Promise<RestoreInit | undefined | 'waiting'> {
  const { ref, spec, details } = ctx;
  if (!spec.bootstrap?.restore) return undefined;
  const prepared = await restoreActs.prepareRestore({ ref, spec, member });
  if (prepared.state === 'ready') {
    details(`restoring ${member} from ${prepared.uri}`);
    return prepared.init;
  }
  if (prepared.state === 'refused') return refuseRestore(ref, prepared.message);
  details(`waiting for the restore source: ${prepared.message}`);
  await sleep(RESTORE_SOURCE_INTERVAL, { summary: prepared.message });
  return 'waiting';
}

async function createSeed(ctx: StepContext, member: string): Promise<void> {
  const { ref, spec } = ctx;
  const restore = await seedRestore(ctx, member);
  if (restore === 'waiting') return;
  await ensureClusterObjects(ctx, spec.replicas);
  await acts.createMemberClaim({ ref, spec, member });
  await acts.createMemberPod({ ref, spec, member, mode: 'seed', ...(restore ? { restore } : {}) });
}

/**
 * A brand-new cluster's initial members, started together: every claim first (so a Pod always finds its claim, and the
 * membership is written before any etcd runs), then every Pod, each with --initial-cluster naming them all. Each is
 * created only if absent, so after a crash this starts the rest with the same membership.
 */
async function startInitialMembers(ctx: StepContext, members: string[]): Promise<void> {
  const { ref, spec } = ctx;
  await ensureClusterObjects(ctx, members.length);
  await Promise.all(
    members.map((member) => acts.createMemberClaim({ ref, spec, member, initialMembers: members })),
  );
  await Promise.all(
    members.map((member) =>
      acts.createMemberPod({ ref, spec, member, mode: 'seed', initialMembers: members }),
    ),
  );
}

async function addMember(ctx: StepContext, member: string): Promise<void> {
  const { ref, spec, details } = ctx;
  await ensureClusterObjects(ctx, spec.replicas);
  await acts.createMemberClaim({ ref, spec, member });
  let added = await waitingActs.addLearner({ ref, member, waitMs: NOT_READY_WAIT_MS });
  // Waiting here, not in the plan loop: the claim created above has no member yet, and a fresh plan would
  // take it for an orphan. A refusal that outlasts etcd's health interval goes back to planning.
  for (let asked = 1; 'notReady' in added && asked < NOT_READY_ASKS; asked++) {
    details(`adding member ${member}: ${added.notReady}`);
    await sleep(NOT_READY_INTERVAL, { summary: added.notReady });
    added = await waitingActs.addLearner({ ref, member, waitMs: NOT_READY_WAIT_MS });
  }
  if ('notReady' in added) return;
  const { id } = added;
  ctx.pendingLearner = { member, id };
  details(`member ${member} added as learner, starting its Pod`);
  await acts.createMemberPod({ ref, spec, member, mode: 'join' });
  details(`member ${member} added as learner, catching up`);
}

async function enableDowngrade(
  ctx: StepContext,
  step: Extract<ActionStep, { kind: 'EnableDowngrade' }>,
): Promise<void> {
  const { ref, details } = ctx;
  const members = ctx.recordedMembers();
  let result: Awaited<ReturnType<DowngradeActivities['enableDowngrade']>>;
  try {
    result = await downgradeActs.enableDowngrade({ ref, members, targetVersion: step.targetVersion });
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : undefined;
    if (cause instanceof ApplicationFailure && cause.type === FailureTypes.DowngradeRefused) {
      await acts.recordEvent({
        ref,
        type: 'Warning',
        reason: DowngradeEvents.refused,
        message: cause.message,
      });
      throw ApplicationFailure.nonRetryable(
        `${cause.message}; no member was restarted`,
        FailureTypes.DowngradeRefused,
      );
    }
    throw err;
  }
  if (result === 'enabled') {
    await acts.recordEvent({
      ref,
      type: 'Normal',
      reason: DowngradeEvents.enabled,
      message: `etcd downgrade to ${step.targetVersion} enabled (members run ${step.from}; spec.version ${step.to})`,
    });
  }
  details(
    result === 'already-at-target'
      ? `etcd's cluster version is already ${step.targetVersion}`
      : `etcd downgrade to ${step.targetVersion} enabled; waiting for etcd to move the cluster version`,
  );
}

async function recreatePod(
  ctx: StepContext,
  step: Extract<ActionStep, { kind: 'RecreatePod' }>,
): Promise<void> {
  const { ref, spec } = ctx;
  if (step.id) {
    await acts.createMemberPod({ ref, spec, member: step.member, mode: 'restart' });
    return;
  }
  // A seed that never answered: started again as it was first, restore included (the agent keeps a data dir
  // that already holds a member).
  const restore = await seedRestore(ctx, step.member);
  if (restore === 'waiting') return;
  await acts.createMemberPod({
    ref,
    spec,
    member: step.member,
    mode: 'seed',
    ...(restore ? { restore } : {}),
  });
}

/**
 * A learner etcd keeps waiting on its own publish (contracts/learner-restart.ts): its Pod stopped (its claim records
 * the restart first) and started again on its claim, where etcd publishes at once; an Event says why.
 */
async function restartLearner(
  ctx: StepContext,
  step: Extract<ActionStep, { kind: 'RestartLearner' }>,
): Promise<void> {
  const { ref, spec } = ctx;
  await waitingActs.stopLearnerPod({ ref, member: step.member, id: step.id, podUid: step.podUid });
  await acts.createMemberPod({ ref, spec, member: step.member, mode: 'restart' });
  await acts.recordEvent({
    ref,
    type: 'Normal',
    reason: 'LearnerRestarted',
    message: `learner ${step.member} applied its leader's snapshot, which already held its own publish, and etcd would have let it answer only after its request timeout; its Pod was restarted on its claim`,
  });
}

/** Carries out one step. */
export async function executeStep(ctx: StepContext, step: ActionStep): Promise<void> {
  const { ref, spec, details } = ctx;
  switch (step.kind) {
    case 'UpgradeMember': {
      const deleted = await acts.deleteMemberPodForUpgrade({ ref, member: step.member, version: step.to });
      details(
        deleted === 'already-upgraded'
          ? `member ${step.member} already runs ${step.to}`
          : `member ${step.member} stopped; restarting on ${step.to} with its claim and member id`,
      );
      return;
    }
    case 'EnableDowngrade':
      return enableDowngrade(ctx, step);
    case 'RolloutMember':
    case 'UpdateMemberMetadata':
    case 'ExpandClaim':
      await executeRolloutStep({ ref, spec, step, details });
      return;
    case 'Bootstrap':
      // Only a plan behind the bootstrap-together patch names `members` (workflows/plan-now.ts).
      return step.members ? startInitialMembers(ctx, step.members) : createSeed(ctx, step.member);
    case 'AddMember':
      return addMember(ctx, step.member);
    case 'PromoteLearner': {
      const result = await acts.promoteLearner({ ref, member: step.member, id: step.id });
      if (result === 'not-caught-up') {
        await sleep(WAIT_INTERVAL, { summary: `learner ${step.member} catching up` });
        return;
      }
      if (ctx.pendingLearner?.id === step.id) ctx.pendingLearner = undefined;
      await ensureClusterObjects(ctx, spec.replicas);
      return;
    }
    case 'RestartLearner':
      return restartLearner(ctx, step);
    case 'RemoveMember':
      return removeMember(ctx, step);
    case 'MoveLeader':
      await acts.moveLeader({ ref, from: step.from.name, toId: step.to.id });
      return;
    case 'RecreatePod':
      return recreatePod(ctx, step);
    case 'Resume':
      await ensureClusterObjects(ctx, Math.max(spec.replicas, 1));
      await acts.createMemberPod({ ref, spec, member: step.member, mode: 'restart' });
      return;
    case 'DeleteOrphan':
      await acts.deleteMemberPod({ ref, member: step.member });
      await acts.deleteMemberClaim({ ref, member: step.member });
      return;
    case 'ReplacePod':
      // Its etcd never ran in this Pod; the claim stays, and the next plan starts the member from the spec.
      await acts.deleteMemberPod({ ref, member: step.member });
      return;
    case 'Pause':
      await acts.deleteMemberPod({ ref, member: step.member });
      return;
    case 'EnableAuth':
      details(await enableAuthStep(ref, details));
      return;
    case 'RotateAuth':
      details(await rotateAuthStep(ref));
      return;
    case 'Defrag':
      // Unreachable: the Defrag module runs its own loop before any step executes.
      throw new Error('a Defrag step reached the membership executor');
    case 'RecoverQuorum':
      // Unreachable: the Recover module runs its own loop (workflows/operations/recover.ts).
      throw new Error('a RecoverQuorum step reached the membership executor');
    case 'Rebuild':
      // Unreachable: the Rebuild module runs its own loop (workflows/operations/rebuild.ts).
      throw new Error('a Rebuild step reached the membership executor');
  }
}
