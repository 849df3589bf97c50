// One operation as a child workflow: observe, plan, act, one step at a time, until done; what differs between operations is in its module (workflows/operations/).
//
// Invariant: a cancelled or timed-out operation undoes only its own half-done step (a learner it added and
// has not promoted, a member it stopped to restart) and never anything that could cost quorum or data.
import {
  CancellationScope,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  isCancellation,
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import type { ClusterActivities } from '../activities/cluster-activities';
import type { ActionStep, Decision, Observed, Step } from './plan';
import { answeringMembers, awaitsAnAnswer, describeStep, MEMBER_PROBLEM_REASONS, plan } from './plan';
import { membersChangedSignal, operationStepSignal } from '../contracts/messages';
import { waitBackoffMs } from './wait-backoff';
import { desiredOf, recordedAfter } from './observation';
import { takePreUpgradeSnapshot } from './upgrade-snapshot';
import { observeAuth } from './auth-step';
import { ActivityKinds } from './activity-kinds';
import type { OperationContext, OperationInput, OperationOutcome } from './operations/operation-module';
import { continuesOperation, operationModule } from './operations/registry';
import type { StepContext } from './operations/step-executors';
import { executeStep, refuseRestore, refusesRestore } from './operations/step-executors';
import { compensate as undoHalfDoneStep } from './operations/compensation';

export type { OperationCarried, OperationInput, OperationOutcome } from './operations/operation-module';

const acts = proxyActivities<ClusterActivities>(ActivityKinds.operationStep);

// awaitAnswerChange polls inside itself and heartbeats on every poll: a worker that died is noticed within
// the heartbeat timeout, not the 30 s start-to-close.
const waitingActs = proxyActivities<Pick<ClusterActivities, 'awaitAnswerChange'>>(ActivityKinds.waitingPoll);

// Pause between observations while a step waits on something outside the operator (a learner catching
// up, a Pod starting): short, because each wait is bounded by the progress deadline anyway.
const WAIT_INTERVAL = '1s';
// A wait for a member's first answer watches for it (activity polls) for up to this long per turn.
const ANSWER_WAIT_MS = 5000;
const AWAIT_ANSWERS_PATCH = 'await-member-answers';
/** The patch behind skipping compensation while the EtcdCluster is being deleted (workflows/operation-workflow.ts). */
const SKIP_COMPENSATION_WHEN_GONE_PATCH = 'skip-compensation-when-cluster-gone';
/**
 * The patch behind waiting with back-off: a member starting is watched closely for ACTIVE_WAIT_MS, then any
 * wait that stays the same is looked at after 1 s, 2 s, 4 s ... at most 10 min (workflows/wait-backoff.ts),
 * each pause ended early by a member change the cluster workflow forwards. The step line goes to the cluster
 * workflow only when it changed, and a long operation continues as new before its history grows large.
 */
const WAIT_BACKOFF_PATCH = 'operation-wait-backoff';
/**
 * The patch behind telling the cluster workflow the step as data, its wait reason beside the line, so the
 * cluster workflow reads why an operation waits instead of parsing the line.
 */
const STEP_AS_DATA_PATCH = 'operation-step-as-data';
/**
 * The patch behind keeping the step line in the workflow's memo as well as in its current details: `temporal workflow
 * describe` prints the memo (current details need `temporal workflow metadata`, a query). One history event per
 * changed line, the same count as the signal that tells the cluster workflow.
 */
const STEP_IN_MEMO_PATCH = 'operation-step-in-memo';
/** How long a member that is starting (no answer yet) is watched closely before its wait backs off. */
const ACTIVE_WAIT_MS = 30_000;
/** The first pause of a wait that backs off. */
const BACKOFF_FIRST_MS = 1000;
/** Continue as new past this many history events even if the server has not suggested it yet. */
const CONTINUE_AS_NEW_EVENTS = 5000;

/**
 * Tells an operation's step line: always as the Temporal UI's current details; when it changed, also in the memo
 * (`temporal workflow describe`) and to the cluster workflow, which mirrors it into status.currentOperation.step.
 */
function stepTeller(input: OperationInput, steps: () => number) {
  const carried = input.carried;
  const parent = workflowInfo().parent;
  const told = {
    /** The step line last told: a Stalled operation names where it stopped. */
    lastLine: carried?.lastDetails ?? 'starting',
    lastDetails: carried?.lastDetails,
  };
  /** Only a changed step line is sent (WAIT_BACKOFF_PATCH): a repeated one would cost both histories and a status write. */
  let sendChangedOnly: boolean | undefined = carried ? true : undefined;
  /** Whether the step goes to the cluster workflow as data, with its wait reason (STEP_AS_DATA_PATCH). */
  let stepAsData: boolean | undefined = carried ? true : undefined;
  /** Asked of patched() in every run, carried or not: a run carried over from older code never wrote the memo. */
  let stepInMemo: boolean | undefined;
  const details = (line: string, waitReason?: string) => {
    told.lastLine = line;
    setCurrentDetails(`**${input.summary}**\n\nstep ${steps()}: ${line}\n\ngeneration ${input.generation}`);
    sendChangedOnly ??= patched(WAIT_BACKOFF_PATCH);
    if (sendChangedOnly && line === told.lastDetails) return;
    told.lastDetails = line;
    stepInMemo ??= patched(STEP_IN_MEMO_PATCH);
    if (stepInMemo) upsertMemo({ step: `step ${steps()}: ${line}` });
    // The cluster workflow mirrors the step into status.currentOperation.step; losing one update is harmless.
    if (!parent) return;
    stepAsData ??= patched(STEP_AS_DATA_PATCH);
    void getExternalWorkflowHandle(parent.workflowId)
      .signal(operationStepSignal, stepAsData ? { line, ...(waitReason ? { waitReason } : {}) } : line)
      .catch(() => undefined);
  };
  /** The memo's last word (a cancel), written only where the memo carries the step at all. */
  const memo = (text: string) => {
    if (stepInMemo) upsertMemo({ step: text });
  };
  return { details, told, memo };
}

export async function clusterOperationWorkflow(input: OperationInput): Promise<OperationOutcome> {
  const { ref, spec, type } = input;
  const module = operationModule(type);
  const carried = input.carried;
  let recorded = input.recorded;
  let steps = carried?.steps ?? 0;
  /** The cluster workflow forwarded a Pod or claim change: a wait looks again at once. */
  let worldChanged = false;
  setHandler(membersChangedSignal, () => {
    worldChanged = true;
  });

  const teller = stepTeller(input, () => steps);
  const details = teller.details;

  const ctx: OperationContext = { ref, spec, input, details };
  /** What the steps share with this run; pendingLearner is the learner added and not promoted, the one thing a halt undoes. */
  const stepCtx: StepContext = {
    ref,
    spec,
    details,
    recordedMembers: () => recorded.members,
    ...(carried?.pendingLearner ? { pendingLearner: carried.pendingLearner } : {}),
  };

  /** The pre-upgrade snapshot's artifact, once taken (spec.backup); named in the operation's result. */
  let snapshotUri: string | undefined = carried?.snapshotUri;
  let snapshotTaken = carried?.snapshotTaken ?? false;

  async function execute(step: ActionStep): Promise<void> {
    // Before a version change touches anything: the snapshot spec.backup asks for (a failure ends the operation here).
    if (module.snapshotBefore && spec.backup && !snapshotTaken && module.snapshotBefore.includes(step.kind)) {
      snapshotUri = await takePreUpgradeSnapshot({
        ref,
        spec,
        operationWorkflowId: workflowInfo().workflowId,
        details,
      });
      snapshotTaken = true;
    }
    await executeStep(stepCtx, step);
  }

  /** Once seen on, auth stays on (spec.auth cannot be removed): later observations skip asking. */
  let authSeenEnabled = carried?.authSeenEnabled ?? false;
  let wait = carried?.wait;

  const deadlineMs = spec.progressDeadlineSeconds * 1000;
  const deadlineAt = carried?.deadlineAt ?? Date.now() + deadlineMs;

  /** A long operation goes on in a fresh run with its progress and compensation, long before Temporal's history limits. */
  async function continueIfLong(): Promise<void> {
    const info = workflowInfo();
    if (!info.continueAsNewSuggested && info.historyLength < CONTINUE_AS_NEW_EVENTS) return;
    const { pendingLearner } = stepCtx;
    await continueAsNew<typeof clusterOperationWorkflow>({
      ...input,
      recorded,
      carried: {
        steps,
        ...(pendingLearner ? { pendingLearner } : {}),
        ...(snapshotUri ? { snapshotUri } : {}),
        snapshotTaken,
        authSeenEnabled,
        deadlineAt,
        ...(wait ? { wait } : {}),
        ...(teller.told.lastDetails !== undefined ? { lastDetails: teller.told.lastDetails } : {}),
      },
    });
  }

  /** One fresh look: the cluster, what the module asks besides, and auth while it is not known to be on. */
  async function observe(): Promise<{ observed: Observed; versionKnown: boolean }> {
    // With the spec, Pods are compared with its template (rollouts); an added input field replays as before.
    const observation = await acts.observeCluster({ ref, version: spec.version, spec });
    recorded = recordedAfter(recorded, observation);
    const extra = module.observe ? await module.observe(ctx, observation) : {};
    // Only a cluster with spec.auth asks: histories of clusters without it keep their command sequence.
    const auth = spec.auth && !authSeenEnabled ? await observeAuth(ref) : undefined;
    if (auth?.etcd.state === 'enabled') authSeenEnabled = true;
    const observed: Observed = {
      kube: observation.kube,
      recorded,
      ...(observation.etcd ? { etcd: observation.etcd } : {}),
      ...extra,
      ...(auth ? { auth } : {}),
    };
    return { observed, versionKnown: observation.versionKnown };
  }

  /** Waits for what a Wait step waits on: a member's first answer, a back-off pause, or a short sleep. */
  async function waitOn(step: Extract<Step, { kind: 'Wait' }>, observed: Observed): Promise<void> {
    details(describeStep(step), step.reason);
    if (wait?.reason !== step.reason) wait = { reason: step.reason, since: Date.now(), looks: 0 };
    const starting =
      awaitsAnAnswer(step, observed) &&
      !MEMBER_PROBLEM_REASONS.includes(step.reason) &&
      Date.now() - wait.since < ACTIVE_WAIT_MS;
    // Histories recorded before this change slept here; they keep replaying that way.
    if (awaitsAnAnswer(step, observed) && patched(AWAIT_ANSWERS_PATCH) && (starting || !backsOff())) {
      await waitingActs.awaitAnswerChange({
        ref,
        version: spec.version,
        answering: answeringMembers(observed),
        maxMs: ANSWER_WAIT_MS,
      });
    } else if (backsOff()) {
      // Nothing is expected to change soon: look again later and later, or as soon as a member changes.
      const pauseMs = waitBackoffMs(wait.looks, BACKOFF_FIRST_MS);
      wait = { ...wait, looks: wait.looks + 1 };
      worldChanged = false;
      await condition(() => worldChanged, pauseMs);
    } else {
      await sleep(WAIT_INTERVAL, { summary: step.reason });
    }
  }

  /** Observe, plan, take one step; until the plan says something this operation does not do. */
  async function run(): Promise<string> {
    if (module.run) return module.run(ctx);
    for (;;) {
      await continueIfLong();
      const { observed, versionKnown } = await observe();
      const decision: Decision = plan(desiredOf(ref, spec, versionKnown), observed);
      const step: Step = decision.step;
      if (refusesRestore(step)) await refuseRestore(ref, step.message);
      if (step.kind === 'Wait') {
        await waitOn(step, observed);
        continue;
      }
      wait = undefined;
      if (step.kind === 'None') return withSnapshotNote(step.message);
      if (!continuesOperation(type, step, spec.replicas))
        return withSnapshotNote(`done; next: ${describeStep(step)}`);
      steps += 1;
      details(describeStep(step));
      await execute(step);
    }
  }

  function withSnapshotNote(message: string): string {
    return snapshotUri ? `${message}; pre-upgrade snapshot ${snapshotUri}` : message;
  }

  /** Undo what this operation left half-done; runs even when the operation was cancelled. */
  async function compensate(): Promise<string> {
    // Deleting the EtcdCluster cancels the operation: its members go with it (owner references), so undoing a
    // step would only wait for members that no longer answer (a removal retried for ever, a Pod started for
    // nobody). Histories recorded before this check undo as they did.
    if (patched(SKIP_COMPENSATION_WHEN_GONE_PATCH) && (await acts.clusterGoingAway({ ref }))) {
      stepCtx.pendingLearner = undefined;
      return 'nothing undone: the EtcdCluster is being deleted and its members go with it';
    }
    return undoHalfDoneStep(module.compensation, stepCtx, snapshotUri);
  }

  let backoff: boolean | undefined = carried ? true : undefined;
  /** Whether waits back off (WAIT_BACKOFF_PATCH); asked once, at the first wait that could. */
  function backsOff(): boolean {
    backoff ??= patched(WAIT_BACKOFF_PATCH);
    return backoff;
  }

  let deadlinePassed = false;
  const work = new CancellationScope();
  const deadline = CancellationScope.cancellable(async () => {
    await sleep(Math.max(deadlineAt - Date.now(), 0), {
      summary: `progress deadline ${spec.progressDeadlineSeconds}s`,
    });
    deadlinePassed = true;
    work.cancel();
  });
  deadline.catch(() => undefined);
  try {
    const message = await work.run(run);
    return { result: 'Succeeded', message, steps, recorded };
  } catch (err) {
    if (!isCancellation(err)) throw err;
    const undone = await CancellationScope.nonCancellable(compensate);
    if (deadlinePassed) {
      return {
        result: 'DeadlineExceeded',
        message: `no progress within ${spec.progressDeadlineSeconds}s after ${steps} step(s), stalled at: ${teller.told.lastLine}; ${undone}`,
        steps,
        recorded,
      };
    }
    // Cancelled from outside (e.g. `temporal workflow cancel`): report what was undone, then end as cancelled.
    setCurrentDetails(`**${input.summary}**\n\ncancelled after ${steps} step(s); ${undone}`);
    teller.memo(`cancelled after ${steps} step(s); ${undone}`);
    throw err;
  }
}
