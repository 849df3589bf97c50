// Decides the next step for one EtcdCluster from desired and observed state: one membership change per step, never one that costs quorum.
//
// Pure and sandbox-safe: no I/O, no clock, no randomness, so the workflow may call it at any point and a
// replay makes the same decision. The decision is an ordered chain of named checks (after cert-manager's
// certificate policy chain): the first check with an opinion wins, and its name travels with the step so
// the Temporal history says why each step was taken.
//
// The pieces: what it reads and decides (plan-types.ts), the member views and safety rules (cluster-state.ts),
// the chain with etcd's member list (plan-with-etcd.ts) and without it (plan-without-etcd.ts), the checks both
// share (plan-checks.ts), and a step in words (describe-step.ts).
import { Reasons } from '../crds/conditions';
import type { OperationType } from '../crds/etcd-cluster';
import { authBlocked } from './auth-plan';
import { ordinalFor, podLive } from './cluster-state';
import { describeStep } from './describe-step';
import { lowersMinor } from './downgrade-plan';
import { runChain, startsPod, upgradeRefusal, wait } from './plan-checks';
import type { ActionStep, Decision, Desired, Observed, Step } from './plan-types';
import { withEtcdChain, withEtcdContext } from './plan-with-etcd';
import { withoutEtcdChain } from './plan-without-etcd';

export type {
  ActionStep,
  Decision,
  Desired,
  EtcdMemberView,
  EtcdView,
  KubeMemberView,
  MemberProblemWaitReason,
  MemberRef,
  Observed,
  PodPhase,
  RemoveReason,
  Step,
  StepKind,
  WaitReason,
} from './plan-types';
export { MEMBER_PROBLEM_REASONS } from './plan-types';
export type { MemberState } from './cluster-state';
export { currentSize, dataKept, memberState, nextMemberName, podLive } from './cluster-state';
export { startsPod, upgradeRefusal } from './plan-checks';
export { describeStep } from './describe-step';

/**
 * The next step for this cluster. Call it after every observation; it assumes nothing about earlier
 * steps, so a crash between any two effects is recovered by observing and planning again.
 */
export function plan(desired: Desired, observed: Observed): Decision {
  const blocked = authBlocked(desired.auth === true, observed.auth);
  if (blocked) return { check: 'authAccepted', step: blocked };
  const decision = observed.etcd
    ? runChain(withEtcdChain, withEtcdContext(desired, observed, observed.etcd))
    : runChain(withoutEtcdChain, { desired, observed });
  const refusal = upgradeRefusal(desired, observed);
  const restarts = ['UpgradeMember', 'EnableDowngrade'].includes(decision.step.kind);
  if (refusal !== undefined && (startsPod(decision.step) || restarts)) {
    // A Pod started now would run a version the path rules refuse: nothing is touched until the spec changes.
    return { check: 'upgradePathAllowed', step: wait(Reasons.UpgradePathRefused, refusal) };
  }
  if (!desired.versionKnown && (startsPod(decision.step) || restarts)) {
    return {
      check: 'versionHasImage',
      step: wait(
        Reasons.UnsupportedVersion,
        `spec.version${desired.version ? ` ${desired.version}` : ''} names no etcd release this operator has an image for; set it to a supported release (docs/status.md lists them). Until then nothing is started: ${describeStep(decision.step)} waits`,
      ),
    };
  }
  return explainWait(decision, observed, desired.cluster);
}

/** Waits that a member Pod which cannot run may be behind: the Pod's own reason is what the user needs. */
const EXPLAINABLE_WAITS: readonly string[] = [
  Reasons.MemberNotReady,
  Reasons.LearnerCatchingUp,
  Reasons.QuorumLost,
];

/**
 * A wait on members that do not answer, said in the kubelet's or scheduler's words when a member's Pod
 * cannot run (no image, crash loop, unschedulable, claim pending): the reason a user can act on.
 */
export function explainWait(decision: Decision, observed: Observed, cluster: string): Decision {
  const step = decision.step;
  if (step.kind !== 'Wait' || !EXPLAINABLE_WAITS.includes(step.reason)) return decision;
  const blocked = observed.kube
    .filter((k) => k.problem !== undefined && !k.pod?.terminating)
    .sort((a, b) => ordinalFor(cluster, a.name) - ordinalFor(cluster, b.name))[0];
  const problem = blocked?.problem;
  if (!problem) return decision;
  return { check: `${decision.check}/memberProblem`, step: wait(problem.reason, problem.message) };
}

// ---------------------------------------------------------------------------------------------------
// Operations and readable text

/**
 * The operation a step starts when no operation runs. Removals toward replicas 0 belong to Pause, so
 * `pause` is what a person sees in the Temporal UI from the first removal on.
 */
export function operationFor(step: ActionStep, desiredReplicas: number): OperationType {
  switch (step.kind) {
    case 'Bootstrap':
      return 'Bootstrap';
    case 'Resume':
      return 'Resume';
    case 'Pause':
      return 'Pause';
    case 'AddMember':
    case 'PromoteLearner':
    case 'RestartLearner':
      return 'ScaleUp';
    case 'UpgradeMember':
      return lowersMinor(step.from, step.to) ? 'Downgrade' : 'Upgrade';
    case 'EnableDowngrade':
      return 'Downgrade';
    case 'RolloutMember':
    case 'UpdateMemberMetadata':
    case 'ExpandClaim':
      return 'Rollout';
    case 'RemoveMember':
    case 'MoveLeader':
      if (step.reason === 'Upgrade')
        return lowersMinor(step.upgrade.from, step.upgrade.to) ? 'Downgrade' : 'Upgrade';
      if (step.reason === 'Rollout') return 'Rollout';
      if (step.reason !== 'ScaleDown') return 'Heal';
      return desiredReplicas === 0 ? 'Pause' : 'ScaleDown';
    case 'RecreatePod':
    case 'DeleteOrphan':
    case 'ReplacePod':
      return 'Heal';
    case 'EnableAuth':
      return 'EnableAuth';
    case 'Defrag':
      return 'Defrag';
    case 'RotateAuth':
      return 'RotateAuth';
    case 'RecoverQuorum':
      return 'Recover';
    case 'Rebuild':
      return 'Rebuild';
  }
}

/**
 * Members etcd lists as started whose status answers: what an operation waiting for a member to come up
 * watches change. Empty without an etcd view.
 */
export function answeringMembers(observed: Observed): string[] {
  return (observed.etcd?.members ?? [])
    .filter((m) => m.started && m.reachable)
    .map((m) => m.name)
    .sort();
}

/**
 * Whether a wait is for a member that does not answer yet (a seed or learner starting, a restarted member
 * coming back), so the operation can watch for its first answer instead of sleeping a fixed interval:
 * such waits end within a second or two, and a timer (whose resolution on a Temporal server is coarse)
 * would overshoot each of them. A learner that answers and only lags behind is not such a wait.
 */
export function awaitsAnAnswer(step: Step, observed: Observed): boolean {
  if (step.kind !== 'Wait') return false;
  if (step.reason !== Reasons.MemberNotReady && step.reason !== Reasons.LearnerCatchingUp) return false;
  const pods = new Map(observed.kube.map((k) => [k.name, k]));
  if (!observed.etcd) return observed.kube.some((k) => podLive(k));
  return observed.etcd.members.some((m) => !(m.started && m.reachable) && podLive(pods.get(m.name)));
}
