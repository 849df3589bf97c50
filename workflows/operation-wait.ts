// How an operation waits on a Wait step: watch for a member's first answer, back off while nothing is expected to change, or take a short sleep.
//
// Which of the three a history took depends on patches asked at the first wait that could use them
// (AWAIT_ANSWERS_PATCH, WAIT_BACKOFF_PATCH): histories recorded before each keep their commands.
import { condition, patched, proxyActivities, sleep } from '@temporalio/workflow';
import type { ClusterActivities } from '../activities/cluster-activities';
import type { ClusterObservation } from '../contracts/observation';
import type { Observed, Step } from './plan';
import { answeringMembers, awaitsAnAnswer, describeStep, MEMBER_PROBLEM_REASONS } from './plan';
import { waitBackoffMs } from './wait-backoff';
import { learnerToRestart } from '../contracts/learner-restart';
import { ActivityKinds } from './activity-kinds';
import type { OperationRunState } from './operation-run-state';
import { WAIT_BACKOFF_PATCH } from './operation-step-teller';

// awaitAnswerChange polls inside itself and heartbeats on every poll: a worker that died is noticed within
// the heartbeat timeout, not the 30 s start-to-close.
const waitingActs = proxyActivities<Pick<ClusterActivities, 'awaitAnswerChange'>>(ActivityKinds.waitingPoll);

/** The learner this look already found waiting on its own publish: the wait ends only on news beyond it. */
function learnerToRestartNow(observed: Observed): { learnerToRestart?: string } {
  const id = learnerToRestart(observed)?.id;
  return id ? { learnerToRestart: id } : {};
}

// Pause between observations while a step waits on something outside the operator (a learner catching
// up, a Pod starting): short, because each wait is bounded by the progress deadline anyway.
const WAIT_INTERVAL = '1s';
// A wait for a member's first answer watches for it (activity polls) for up to this long per turn.
const ANSWER_WAIT_MS = 5000;
const AWAIT_ANSWERS_PATCH = 'await-member-answers';
/** Behind it, the change flag is cleared when a look starts, not when the wait after it starts. */
export const LOOK_SEES_CHANGES_PATCH = 'look-sees-changes';
/** How long a member that is starting (no answer yet) is watched closely before its wait backs off. */
const ACTIVE_WAIT_MS = 30_000;
/** The first pause of a wait that backs off. */
const BACKOFF_FIRST_MS = 1000;

/** Waits for what a Wait step waits on: a member's first answer, a back-off pause, or a short sleep. */
export async function waitOn(
  s: OperationRunState,
  step: Extract<Step, { kind: 'Wait' }>,
  observed: Observed,
  look?: ClusterObservation,
): Promise<void> {
  const { ref, spec } = s.input;
  s.teller.details(describeStep(step), step.reason, look);
  if (s.wait?.reason !== step.reason) s.wait = { reason: step.reason, since: Date.now(), looks: 0 };
  const wait = s.wait;
  const starting =
    awaitsAnAnswer(step, observed) &&
    !MEMBER_PROBLEM_REASONS.includes(step.reason) &&
    Date.now() - wait.since < ACTIVE_WAIT_MS;
  // Histories recorded before this change slept here; they keep replaying that way.
  if (awaitsAnAnswer(step, observed) && patched(AWAIT_ANSWERS_PATCH) && (starting || !backsOff(s))) {
    await waitingActs.awaitAnswerChange({
      ref,
      version: spec.version,
      answering: answeringMembers(observed),
      maxMs: ANSWER_WAIT_MS,
      ...learnerToRestartNow(observed),
    });
  } else if (backsOff(s)) {
    // Nothing is expected to change soon: look again later and later, or as soon as a member changes.
    const pauseMs = waitBackoffMs(wait.looks, BACKOFF_FIRST_MS);
    s.wait = { ...wait, looks: wait.looks + 1 };
    if (s.changesDuringLook) {
      // A change signalled during the look that led here is news already: look again at once.
      if (!s.worldChanged) await condition(() => s.worldChanged, pauseMs);
    } else {
      s.worldChanged = false;
      await condition(() => s.worldChanged, pauseMs);
    }
  } else {
    await sleep(WAIT_INTERVAL, { summary: step.reason });
  }
}

/** Whether waits back off (WAIT_BACKOFF_PATCH); asked once, at the first wait that could. */
function backsOff(s: OperationRunState): boolean {
  s.backoff ??= patched(WAIT_BACKOFF_PATCH);
  return s.backoff;
}
