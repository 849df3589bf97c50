// The cluster workflow's signal and query handlers: what the watcher and a running operation tell it, and what
// `progressQuery` answers. Handlers only change the run's state; the loop in cluster-workflow.ts acts on it.
import { patched, setHandler } from '@temporalio/workflow';
import type { ClusterChange, ClusterProgress, OperationStep } from '../contracts/messages';
import {
  clusterChangedSignal,
  defragDueSignal,
  membersChangedSignal,
  operationStepSignal,
  progressQuery,
} from '../contracts/messages';
import type { ClusterRunState } from './cluster-run-state';
import { isHalted } from './cluster-run-state';
import { MEMBER_PROBLEM_REASONS } from './plan';

/**
 * The patch behind handing over to a new EtcdCluster of the same namespace and name (deleted and created
 * again): histories before it dropped such a signal. See docs/adr/0002-same-name-recreate.md.
 */
const SUCCESSOR_PATCH = 'same-name-successor';

export function installClusterHandlers(s: ClusterRunState): void {
  setHandler(clusterChangedSignal, (change) => onClusterChanged(s, change));
  setHandler(membersChangedSignal, () => {
    s.dirty = true;
    if (s.current) s.membersChangedDuringOperation = true;
  });
  // A firing of the cluster's defrag Temporal Schedule; one kept for an earlier object of this name is not ours.
  setHandler(defragDueSignal, (due) => {
    // A firing already under way when the spec dropped the schedule finds nothing to serve.
    if (due.uid !== s.ref.uid || s.deleted || !s.desired.spec.maintenance?.defrag?.schedule) return;
    s.maintenance = { ...s.maintenance, scheduledDefragDue: true };
    s.dirty = true;
  });
  setHandler(operationStepSignal, (update) => onOperationStep(s, update));
  setHandler(progressQuery, (): ClusterProgress => progressOf(s));
}

function onClusterChanged(s: ClusterRunState, change: ClusterChange): void {
  if (change.uid !== s.ref.uid) {
    // Another object of the same name. Its deletion is not for this run; a live one replaces this run's
    // object, and runs on the same workflow id after this run ends, so two runs never act on one name.
    if (change.deleted) {
      if (s.successor?.uid === change.uid) s.successor = undefined;
    } else if (patched(SUCCESSOR_PATCH)) {
      if (s.successor?.uid !== change.uid || change.generation >= s.successor.generation) {
        s.successor = change;
      }
      s.deleted = true;
      s.operationScope?.cancel();
      s.dirty = true;
    }
    return;
  }
  if (change.deleted) {
    s.deleted = true;
    s.operationScope?.cancel();
  } else if (
    change.generation > s.desired.generation ||
    (change.retryToken ?? '') !== (s.desired.retryToken ?? '') ||
    (change.recoveryApproval ?? '') !== (s.desired.recoveryApproval ?? '') ||
    (change.rollbackApproval ?? '') !== (s.desired.rollbackApproval ?? '')
  ) {
    // An operation waiting on a member Pod that cannot run (no image, unschedulable, ...) waits for the user
    // to fix the spec: the fix supersedes it, and the next operation works from the new spec.
    if (
      change.generation > s.desired.generation &&
      s.operationScope &&
      s.current &&
      waitsOnMemberProblem(s)
    ) {
      s.supersededBy = change.generation;
      s.operationScope.cancel();
    }
    s.desired = change;
  }
  s.dirty = true;
}

/** The running operation waits on a member Pod that cannot run. */
function waitsOnMemberProblem(s: ClusterRunState): boolean {
  return (
    MEMBER_PROBLEM_REASONS.includes(s.currentWaitReason ?? '') ||
    // The operation may not have looked again yet; the last status already says a member Pod cannot run.
    MEMBER_PROBLEM_REASONS.includes(s.status?.conditions?.find((c) => c.type === 'Degraded')?.reason ?? '')
  );
}

function onOperationStep(s: ClusterRunState, update: OperationStep | string): void {
  if (!s.current) return;
  // Operations started before the step came as data send the line alone.
  const step = typeof update === 'string' ? { line: update } : update;
  s.current = { ...s.current, step: step.line };
  s.currentWaitReason =
    step.waitReason ?? (typeof update === 'string' ? waitReasonOfLine(update) : undefined);
  s.stepLook = typeof update === 'string' ? undefined : update.look;
  s.stepChanged = true;
}

function progressOf(s: ClusterRunState): ClusterProgress {
  const { current, halted } = s;
  return {
    generation: s.desired.generation,
    ...(current
      ? {
          operation: {
            type: current.type,
            workflowId: current.workflowId,
            ...(current.step ? { step: current.step } : {}),
          },
        }
      : {}),
    // A halt recorded for an older generation or retry token no longer holds the cluster back.
    ...(halted && isHalted(s) ? { halted: { generation: halted.generation, reason: halted.result } } : {}),
    lastDecision: s.lastDecision,
  };
}

/**
 * The wait reason in a step line (`wait (Reason): ...`, plan.ts describeStep), for operations started before
 * the step came as data (`operation-step-as-data`): they send the line alone.
 */
export function waitReasonOfLine(line: string): string | undefined {
  return /^wait \(([A-Za-z]+)\)/.exec(line)?.[1];
}
