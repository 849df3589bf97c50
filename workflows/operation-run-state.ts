// What one run of an operation workflow keeps in memory, and what of it survives continue-as-new.
//
// The operation workflow's pieces (operation-workflow.ts, operation-wait.ts) share this one mutable record
// instead of closing over a dozen local variables.
import { setHandler } from '@temporalio/workflow';
import { membersChangedSignal } from '../contracts/messages';
import type { ClusterObservation } from '../contracts/observation';
import type {
  OperationCarried,
  OperationContext,
  OperationInput,
  OperationModule,
} from './operations/operation-module';
import { operationModule } from './operations/registry';
import type { StepContext } from './operations/step-executors';
import type { StepTeller } from './operation-step-teller';
import { stepTeller } from './operation-step-teller';

export interface OperationRunState {
  readonly input: OperationInput;
  readonly module: OperationModule;
  readonly teller: StepTeller;
  /** What the module's own code gets. */
  readonly ctx: OperationContext;
  /** What the steps share with this run; pendingLearner is the learner added and not promoted, the one thing a halt undoes. */
  readonly stepCtx: StepContext;
  recorded: OperationInput['recorded'];
  steps: number;
  /** The cluster workflow forwarded a Pod or claim change: a wait looks again at once. */
  worldChanged: boolean;
  /** The pre-upgrade snapshot's artifact, once taken (spec.backup); named in the operation's result. */
  snapshotUri: string | undefined;
  snapshotTaken: boolean;
  /** Once seen on, auth stays on (spec.auth cannot be removed): later observations skip asking. */
  authSeenEnabled: boolean;
  /** The wait under way, when the last step was a Wait. */
  wait: OperationCarried['wait'];
  /** When the progress deadline passes (epoch ms on the workflow clock). */
  readonly deadlineAt: number;
  /** Whether waits back off (WAIT_BACKOFF_PATCH): asked once, at the first wait that could. */
  backoff: boolean | undefined;
  /**
   * Whether a change signalled while a look reads the cluster ends the wait after it (LOOK_SEES_CHANGES_PATCH):
   * asked once, at the first look. Before it, the wait cleared the flag, so a Pod that went away during the look
   * was only seen after the wait's full pause.
   */
  changesDuringLook: boolean | undefined;
  /** The look the cluster workflow handed over for the first step; used once, then every look is this run's own. */
  firstLook: OperationInput['firstLook'];
  /**
   * The look the next removal of a scale-down is taken from (workflows/observation.ts lookAfterRemoval), set right
   * after a removal that more follow, or the end is planned on, set after a scale-down's last removal; used once.
   */
  lookAfterRemoval?: ClusterObservation;
  /** The look on which the plan said None: handed back in the outcome (OperationOutcome.endLook). */
  endLook?: ClusterObservation;
}

/** The run's state from its input (fresh, or carried over by continue-as-new), its member-change handler set. */
export function startOperationRun(input: OperationInput): OperationRunState {
  const { ref, spec, type, carried } = input;
  const teller = stepTeller(input, () => s.steps);
  const details = teller.details;
  const s: OperationRunState = {
    input,
    module: operationModule(type),
    teller,
    ctx: { ref, spec, input, details },
    stepCtx: {
      ref,
      spec,
      details,
      recordedMembers: () => s.recorded.members,
      ...(carried?.pendingLearner ? { pendingLearner: carried.pendingLearner } : {}),
    },
    recorded: input.recorded,
    steps: carried?.steps ?? 0,
    worldChanged: false,
    snapshotUri: carried?.snapshotUri,
    snapshotTaken: carried?.snapshotTaken ?? false,
    authSeenEnabled: carried?.authSeenEnabled ?? false,
    wait: carried?.wait,
    deadlineAt: carried?.deadlineAt ?? Date.now() + spec.progressDeadlineSeconds * 1000,
    backoff: carried ? true : undefined,
    changesDuringLook: undefined,
    firstLook: carried ? undefined : input.firstLook,
  };
  setHandler(membersChangedSignal, () => {
    s.worldChanged = true;
  });
  return s;
}

/** What a fresh run needs to go on where this one is: its progress and what compensation would undo. */
export function carriedOf(s: OperationRunState): OperationCarried {
  const { pendingLearner } = s.stepCtx;
  const lastDetails = s.teller.told.lastDetails;
  return {
    steps: s.steps,
    ...(pendingLearner ? { pendingLearner } : {}),
    ...(s.snapshotUri ? { snapshotUri: s.snapshotUri } : {}),
    snapshotTaken: s.snapshotTaken,
    authSeenEnabled: s.authSeenEnabled,
    deadlineAt: s.deadlineAt,
    ...(s.wait ? { wait: s.wait } : {}),
    ...(lastDetails !== undefined ? { lastDetails } : {}),
  };
}
