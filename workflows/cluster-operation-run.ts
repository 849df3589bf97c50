// How the cluster workflow runs one operation: as a child workflow in a scope that deleting the EtcdCluster
// cancels, its steps mirrored into status while it runs, and its end recorded (last operation, halt, Event).
// The operation itself is its module's business (workflows/operations/); nothing here names one.
import {
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  ChildWorkflowCancellationType,
  ChildWorkflowFailure,
  ParentClosePolicy,
  condition,
  getExternalWorkflowHandle,
  patched,
  setCurrentDetails,
  startChild,
} from '@temporalio/workflow';
import type { EventReason } from '../contracts/event-reasons';
import { membersChangedSignal, SearchAttributes } from '../contracts/messages';
import type { ClusterObservation } from '../contracts/observation';
import { Reasons } from '../crds/conditions';
import type { EtcdClusterStatus, OperationResult, OperationType } from '../crds/etcd-cluster';
import type { ClusterRunState } from './cluster-run-state';
import { clusterActs as acts } from './cluster-run-state';
import { publishLook, refreshMembers } from './cluster-status';
import { clusterOperationWorkflow } from './operation-workflow';
import type { OperationInput, OperationModule } from './operations/operation-module';
import { operationModule } from './operations/registry';
import { membersRunning } from './upgrade-halt';

/** The patch behind refreshing status.members while an Upgrade or Downgrade runs (histories before it did not). */
const MEMBER_VERSIONS_DURING_UPGRADE_PATCH = 'member-versions-during-upgrade';
/**
 * The patch behind the operation mirror that observes once per new step (status follows every operation, and
 * is written only when it changed), forwards the watcher's member changes to the operation, and lets a new
 * spec generation supersede an operation waiting on a member Pod that cannot run.
 */
const STEP_MIRROR_PATCH = 'operation-step-mirror-v2';
/**
 * The patch behind passing a member change on to the operation without waiting for Temporal to deliver it: a signal
 * to an operation that ended meanwhile failed only ~2 s later (external workflow not found), and the cluster
 * workflow, waiting on it, noticed the end, told it and started the next operation that much later (seen at the end
 * of CI scale-downs, whose Pod deletions signal member changes as the operation ends).
 */
const MEMBERS_FORWARD_UNAWAITED_PATCH = 'members-forward-unawaited';
/**
 * The patch behind writing status from the look an operation ended on (OperationOutcome.endLook), together with its
 * end's Event, instead of after the Event and a look of the cluster workflow's own: a finished scale-down was shown
 * still running for about 0.5 s more. The cluster workflow looks afresh right after, as before (startOperation).
 */
export const OPERATION_END_LOOK_PATCH = 'operation-end-look';
/**
 * The patch behind writing a step's status from the look the operation sent with it (operation-step-teller.ts
 * STEP_LOOK_PATCH) instead of observing the cluster again: asked only when a step comes with a look.
 */
const MIRROR_STEP_LOOK_PATCH = 'operation-mirror-step-look';

const RESULT_EVENT: Record<OperationResult, { type: 'Normal' | 'Warning'; reason: EventReason }> = {
  Succeeded: { type: 'Normal', reason: 'OperationSucceeded' },
  Failed: { type: 'Warning', reason: 'OperationFailed' },
  Cancelled: { type: 'Warning', reason: 'OperationCancelled' },
  DeadlineExceeded: { type: 'Warning', reason: Reasons.Stalled },
};

interface Ending {
  result: OperationResult;
  message: string;
  /** The look the operation ended on, when its plan found nothing left to do. */
  endLook?: ClusterObservation;
}

/**
 * Runs one operation to its end and records how it ended. Without `publishStart` the caller has already published
 * its start; with it, the start's status write and Event are sent in the same workflow task as the child's start,
 * and awaited before the child's steps are mirrored (so no step's status is overwritten by the start's).
 */
export async function runOperation(
  s: ClusterRunState,
  type: OperationType,
  opInput: OperationInput,
  workflowId: string,
  publishStart?: () => Promise<void>,
): Promise<void> {
  const module = operationModule(type);
  let started: Promise<unknown> | undefined;
  if (publishStart) {
    started = Promise.all([publishStart(), announceStart(s, type, opInput, workflowId)]);
    // Awaited in runChild; this keeps a failure that comes first from going unhandled meanwhile.
    started.catch(() => undefined);
  } else await announceStart(s, type, opInput, workflowId);
  const mirrorV2 = patched(STEP_MIRROR_PATCH);
  s.supersededBy = undefined;
  s.membersChangedDuringOperation = false;
  const scope = new CancellationScope();
  s.operationScope = scope;
  if (s.deleted) scope.cancel();
  let ending: Ending;
  try {
    const outcome = await scope.run(() => runChild(s, type, opInput, workflowId, module, mirrorV2, started));
    ending = {
      result: outcome.result,
      message: outcome.message,
      ...(outcome.endLook ? { endLook: outcome.endLook } : {}),
    };
    s.recorded = { ...outcome.recorded, paused: module.pausedAfter ?? s.recorded.paused };
  } catch (err) {
    ending = await endingOfFailure(s, err, module, opInput);
  }
  await recordEnding(s, type, opInput, workflowId, ending);
}

async function announceStart(
  s: ClusterRunState,
  type: OperationType,
  opInput: OperationInput,
  workflowId: string,
): Promise<void> {
  s.current = { type, workflowId, startedAt: new Date().toISOString(), step: 'starting' };
  s.currentWaitReason = undefined;
  setCurrentDetails(`**${opInput.summary}** running as \`${workflowId}\``);
  await acts.recordEvent({
    ref: s.ref,
    type: 'Normal',
    reason: `${type}Started`,
    message: `${opInput.summary} (${workflowId})`,
  });
}

async function runChild(
  s: ClusterRunState,
  type: OperationType,
  opInput: OperationInput,
  workflowId: string,
  module: OperationModule,
  mirrorV2: boolean,
  started?: Promise<unknown>,
) {
  const { ref } = s;
  const child = await startChild(clusterOperationWorkflow, {
    workflowId,
    args: [opInput],
    staticSummary: opInput.summary,
    staticDetails: `Operation **${type}** on EtcdCluster ${ref.namespace}/${ref.name} for spec generation ${opInput.generation}. Cancel it with \`temporal workflow cancel --workflow-id ${workflowId}\`.`,
    typedSearchAttributes: [
      { key: SearchAttributes.clusterNamespace, value: ref.namespace },
      { key: SearchAttributes.clusterName, value: ref.name },
      { key: SearchAttributes.clusterUid, value: ref.uid },
      { key: SearchAttributes.operationType, value: type },
    ],
    parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
    cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
  });
  const done = child.result();
  let finished = false;
  void done.then(
    () => (finished = true),
    () => (finished = true),
  );
  // Not cancellable: the start's status write is on its way whatever happens to the operation.
  if (started) await CancellationScope.nonCancellable(() => started);
  // Mirror the child's current step into status while it runs. Not cancellable: when the scope is
  // cancelled this loop must keep waiting for the child to finish its compensation, or the workflow
  // would go on (and end, on deletion) while the child still runs.
  await CancellationScope.nonCancellable(() =>
    mirrorSteps(s, workflowId, opInput.generation, module, mirrorV2, () => finished),
  );
  return done;
}

/** Follows the running operation: each new step refreshes status, each member change is passed on. */
async function mirrorSteps(
  s: ClusterRunState,
  workflowId: string,
  generation: number,
  module: OperationModule,
  mirrorV2: boolean,
  finished: () => boolean,
): Promise<void> {
  let refreshedStep: string | undefined;
  // A member change on its way to the operation: further ones wait for it (one signal in flight at a time, as before).
  let forwarding = false;
  for (;;) {
    await condition(
      () => finished() || s.stepChanged || (mirrorV2 && s.membersChangedDuringOperation && !forwarding),
    );
    if (finished()) break;
    if (mirrorV2 && s.membersChangedDuringOperation && !forwarding) {
      // The operation waits with back-off; a Pod or claim change is worth a look at once.
      s.membersChangedDuringOperation = false;
      // By workflow id, not run: the operation may have continued as new since it started.
      const passed = getExternalWorkflowHandle(workflowId)
        .signal(membersChangedSignal)
        .catch(() => undefined);
      if (patched(MEMBERS_FORWARD_UNAWAITED_PATCH)) {
        // The operation's end (or a new step) is noticed while the signal is on its way.
        forwarding = true;
        void passed.then(() => (forwarding = false));
      } else await passed;
      if (!s.stepChanged) continue;
    }
    s.stepChanged = false;
    // During a version change, members restart on the new version one by one: observe again so
    // status.members[].version follows them (other operations keep members until they end).
    if (module.changesVersions && s.current && patched(MEMBER_VERSIONS_DURING_UPGRADE_PATCH)) {
      // A repeated wait line (the child re-sends it every turn) observes nothing new worth a write.
      if (s.current.step !== refreshedStep) {
        refreshedStep = s.current.step;
        await refreshStep(s, generation);
      }
      continue;
    }
    if (mirrorV2) {
      // A new step is a new observation (members, and why a wait waits: a Pod that cannot run shows in
      // Degraded); a repeated one changes nothing and writes nothing.
      if (s.current && s.current.step !== refreshedStep) {
        refreshedStep = s.current.step;
        await refreshStep(s, generation);
      }
      continue;
    }
    if (s.status && s.current) {
      const next: EtcdClusterStatus = { ...s.status, currentOperation: s.current };
      if ((await acts.writeStatus({ ref: s.ref, status: next })) === 'written') s.status = next;
    }
  }
}

/**
 * Status for the operation's new step: from the look the operation planned it on, when it sent one and the spec it
 * runs for is still the desired one (members' upToDate verdicts are judged against it); else from a look of its own.
 */
async function refreshStep(s: ClusterRunState, generation: number): Promise<void> {
  const look = s.stepLook;
  s.stepLook = undefined;
  if (look && s.desired.generation === generation && patched(MIRROR_STEP_LOOK_PATCH)) {
    await publishLook(s, look);
    return;
  }
  await refreshMembers(s);
}

/** How an operation that did not return ended: cancelled (by whom), or failed; anything else is rethrown. */
async function endingOfFailure(
  s: ClusterRunState,
  err: unknown,
  module: OperationModule,
  opInput: OperationInput,
): Promise<Ending> {
  if (err instanceof ChildWorkflowFailure && err.cause instanceof CancelledFailure) {
    let message = s.deleted
      ? 'cancelled because the EtcdCluster is being deleted'
      : s.supersededBy !== undefined
        ? `superseded by spec generation ${s.supersededBy} while it waited (${s.current?.step ?? 'a member could not run'})`
        : 'cancelled from outside the operator';
    // A version change stopped half-way leaves mixed versions: say who runs what (the child restarted
    // any member it had stopped before it ended).
    if (!s.deleted && module.changesVersions) {
      const after = await acts.observeCluster({ ref: s.ref, version: opInput.spec.version });
      message = `${message}; ${membersRunning(after)}`;
    }
    return { result: 'Cancelled', message };
  }
  if (err instanceof CancelledFailure || (err instanceof ChildWorkflowFailure && s.deleted)) {
    return { result: 'Cancelled', message: 'cancelled because the EtcdCluster is being deleted' };
  }
  if (err instanceof ChildWorkflowFailure) {
    return {
      result: 'Failed',
      message:
        err.cause instanceof ApplicationFailure
          ? err.cause.message
          : String(err.cause?.message ?? err.message),
    };
  }
  throw err;
}

/** The operation is over: last operation, the halt when it did not succeed, its Event. */
async function recordEnding(
  s: ClusterRunState,
  type: OperationType,
  opInput: OperationInput,
  workflowId: string,
  { result, message, endLook }: Ending,
): Promise<void> {
  s.current = undefined;
  s.currentWaitReason = undefined;
  s.operationScope = undefined;
  s.lastOperation = {
    type,
    result,
    finishedAt: new Date().toISOString(),
    message,
    workflowId,
    observedGeneration: opInput.generation,
  };
  if (result !== 'Succeeded') {
    s.halted = { generation: opInput.generation, retryToken: s.desired.retryToken ?? '', result };
  }
  // A rebuilt cluster serves an earlier revision: the newest one seen before belongs to data given up, and a later
  // loss's window counts from what the rebuilt cluster is seen at. (State only: no command changes.)
  if (type === 'Rebuild' && result === 'Succeeded') s.lastSeenRevision = undefined;
  const event =
    s.supersededBy !== undefined && result === 'Cancelled'
      ? { type: 'Normal' as const, reason: Reasons.OperationSuperseded }
      : RESULT_EVENT[result];
  s.supersededBy = undefined;
  const told = acts.recordEvent({
    ref: s.ref,
    type: event.type,
    reason: event.reason,
    message: `${opInput.summary}: ${result}. ${message}`,
  });
  // A cluster with spec.auth reads auth on its full looks only: its status waits for one, as before.
  if (endLook && !s.desired.spec.auth && !s.deleted && patched(OPERATION_END_LOOK_PATCH)) {
    await Promise.all([told, publishLook(s, endLook)]);
  } else await told;
  setCurrentDetails(`last operation: **${opInput.summary}**: ${result}. ${message}`);
}
