// How an operation tells its step line: the Temporal UI's current details, the memo `temporal workflow describe` prints, and the cluster workflow's status.
//
// Each path sits behind the patch that introduced it, asked lazily at the first line that needs it, so histories
// recorded before each patch replay with the commands they had.
import {
  getExternalWorkflowHandle,
  patched,
  setCurrentDetails,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import { operationStepSignal } from '../contracts/messages';
import type { ClusterObservation } from '../contracts/observation';
import type { OperationInput } from './operations/operation-module';

/**
 * The patch behind waiting with back-off: a member starting is watched closely for ACTIVE_WAIT_MS, then any
 * wait that stays the same is looked at after 1 s, 2 s, 4 s ... at most 10 min (workflows/wait-backoff.ts),
 * each pause ended early by a member change the cluster workflow forwards. The step line goes to the cluster
 * workflow only when it changed, and a long operation continues as new before its history grows large.
 */
export const WAIT_BACKOFF_PATCH = 'operation-wait-backoff';
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
/**
 * The patch behind sending the cluster workflow, with a changed step line, the look the operation planned that step
 * on: the cluster workflow writes status from it instead of observing the cluster itself at every step (two looks
 * beside a scale-down 5 -> 3's removals, on the same worker). Asked at the first line that has a look.
 */
export const STEP_LOOK_PATCH = 'operation-step-look';

export interface StepTeller {
  /** Tells the step line (and the wait reason, when it waits; and the look it was planned on, when there is one). */
  details: (line: string, waitReason?: string, look?: ClusterObservation) => void;
  told: {
    /** The step line last told: a Stalled operation names where it stopped. */
    lastLine: string;
    /** The step line last sent to the cluster workflow (carried across continue-as-new). */
    lastDetails: string | undefined;
  };
  /** The memo's last word (a cancel), written only where the memo carries the step at all. */
  memo: (text: string) => void;
}

/**
 * Tells an operation's step line: always as the Temporal UI's current details; when it changed, also in the memo
 * (`temporal workflow describe`) and to the cluster workflow, which mirrors it into status.currentOperation.step.
 */
export function stepTeller(input: OperationInput, steps: () => number): StepTeller {
  const carried = input.carried;
  const parent = workflowInfo().parent;
  const told: StepTeller['told'] = {
    lastLine: carried?.lastDetails ?? 'starting',
    lastDetails: carried?.lastDetails,
  };
  /** Only a changed step line is sent (WAIT_BACKOFF_PATCH): a repeated one would cost both histories and a status write. */
  let sendChangedOnly: boolean | undefined = carried ? true : undefined;
  /** Whether the step goes to the cluster workflow as data, with its wait reason (STEP_AS_DATA_PATCH). */
  let stepAsData: boolean | undefined = carried ? true : undefined;
  /** Asked of patched() in every run, carried or not: a run carried over from older code never wrote the memo. */
  let stepInMemo: boolean | undefined;
  /** Whether a step's look goes with it (STEP_LOOK_PATCH): asked at the first line sent with one, in every run. */
  let stepLook: boolean | undefined;
  const details = (line: string, waitReason?: string, look?: ClusterObservation) => {
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
    if (look && stepAsData) stepLook ??= patched(STEP_LOOK_PATCH);
    const step = {
      line,
      ...(waitReason ? { waitReason } : {}),
      ...(look && stepAsData && stepLook ? { look } : {}),
    };
    void getExternalWorkflowHandle(parent.workflowId)
      .signal(operationStepSignal, stepAsData ? step : line)
      .catch(() => undefined);
  };
  const memo = (text: string) => {
    if (stepInMemo) upsertMemo({ step: text });
  };
  return { details, told, memo };
}
