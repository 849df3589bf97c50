// One operation as a child workflow: observe, plan, act, one step at a time, until done; what differs between operations is in its module (workflows/operations/).
//
// Invariant: a cancelled or timed-out operation undoes only its own half-done step (a learner it added and
// has not promoted, a member it stopped to restart) and never anything that could cost quorum or data.
import {
  CancellationScope,
  continueAsNew,
  isCancellation,
  patched,
  proxyActivities,
  setCurrentDetails,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { ClusterActivities } from '../activities/cluster-activities';
import type { ClusterObservation } from '../contracts/observation';
import type { ActionStep, Decision, Observed, Step } from './plan';
import { describeStep } from './plan';
import { planNow } from './plan-now';
import { desiredOf, lookAfterRemoval, recordedAfter, takenFromLookAfterRemoval } from './observation';
import { takePreUpgradeSnapshot } from './upgrade-snapshot';
import { observeAuth } from './auth-step';
import { ActivityKinds } from './activity-kinds';
import type { OperationInput, OperationOutcome } from './operations/operation-module';
import { continuesOperation } from './operations/registry';
import {
  executeStep,
  nextRemovalFromLook,
  refuseRestore,
  refusesRestore,
  settleDeferred,
} from './operations/step-executors';
import { compensate as undoHalfDoneStep } from './operations/compensation';
import { endsOnLookAfterRemoval } from './operations/member-removal';
import type { OperationRunState } from './operation-run-state';
import { carriedOf, startOperationRun } from './operation-run-state';
import { LOOK_SEES_CHANGES_PATCH, waitOn } from './operation-wait';
import { operationResultMessage } from './operation-result';

export type { OperationCarried, OperationInput, OperationOutcome } from './operations/operation-module';

const acts = proxyActivities<ClusterActivities>(ActivityKinds.operationStep);

/** The patch behind skipping compensation while the EtcdCluster is being deleted (workflows/operation-workflow.ts). */
const SKIP_COMPENSATION_WHEN_GONE_PATCH = 'skip-compensation-when-cluster-gone';
/**
 * The patch behind an operation's first step going from the cluster workflow's look that started it. Asked in both
 * workflows: a child started by older code has no look to use, and a child whose first task older code ran looked
 * for itself, which its replay must repeat.
 */
export const FIRST_LOOK_PATCH = 'operation-first-look-from-parent';
/** Continue as new past this many history events even if the server has not suggested it yet. */
const CONTINUE_AS_NEW_EVENTS = 5000;

export async function clusterOperationWorkflow(input: OperationInput): Promise<OperationOutcome> {
  const s = startOperationRun(input);
  const { spec } = input;
  let deadlinePassed = false;
  const work = new CancellationScope();
  const deadline = CancellationScope.cancellable(async () => {
    await sleep(Math.max(s.deadlineAt - Date.now(), 0), {
      summary: `progress deadline ${spec.progressDeadlineSeconds}s`,
    });
    deadlinePassed = true;
    work.cancel();
  });
  deadline.catch(() => undefined);
  try {
    const message = await work.run(() => run(s));
    return {
      result: 'Succeeded',
      message,
      steps: s.steps,
      recorded: s.recorded,
      ...(s.endLook ? { endLook: s.endLook } : {}),
    };
  } catch (err) {
    if (!isCancellation(err)) throw err;
    const undone = await CancellationScope.nonCancellable(() => compensate(s));
    if (deadlinePassed) {
      return {
        result: 'DeadlineExceeded',
        message: `no progress within ${spec.progressDeadlineSeconds}s after ${s.steps} step(s), stalled at: ${s.teller.told.lastLine}; ${undone}`,
        steps: s.steps,
        recorded: s.recorded,
      };
    }
    // Cancelled from outside (e.g. `temporal workflow cancel`): report what was undone, then end as cancelled.
    setCurrentDetails(`**${input.summary}**\n\ncancelled after ${s.steps} step(s); ${undone}`);
    s.teller.memo(`cancelled after ${s.steps} step(s); ${undone}`);
    throw err;
  }
}

/** Observe, plan, take one step; until the plan says something this operation does not do. */
async function run(s: OperationRunState): Promise<string> {
  const { ref, spec, type } = s.input;
  if (s.module.run) return s.module.run(s.ctx);
  for (;;) {
    await continueIfLong(s);
    const { observation, observed, versionKnown, derived } = await observe(s);
    const decision: Decision = planNow(desiredOf(ref, spec, versionKnown), observed);
    const step: Step = decision.step;
    const after = nextRemovalFromLook(s.stepCtx) ? 'removalThatMoreFollow' : 'lastRemoval';
    if (derived && !takenFromLookAfterRemoval(step, after)) {
      // Anything but another removal (or, after the last one, the end) is decided on a fresh look, which must find
      // the removed members' Pods going.
      await settleDeferred(s.stepCtx);
      continue;
    }
    if (refusesRestore(step)) await refuseRestore(ref, step.message);
    if (step.kind === 'Wait') {
      await waitOn(s, step, observed, observation);
      continue;
    }
    s.wait = undefined;
    if (step.kind === 'None') {
      await settleDeferred(s.stepCtx);
      s.endLook = observation;
      return operationResultMessage(type, step, s.snapshotUri);
    }
    if (!continuesOperation(type, step, spec.replicas)) {
      await settleDeferred(s.stepCtx);
      return withSnapshotNote(s, `done; next: ${describeStep(step)}`);
    }
    s.steps += 1;
    s.teller.details(describeStep(step), undefined, observation);
    await execute(s, step);
    // The next removal, or the end after a scale-down's last one, goes from this look less the member just removed:
    // no read of the cluster in between.
    if (step.kind === 'RemoveMember' && (nextRemovalFromLook(s.stepCtx) || endsOnLookAfterRemoval(step))) {
      s.lookAfterRemoval = lookAfterRemoval(observation, step);
    }
  }
}

function withSnapshotNote(s: OperationRunState, message: string): string {
  return s.snapshotUri ? `${message}; pre-upgrade snapshot ${s.snapshotUri}` : message;
}

/** A long operation goes on in a fresh run with its progress and compensation, long before Temporal's history limits. */
async function continueIfLong(s: OperationRunState): Promise<void> {
  const info = workflowInfo();
  if (!info.continueAsNewSuggested && info.historyLength < CONTINUE_AS_NEW_EVENTS) return;
  // A removal's clean-up under way is not carried: it ends in this run.
  await settleDeferred(s.stepCtx);
  const { firstLook: _used, ...input } = s.input;
  await continueAsNew<typeof clusterOperationWorkflow>({
    ...input,
    recorded: s.recorded,
    carried: carriedOf(s),
  });
}

/** One fresh look: the cluster, what the module asks besides, and auth while it is not known to be on. */
async function observe(
  s: OperationRunState,
): Promise<{ observation: ClusterObservation; observed: Observed; versionKnown: boolean; derived: boolean }> {
  const { ref, spec } = s.input;
  const derived = s.lookAfterRemoval;
  s.lookAfterRemoval = undefined;
  // What the watcher signals from here on is news this look may miss; the wait after it looks again at once. A look
  // derived from the last one reads nothing: news stays news for the fresh look after it.
  if ((s.changesDuringLook ??= patched(LOOK_SEES_CHANGES_PATCH)) && !derived) s.worldChanged = false;
  // With the spec, Pods are compared with its template (rollouts); an added input field replays as before.
  const handed = s.firstLook;
  s.firstLook = undefined;
  const observation =
    derived ??
    (handed && patched(FIRST_LOOK_PATCH)
      ? handed
      : await acts.observeCluster({ ref, version: spec.version, spec }));
  s.recorded = recordedAfter(s.recorded, observation);
  const extra = s.module.observe ? await s.module.observe(s.ctx, observation) : {};
  // Only a cluster with spec.auth asks: histories of clusters without it keep their command sequence.
  const auth = spec.auth && !s.authSeenEnabled ? await observeAuth(ref) : undefined;
  if (auth?.etcd.state === 'enabled') s.authSeenEnabled = true;
  const observed: Observed = {
    kube: observation.kube,
    recorded: s.recorded,
    ...(observation.etcd ? { etcd: observation.etcd } : {}),
    ...extra,
    ...(auth ? { auth } : {}),
  };
  return { observation, observed, versionKnown: observation.versionKnown, derived: derived !== undefined };
}

async function execute(s: OperationRunState, step: ActionStep): Promise<void> {
  const { ref, spec } = s.input;
  const before = s.module.snapshotBefore;
  // Before a version change touches anything: the snapshot spec.backup asks for (a failure ends the operation here).
  if (before && spec.backup && !s.snapshotTaken && before.includes(step.kind)) {
    s.snapshotUri = await takePreUpgradeSnapshot({
      ref,
      spec,
      operationWorkflowId: workflowInfo().workflowId,
      details: s.teller.details,
    });
    s.snapshotTaken = true;
  }
  await executeStep(s.stepCtx, step);
}

/** Undo what this operation left half-done; runs even when the operation was cancelled. */
async function compensate(s: OperationRunState): Promise<string> {
  const { ref } = s.input;
  // Deleting the EtcdCluster cancels the operation: its members go with it (owner references), so undoing a
  // step would only wait for members that no longer answer (a removal retried for ever, a Pod started for
  // nobody). Histories recorded before this check undo as they did.
  if (patched(SKIP_COMPENSATION_WHEN_GONE_PATCH) && (await acts.clusterGoingAway({ ref }))) {
    s.stepCtx.pendingLearner = undefined;
    return 'nothing undone: the EtcdCluster is being deleted and its members go with it';
  }
  return undoHalfDoneStep(s.module.compensation, s.stepCtx, s.snapshotUri);
}
