// One operation (bootstrap, scale, heal, pause, resume) as a child workflow: observe, plan, act, one step at a time, until done.
//
// Invariant: a cancelled or timed-out operation undoes only its own half-done step (a learner it added and
// has not promoted) and never anything that could cost quorum or data.
import {
  ActivityFailure,
  ApplicationFailure,
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
  workflowInfo,
} from '@temporalio/workflow';
import type { ClusterActivities } from '../activities/cluster-activities';
import type { DowngradeActivities } from '../activities/downgrade-activities';
import type { RestoreActivities } from '../activities/restore-activities';
import type { RestoreInit } from '../activities/restore-manifests';
import { FailureTypes, Reasons } from '../crds/conditions';
import type { EtcdClusterSpec, OperationType } from '../crds/etcd-cluster';
import type { ActionStep, Decision, Observed, Step } from './plan';
import {
  answeringMembers,
  awaitsAnAnswer,
  continuesOperation,
  describeStep,
  MEMBER_PROBLEM_REASONS,
  plan,
} from './plan';
import { membersChangedSignal, operationStepSignal } from '../contracts/messages';
import { waitBackoffMs } from './wait-backoff';
import { desiredOf, recordedAfter } from './observation';
import { takePreUpgradeSnapshot } from './upgrade-snapshot';
import { DowngradeEvents, observeDowngradeIfDue } from './downgrade-steps';
import { executeRolloutStep } from './rollout-execute';
import { enableAuthStep, observeAuth, rotateAuthStep } from './auth-step';
import { runDefragOperation } from './defrag-operation';
import type { ClusterRef } from '../contracts/cluster-ref';
import { ActivityKinds } from './activity-kinds';

export interface OperationInput {
  ref: ClusterRef;
  spec: EtcdClusterSpec;
  generation: number;
  type: OperationType;
  summary: string;
  versionKnown: boolean;
  recorded: Observed['recorded'];
  /** Defrag only: started because spec.maintenance.defrag.schedule fired. */
  defragScheduleDue?: boolean;
  /** What a run that continued as new hands to the next (absent on the first run). */
  carried?: OperationCarried;
}

/** An operation's progress and compensation, carried across continue-as-new so a long wait loses neither. */
export interface OperationCarried {
  steps: number;
  /** The learner this operation added and has not promoted: what compensation removes. */
  pendingLearner?: { member: string; id: string };
  snapshotUri?: string;
  snapshotTaken: boolean;
  authSeenEnabled: boolean;
  /** When the progress deadline passes (epoch ms on the workflow clock). */
  deadlineAt: number;
  /** The wait under way and how many timer looks it has had (its back-off goes on where it was). */
  wait?: { reason: string; since: number; looks: number };
  /** The step line last sent to the cluster workflow. */
  lastDetails?: string;
}

export interface OperationOutcome {
  result: 'Succeeded' | 'DeadlineExceeded';
  message: string;
  steps: number;
  recorded: Observed['recorded'];
}

const acts = proxyActivities<ClusterActivities>(ActivityKinds.operationStep);

// Activities that wait inside themselves (addLearner's refusals, awaitAnswerChange's polling) heartbeat on
// every poll: a worker that died is noticed within the heartbeat timeout, not the 30 s start-to-close.
const waitingActs = proxyActivities<Pick<ClusterActivities, 'addLearner' | 'awaitAnswerChange'>>(
  ActivityKinds.waitingPoll,
);

// The restore preparation only reads; registered beside the snapshot activities.
const restoreActs = proxyActivities<RestoreActivities>(ActivityKinds.operationStep);

// etcd's downgrade API (activities/downgrade-activities.ts), used by Downgrade operations only.
const downgradeActs = proxyActivities<DowngradeActivities>(ActivityKinds.operationStep);

// How often a restore whose EtcdSnapshot has not succeeded yet looks again.
const RESTORE_SOURCE_INTERVAL = '5s';

// Pause between observations while a step waits on something outside the operator (a learner catching
// up, a Pod starting): short, because each wait is bounded by the progress deadline anyway.
const WAIT_INTERVAL = '1s';
// etcd's refusal of a new member lasts until its 5 s health interval has passed: addLearner asks again
// inside the activity for up to NOT_READY_WAIT_MS; the workflow asks a few more times after that.
const NOT_READY_INTERVAL = '500ms';
const NOT_READY_ASKS = 20;
const NOT_READY_WAIT_MS = 8000;
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
/** How long a member that is starting (no answer yet) is watched closely before its wait backs off. */
const ACTIVE_WAIT_MS = 30_000;
/** The first pause of a wait that backs off. */
const BACKOFF_FIRST_MS = 1000;
/** Continue as new past this many history events even if the server has not suggested it yet. */
const CONTINUE_AS_NEW_EVENTS = 5000;
// How many observations (WAIT_INTERVAL apart) a halted upgrade spends bringing back a member it stopped.
const HALT_RESTART_LOOKS = 60;

export async function clusterOperationWorkflow(input: OperationInput): Promise<OperationOutcome> {
  const { ref, spec, type } = input;
  const carried = input.carried;
  let recorded = input.recorded;
  let steps = carried?.steps ?? 0;
  /** A learner this operation added and has not promoted: the one thing a halt undoes. */
  let pendingLearner: { member: string; id: string } | undefined = carried?.pendingLearner;
  /** The cluster workflow forwarded a Pod or claim change: a wait looks again at once. */
  let worldChanged = false;
  setHandler(membersChangedSignal, () => {
    worldChanged = true;
  });

  const parent = workflowInfo().parent;
  /** The step line last told: a Stalled operation names where it stopped. */
  let lastLine = carried?.lastDetails ?? 'starting';
  let lastDetails = carried?.lastDetails;
  /** Only a changed step line is sent (WAIT_BACKOFF_PATCH): a repeated one would cost both histories and a status write. */
  let sendChangedOnly: boolean | undefined = carried ? true : undefined;
  const details = (line: string) => {
    lastLine = line;
    setCurrentDetails(`**${input.summary}**\n\nstep ${steps}: ${line}\n\ngeneration ${input.generation}`);
    sendChangedOnly ??= patched(WAIT_BACKOFF_PATCH);
    if (sendChangedOnly && line === lastDetails) return;
    lastDetails = line;
    // The cluster workflow mirrors the step into status.currentOperation.step; losing one update is harmless.
    if (parent)
      void getExternalWorkflowHandle(parent.workflowId)
        .signal(operationStepSignal, line)
        .catch(() => undefined);
  };

  /** A permanent restore failure ends the operation Failed (with an Event): no restart can fix it. */
  async function refuseRestore(message: string): Promise<never> {
    await acts.recordEvent({ ref, type: 'Warning', reason: Reasons.RestoreFailed, message });
    throw ApplicationFailure.nonRetryable(message, FailureTypes.RestoreFailed);
  }

  /**
   * The seed's restore init container when spec.bootstrap.restore is set; 'waiting' while the named
   * EtcdSnapshot has not succeeded (nothing is created meanwhile); a failed snapshot ends the operation.
   */
  async function seedRestore(member: string): Promise<RestoreInit | undefined | 'waiting'> {
    if (!spec.bootstrap?.restore) return undefined;
    const prepared = await restoreActs.prepareRestore({ ref, spec, member });
    if (prepared.state === 'ready') {
      details(`restoring ${member} from ${prepared.uri}`);
      return prepared.init;
    }
    if (prepared.state === 'refused') return refuseRestore(prepared.message);
    details(`waiting for the restore source: ${prepared.message}`);
    await sleep(RESTORE_SOURCE_INTERVAL, { summary: prepared.message });
    return 'waiting';
  }

  async function createSeed(member: string): Promise<void> {
    const restore = await seedRestore(member);
    if (restore === 'waiting') return;
    await acts.ensureClusterObjects({ ref, voters: spec.replicas });
    await acts.createMemberClaim({ ref, spec, member });
    await acts.createMemberPod({ ref, spec, member, mode: 'seed', ...(restore ? { restore } : {}) });
  }

  /** The pre-upgrade snapshot's artifact, once taken (spec.backup); named in the operation's result. */
  let snapshotUri: string | undefined = carried?.snapshotUri;
  let snapshotTaken = carried?.snapshotTaken ?? false;

  async function execute(step: ActionStep): Promise<void> {
    // Before an upgrade touches anything: the snapshot spec.backup asks for (a failure ends the operation here).
    if (
      (type === 'Upgrade' || type === 'Downgrade') &&
      spec.backup &&
      !snapshotTaken &&
      (step.kind === 'UpgradeMember' || step.kind === 'MoveLeader' || step.kind === 'EnableDowngrade')
    ) {
      snapshotUri = await takePreUpgradeSnapshot({
        ref,
        spec,
        operationWorkflowId: workflowInfo().workflowId,
        details,
      });
      snapshotTaken = true;
    }
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
      case 'EnableDowngrade': {
        const members = recorded.members;
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
        return;
      }
      case 'RolloutMember':
      case 'UpdateMemberMetadata':
      case 'ExpandClaim':
        await executeRolloutStep({ ref, spec, step, details });
        return;
      case 'Bootstrap':
        await createSeed(step.member);
        return;
      case 'AddMember': {
        await acts.ensureClusterObjects({ ref, voters: spec.replicas });
        await acts.createMemberClaim({ ref, spec, member: step.member });
        let added = await waitingActs.addLearner({ ref, member: step.member, waitMs: NOT_READY_WAIT_MS });
        // Waiting here, not in the plan loop: the claim created above has no member yet, and a fresh plan would
        // take it for an orphan. A refusal that outlasts etcd's health interval goes back to planning.
        for (let asked = 1; 'notReady' in added && asked < NOT_READY_ASKS; asked++) {
          details(`adding member ${step.member}: ${added.notReady}`);
          await sleep(NOT_READY_INTERVAL, { summary: added.notReady });
          added = await waitingActs.addLearner({ ref, member: step.member, waitMs: NOT_READY_WAIT_MS });
        }
        if ('notReady' in added) return;
        const { id } = added;
        pendingLearner = { member: step.member, id };
        details(`member ${step.member} added as learner, starting its Pod`);
        await acts.createMemberPod({ ref, spec, member: step.member, mode: 'join' });
        details(`member ${step.member} added as learner, catching up`);
        return;
      }
      case 'PromoteLearner': {
        const result = await acts.promoteLearner({ ref, member: step.member, id: step.id });
        if (result === 'not-caught-up') {
          await sleep(WAIT_INTERVAL, { summary: `learner ${step.member} catching up` });
          return;
        }
        if (pendingLearner?.id === step.id) pendingLearner = undefined;
        await acts.ensureClusterObjects({ ref, voters: spec.replicas });
        return;
      }
      case 'RemoveMember':
        await acts.removeMember({ ref, id: step.id });
        await acts.deleteMemberPod({ ref, member: step.member });
        await acts.deleteMemberClaim({ ref, member: step.member });
        await acts.ensureClusterObjects({ ref, voters: Math.max(spec.replicas, 1) });
        return;
      case 'MoveLeader':
        await acts.moveLeader({ ref, from: step.from.name, toId: step.to.id });
        return;
      case 'RecreatePod': {
        if (step.id) {
          await acts.createMemberPod({ ref, spec, member: step.member, mode: 'restart' });
          return;
        }
        // A seed that never answered: started again as it was first, restore included (the agent keeps a data dir that already holds a member).
        const restore = await seedRestore(step.member);
        if (restore === 'waiting') return;
        await acts.createMemberPod({
          ref,
          spec,
          member: step.member,
          mode: 'seed',
          ...(restore ? { restore } : {}),
        });
        return;
      }
      case 'Resume':
        await acts.ensureClusterObjects({ ref, voters: Math.max(spec.replicas, 1) });
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
        // Unreachable: run() hands a Defrag operation to runDefragOperation before any step executes.
        throw new Error('a Defrag step reached the membership executor');
    }
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
        ...(lastDetails !== undefined ? { lastDetails } : {}),
      },
    });
  }

  async function run(): Promise<string> {
    // A Defrag keeps its own member order and gates (workflows/defrag-operation.ts); membership is not its business.
    if (type === 'Defrag') {
      return runDefragOperation({ ref, spec, scheduleDue: input.defragScheduleDue === true, details });
    }
    for (;;) {
      await continueIfLong();
      // With the spec, Pods are compared with its template (rollouts); an added input field replays as before.
      const observation = await acts.observeCluster({ ref, version: spec.version, spec });
      recorded = recordedAfter(recorded, observation);
      const downgrade =
        type === 'Downgrade' ? await observeDowngradeIfDue(downgradeActs, ref, spec, observation) : undefined;
      // Only a cluster with spec.auth asks: histories of clusters without it keep their command sequence.
      const auth = spec.auth && !authSeenEnabled ? await observeAuth(ref) : undefined;
      if (auth?.etcd.state === 'enabled') authSeenEnabled = true;
      const observed: Observed = {
        kube: observation.kube,
        recorded,
        ...(observation.etcd ? { etcd: observation.etcd } : {}),
        ...(downgrade ? { downgrade } : {}),
        ...(auth ? { auth } : {}),
      };
      const decision: Decision = plan(desiredOf(ref, spec, observation.versionKnown), observed);
      const step: Step = decision.step;
      if (step.kind === 'Wait' && step.reason === Reasons.RestoreFailed) await refuseRestore(step.message);
      if (step.kind === 'Wait') {
        details(describeStep(step));
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
        continue;
      }
      wait = undefined;
      if (step.kind === 'None') return withUpgradeNote(step.message);
      if (!continuesOperation(type, step, spec.replicas))
        return withUpgradeNote(`done; next: ${describeStep(step)}`);
      steps += 1;
      details(describeStep(step));
      await execute(step);
    }
  }

  function withUpgradeNote(message: string): string {
    if (type !== 'Upgrade' && type !== 'Downgrade') return message;
    return snapshotUri ? `${message}; pre-upgrade snapshot ${snapshotUri}` : message;
  }

  /**
   * An upgrade halted between deleting a member's Pod and recreating it would leave that member down while
   * the cluster starts nothing more (halted). So the Pod comes back, on the image spec.version names: etcd
   * runs mixed versions of one upgrade step, so the cluster keeps working. Then say who runs what.
   */
  async function finishUpgradeRestart(): Promise<string> {
    for (let look = 0; look < HALT_RESTART_LOOKS; look++) {
      const o = await acts.observeCluster({ ref, version: spec.version });
      const listed = new Set(o.etcd?.members.map((m) => m.name) ?? recorded.members);
      const down = o.kube.find(
        (k) => listed.has(k.name) && !k.pod && k.claim && !k.claim.terminating && !k.claim.dataLost,
      );
      const stopping = o.kube.find((k) => listed.has(k.name) && k.pod?.terminating);
      if (down && !stopping) {
        details(`halted: starting ${down.name} again so the cluster keeps every member`);
        await acts.createMemberPod({ ref, spec, member: down.name, mode: 'restart' });
        continue;
      }
      if (!stopping) {
        const versions = (o.etcd?.members ?? [])
          .map(
            (m) =>
              `${m.name} ${m.version ?? o.kube.find((k) => k.name === m.name)?.pod?.version ?? 'unknown'}`,
          )
          .sort();
        return `members run: ${versions.join(', ') || 'unknown (no member answered)'}${snapshotUri ? `; pre-upgrade snapshot ${snapshotUri}` : ''}`;
      }
      await sleep(WAIT_INTERVAL);
    }
    return 'a member Pod was still stopping; the next operation recreates it';
  }

  /** Undo what this operation left half-done; runs even when the operation was cancelled. */
  async function compensate(): Promise<string> {
    // Deleting the EtcdCluster cancels the operation: its members go with it (owner references), so undoing a
    // step would only wait for members that no longer answer (a removal retried for ever, a Pod started for
    // nobody). Histories recorded before this check undo as they did.
    if (patched(SKIP_COMPENSATION_WHEN_GONE_PATCH) && (await acts.clusterGoingAway({ ref }))) {
      pendingLearner = undefined;
      return 'nothing undone: the EtcdCluster is being deleted and its members go with it';
    }
    // A halted upgrade, downgrade or rollout may have stopped a member: it comes back on its claim.
    if (type === 'Upgrade' || type === 'Downgrade' || type === 'Rollout') return finishUpgradeRestart();
    if (!pendingLearner) return 'nothing was left half-done';
    const { member, id } = pendingLearner;
    details(`halted: removing learner ${member} it added`);
    await acts.removeMember({ ref, id });
    await acts.deleteMemberPod({ ref, member });
    await acts.deleteMemberClaim({ ref, member });
    pendingLearner = undefined;
    return `learner ${member} that it added was removed`;
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
        message: `no progress within ${spec.progressDeadlineSeconds}s after ${steps} step(s), stalled at: ${lastLine}; ${undone}`,
        steps,
        recorded,
      };
    }
    // Cancelled from outside (e.g. `temporal workflow cancel`): report what was undone, then end as cancelled.
    setCurrentDetails(`**${input.summary}**\n\ncancelled after ${steps} step(s); ${undone}`);
    throw err;
  }
}
