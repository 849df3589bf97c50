// One long-lived workflow per EtcdCluster: keeps the desired spec, observes, plans, and runs one operation at a time as a child workflow.
//
// Invariants: at most one operation runs; an operation that was cancelled, timed out or failed is not
// started again for the same spec generation until the retry annotation changes; status is written only
// when it changed; deleting the EtcdCluster ends this workflow and leaves cleanup to owner references; an
// EtcdCluster created again under the same name (a new uid) runs on the same workflow id once this run ended.
import {
  ApplicationFailure,
  CancellationScope,
  makeContinueAsNewFunc,
  ChildWorkflowFailure,
  CancelledFailure,
  ParentClosePolicy,
  ChildWorkflowCancellationType,
  allHandlersFinished,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { ClusterActivities } from '../activities/cluster-activities';
import type {
  EtcdClusterStatus,
  LastOperation,
  CurrentOperation,
  OperationResult,
  OperationType,
} from '../crds/etcd-cluster';
import { Reasons } from '../crds/conditions';
import { clusterSelector } from '../crds/labels';
import { clientEndpointFor } from '../crds/tls-names';
import { computeStatus, statusChanged } from './conditions';
import type { ClusterChange, ClusterProgress, ClusterWorkflowInput } from '../contracts/messages';
import {
  clusterChangedSignal,
  membersChangedSignal,
  operationStepSignal,
  operationWorkflowId,
  progressQuery,
  SearchAttributes,
} from '../contracts/messages';
import { desiredOf, recordedAfter } from './observation';
import type { MaintenanceState, OperationInput } from './operations/operation-module';
import { withDefragSchedule } from './operations/operation-module';
import { operationModule, summarize } from './operations/registry';
import { clusterOperationWorkflow } from './operation-workflow';
import { membersRunning } from './upgrade-halt';
import type { Observed } from './plan';
import { defragConfigOf } from './defrag-plan';
import type { DefragScheduleState } from './defrag-schedule';
import { advanceSchedule, idleWaitMs, scheduleDue } from './defrag-schedule';
import { currentSize, describeStep, MEMBER_PROBLEM_REASONS, operationFor, plan } from './plan';
import { MAX_WAIT_MS, waitBackoffMs } from './wait-backoff';
import { observeAuth } from './auth-step';
import { ActivityKinds } from './activity-kinds';
import { refusalNotice } from './refusal-notice';
import type { EventReason } from '../contracts/event-reasons';
import type { IssuedTLSStage } from '../contracts/issued-tls';
import { planIssuedTLS } from './issued-tls-plan';

/** What survives continue-as-new besides the newest change. */
export interface CarriedState {
  recorded: Observed['recorded'];
  status?: EtcdClusterStatus;
  halted?: Halt;
  lastOperation?: LastOperation;
  seq: number;
  /** spec.maintenance.defrag.schedule and its next firing (workflows/defrag-schedule.ts). */
  defragSchedule?: DefragScheduleState;
  /** When the last Defrag operation ended: the threshold's cooldown counts from it (workflows/defrag-plan.ts). */
  lastDefragAt?: string;
  /** The refusal last told as an Event (upgrade path, auth, TLS trust): told once, also across continue-as-new. */
  refusalReported?: string;
  /** Likewise the storage growth last refused. */
  storageRefusalReported?: string;
  /** Notices already told as an Event (member problems, an unsupported version): told once, across runs too. */
  told?: string[];
}

interface Halt {
  generation: number;
  retryToken: string;
  result: OperationResult;
}

const acts = proxyActivities<ClusterActivities>(ActivityKinds.entityCall);

/**
 * How often an idle cluster is observed without being told of a change. The watcher signals every Pod
 * and claim change, so this only catches what no watch reports (an etcd member going quiet); it is also
 * what an idle cluster costs in Temporal actions: two per interval (one timer, one activity).
 */
export const DRIFT_CHECK_INTERVAL = '10m';
/** The patch behind refreshing status.members while an Upgrade or Downgrade runs (histories before it did not). */
const MEMBER_VERSIONS_DURING_UPGRADE_PATCH = 'member-versions-during-upgrade';
/**
 * The patch behind handing over to a new EtcdCluster of the same namespace and name (deleted and created
 * again): histories before it dropped such a signal. See docs/adr/0002-same-name-recreate.md.
 */
const SUCCESSOR_PATCH = 'same-name-successor';
const DRIFT_CHECK_MS = 10 * 60_000;
/**
 * While the plan waits on something outside the operator (a Pod starting, quorum coming back): the first
 * look again after this long, then backing off while the wait stays the same (workflows/wait-backoff.ts).
 * The watcher signals every Pod and claim change, which ends the pause at once.
 */
const WAIT_RECHECK_MS = 5000;
/** Waits only a spec change can end: as cheap as an idle cluster (a spec change is a signal). */
const SPEC_ONLY_WAITS: readonly string[] = [Reasons.UnsupportedVersion, Reasons.UpgradePathRefused];
/** Notices told once as an Event: a member Pod that cannot run, an unsupported version. */
const TOLD_ONCE = [
  Reasons.ImagePullFailed,
  Reasons.MemberCrashLooping,
  Reasons.PodUnschedulable,
  Reasons.ClaimPending,
  Reasons.UnsupportedVersion,
] as const satisfies readonly EventReason[];
const toldOnce = (reason: string): reason is (typeof TOLD_ONCE)[number] =>
  (TOLD_ONCE as readonly string[]).includes(reason);
/** How many told notices are remembered (oldest forgotten first). */
const TOLD_KEPT = 32;
/** The patch behind telling member problems and unsupported versions as Events. */
const TELL_PROBLEMS_PATCH = 'tell-member-problems';
/**
 * The patch behind the operation mirror that observes once per new step (status follows every operation, and
 * is written only when it changed), forwards the watcher's member changes to the operation, and lets a new
 * spec generation supersede an operation waiting on a member Pod that cannot run.
 */
const STEP_MIRROR_PATCH = 'operation-step-mirror-v2';

/**
 * The patch behind moving cert-manager's TLS changes into the operator's copies in stages, and behind saying
 * TLSTrustBroken when members refuse the operator's certificate (histories before it never observed either).
 */
const ISSUED_TLS_PATCH = 'issued-tls-stages';
const STAGE_EVENT: Record<IssuedTLSStage, EventReason> = {
  Copy: 'IssuedTLSCopied',
  TrustNewCA: 'CATrustExtended',
  ApplyReissued: 'CertificatesReissued',
  DropOldCA: 'OldCADropped',
};

const RESULT_EVENT: Record<OperationResult, { type: 'Normal' | 'Warning'; reason: EventReason }> = {
  Succeeded: { type: 'Normal', reason: 'OperationSucceeded' },
  Failed: { type: 'Warning', reason: 'OperationFailed' },
  Cancelled: { type: 'Warning', reason: 'OperationCancelled' },
  DeadlineExceeded: { type: 'Warning', reason: Reasons.Stalled },
};

export async function etcdClusterWorkflow(
  input: ClusterWorkflowInput & { carried?: CarriedState },
): Promise<void> {
  const { ref } = input;
  let desired: ClusterChange = input.change;
  let deleted = Boolean(desired.deleted);
  let dirty = true;
  let recorded: Observed['recorded'] = input.carried?.recorded ?? { members: [], paused: false };
  let status = input.carried?.status;
  let halted = input.carried?.halted;
  let lastOperation = input.carried?.lastOperation;
  let seq = input.carried?.seq ?? 0;
  /** What operation modules keep between their operations (the defrag schedule and cooldown). */
  let maintenance: MaintenanceState = {
    ...(input.carried?.defragSchedule ? { defragSchedule: input.carried.defragSchedule } : {}),
    ...(input.carried?.lastDefragAt ? { lastDefragAt: input.carried.lastDefragAt } : {}),
  };
  let told: string[] = input.carried?.told ?? [];
  let current: CurrentOperation | undefined;
  /** What the running operation waits on, when it waits (it tells its step as data). */
  let currentWaitReason: string | undefined;
  /** Consecutive looks at a wait of the same reason: the pause before the next look grows with it. */
  let waitStreak = 0;
  let lastWaitReason = '';
  /** A member change arrived while an operation runs: the operation hears of it (STEP_MIRROR_PATCH). */
  let membersChangedDuringOperation = false;
  /** The spec generation that superseded the running operation, when one did. */
  let supersededBy: number | undefined;
  let stepChanged = false;
  let lastDecision = '';
  /** The refused upgrade path last told as an Event, so each refusal is one Event, not one per observation. */
  let refusalReported = input.carried?.refusalReported ?? '';
  /** Likewise the storage growth last refused (workflows/rollout-plan.ts). */
  let storageRefusalReported = input.carried?.storageRefusalReported ?? '';
  /**
   * A new EtcdCluster of the same namespace and name: this run's object is gone (uids never return), and once
   * this run has ended (its operation cancelled, compensation skipped) the new object gets a run of its own.
   */
  let successor: ClusterChange | undefined;
  /** The running operation's scope: deleting the EtcdCluster cancels it (its own compensation still runs). */
  let operationScope: CancellationScope | undefined;

  setHandler(clusterChangedSignal, (change) => {
    if (change.uid !== ref.uid) {
      // Another object of the same name. Its deletion is not for this run; a live one replaces this run's
      // object, and runs on the same workflow id after this run ends, so two runs never act on one name.
      if (change.deleted) {
        if (successor?.uid === change.uid) successor = undefined;
      } else if (patched(SUCCESSOR_PATCH)) {
        if (successor?.uid !== change.uid || change.generation >= successor.generation) successor = change;
        deleted = true;
        operationScope?.cancel();
        dirty = true;
      }
      return;
    }
    if (change.deleted) {
      deleted = true;
      operationScope?.cancel();
    } else if (
      change.generation > desired.generation ||
      (change.retryToken ?? '') !== (desired.retryToken ?? '')
    ) {
      // An operation waiting on a member Pod that cannot run (no image, unschedulable, ...) waits for the user
      // to fix the spec: the fix supersedes it, and the next operation works from the new spec.
      if (
        change.generation > desired.generation &&
        operationScope &&
        current &&
        (MEMBER_PROBLEM_REASONS.includes(currentWaitReason ?? '') ||
          // The operation may not have looked again yet; the last status already says a member Pod cannot run.
          MEMBER_PROBLEM_REASONS.includes(
            status?.conditions?.find((c) => c.type === 'Degraded')?.reason ?? '',
          ))
      ) {
        supersededBy = change.generation;
        operationScope.cancel();
      }
      desired = change;
    }
    dirty = true;
  });
  setHandler(membersChangedSignal, () => {
    dirty = true;
    if (current) membersChangedDuringOperation = true;
  });
  setHandler(operationStepSignal, (update) => {
    if (current) {
      // Operations started before the step came as data send the line alone.
      const step = typeof update === 'string' ? { line: update } : update;
      current = { ...current, step: step.line };
      currentWaitReason =
        step.waitReason ?? (typeof update === 'string' ? waitReasonOfLine(update) : undefined);
      stepChanged = true;
    }
  });
  setHandler(progressQuery, (): ClusterProgress => ({
    generation: desired.generation,
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
    ...(halted && isHalted() ? { halted: { generation: halted.generation, reason: halted.result } } : {}),
    lastDecision,
  }));

  const isHalted = () =>
    halted !== undefined &&
    halted.generation === desired.generation &&
    halted.retryToken === (desired.retryToken ?? '');

  async function publish(
    observed: Observed,
    decision: ReturnType<typeof plan>,
    versionKnown: boolean,
  ): Promise<void> {
    const next = computeStatus({
      generation: desired.generation,
      desired: desiredOf(ref, desired.spec, versionKnown),
      observed,
      decision,
      ...(current ? { currentOperation: current } : {}),
      ...(lastOperation ? { lastOperation } : {}),
      halted: isHalted(),
      selector: clusterSelector(ref.name),
      clientEndpoint: clientEndpointFor(desired.spec, ref),
      ...(status ? { previous: status } : {}),
      now: new Date().toISOString(),
    });
    const step = decision.step;
    if (step.kind === 'Wait' && toldOnce(step.reason)) {
      // Told once per reason and subject (the message up to its first ': ', e.g. `claim data-main-0 is Pending`,
      // `Pod main-0 cannot pull image "x"`): the kubelet's changing detail after it is no news.
      const notice = `${step.reason}|${step.message.split(': ')[0] ?? ''}`;
      if (!told.includes(notice) && patched(TELL_PROBLEMS_PATCH)) {
        told = [...told, notice].slice(-TOLD_KEPT);
        await acts.recordEvent({ ref, type: 'Warning', reason: step.reason, message: step.message });
      }
    }
    if (!statusChanged(status, next)) return;
    if ((await acts.writeStatus({ ref, status: next })) === 'cluster-gone') {
      deleted = true;
      return;
    }
    status = next;
  }

  /** Recomputes status (members, versions, conditions) from a fresh observation while an operation runs. */
  async function refreshMembers(): Promise<void> {
    // With the spec, so members keep their upToDate verdict (a status without it would be written twice).
    const observation = await acts.observeCluster({ ref, version: desired.spec.version, spec: desired.spec });
    const observed: Observed = { kube: observation.kube, recorded };
    if (observation.etcd) observed.etcd = observation.etcd;
    await publish(
      observed,
      plan(desiredOf(ref, desired.spec, observation.versionKnown), observed),
      observation.versionKnown,
    );
  }

  async function runOperation(
    type: OperationType,
    opInput: OperationInput,
    workflowId: string,
  ): Promise<void> {
    const module = operationModule(type);
    const startedAt = new Date().toISOString();
    current = { type, workflowId, startedAt, step: 'starting' };
    currentWaitReason = undefined;
    setCurrentDetails(`**${opInput.summary}** running as \`${workflowId}\``);
    await acts.recordEvent({
      ref,
      type: 'Normal',
      reason: `${type}Started`,
      message: `${opInput.summary} (${workflowId})`,
    });

    let result: OperationResult;
    let message: string;
    const mirrorV2 = patched(STEP_MIRROR_PATCH);
    supersededBy = undefined;
    membersChangedDuringOperation = false;
    const scope = new CancellationScope();
    operationScope = scope;
    if (deleted) scope.cancel();
    try {
      const outcome = await scope.run(async () => {
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
        // Mirror the child's current step into status while it runs. Not cancellable: when the scope is
        // cancelled this loop must keep waiting for the child to finish its compensation, or the workflow
        // would go on (and end, on deletion) while the child still runs.
        let refreshedStep: string | undefined;
        await CancellationScope.nonCancellable(async () => {
          for (;;) {
            await condition(() => finished || stepChanged || (mirrorV2 && membersChangedDuringOperation));
            if (finished) break;
            if (mirrorV2 && membersChangedDuringOperation) {
              // The operation waits with back-off; a Pod or claim change is worth a look at once.
              membersChangedDuringOperation = false;
              // By workflow id, not run: the operation may have continued as new since it started.
              await getExternalWorkflowHandle(workflowId)
                .signal(membersChangedSignal)
                .catch(() => undefined);
              if (!stepChanged) continue;
            }
            stepChanged = false;
            // During a version change, members restart on the new version one by one: observe again so
            // status.members[].version follows them (other operations keep members until they end).
            if (module.changesVersions && current && patched(MEMBER_VERSIONS_DURING_UPGRADE_PATCH)) {
              // A repeated wait line (the child re-sends it every turn) observes nothing new worth a write.
              if (current.step !== refreshedStep) {
                refreshedStep = current.step;
                await refreshMembers();
              }
              continue;
            }
            if (mirrorV2) {
              // A new step is a new observation (members, and why a wait waits: a Pod that cannot run shows in
              // Degraded); a repeated one changes nothing and writes nothing.
              if (current && current.step !== refreshedStep) {
                refreshedStep = current.step;
                await refreshMembers();
              }
              continue;
            }
            if (status && current) {
              const next: EtcdClusterStatus = { ...status, currentOperation: current };
              if ((await acts.writeStatus({ ref, status: next })) === 'written') status = next;
            }
          }
        });
        return done;
      });
      result = outcome.result;
      message = outcome.message;
      recorded = {
        ...outcome.recorded,
        paused: module.pausedAfter ?? recorded.paused,
      };
    } catch (err) {
      if (err instanceof ChildWorkflowFailure && err.cause instanceof CancelledFailure) {
        result = 'Cancelled';
        message = deleted
          ? 'cancelled because the EtcdCluster is being deleted'
          : supersededBy !== undefined
            ? `superseded by spec generation ${supersededBy} while it waited (${current?.step ?? 'a member could not run'})`
            : 'cancelled from outside the operator';
        // A version change stopped half-way leaves mixed versions: say who runs what (the child restarted
        // any member it had stopped before it ended).
        if (!deleted && module.changesVersions) {
          const after = await acts.observeCluster({ ref, version: opInput.spec.version });
          message = `${message}; ${membersRunning(after)}`;
        }
      } else if (err instanceof CancelledFailure || (err instanceof ChildWorkflowFailure && deleted)) {
        result = 'Cancelled';
        message = 'cancelled because the EtcdCluster is being deleted';
      } else if (err instanceof ChildWorkflowFailure) {
        result = 'Failed';
        message =
          err.cause instanceof ApplicationFailure
            ? err.cause.message
            : String(err.cause?.message ?? err.message);
      } else {
        throw err;
      }
    }
    current = undefined;
    currentWaitReason = undefined;
    operationScope = undefined;
    lastOperation = {
      type,
      result,
      finishedAt: new Date().toISOString(),
      message,
      workflowId,
      observedGeneration: opInput.generation,
    };
    if (result !== 'Succeeded') {
      halted = { generation: opInput.generation, retryToken: desired.retryToken ?? '', result };
    }
    const event =
      supersededBy !== undefined && result === 'Cancelled'
        ? { type: 'Normal' as const, reason: Reasons.OperationSuperseded }
        : RESULT_EVENT[result];
    supersededBy = undefined;
    await acts.recordEvent({
      ref,
      type: event.type,
      reason: event.reason,
      message: `${opInput.summary}: ${result}. ${message}`,
    });
    setCurrentDetails(`last operation: **${opInput.summary}**: ${result}. ${message}`);
  }

  while (!deleted) {
    if (workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof etcdClusterWorkflow>({
        ref,
        change: desired,
        carried: {
          recorded,
          ...(status ? { status } : {}),
          ...(halted ? { halted } : {}),
          ...(lastOperation ? { lastOperation } : {}),
          seq,
          ...(maintenance.defragSchedule ? { defragSchedule: maintenance.defragSchedule } : {}),
          ...(maintenance.lastDefragAt ? { lastDefragAt: maintenance.lastDefragAt } : {}),
          ...(refusalReported ? { refusalReported } : {}),
          ...(storageRefusalReported ? { storageRefusalReported } : {}),
          ...(told.length > 0 ? { told } : {}),
        },
      });
    }
    dirty = false;
    const target = desired;
    const observation = await acts.observeCluster({ ref, version: target.spec.version, spec: target.spec });
    recorded = recordedAfter(recorded, observation);
    const observed: Observed = { etcd: observation.etcd, kube: observation.kube, recorded };
    if (!observed.etcd) delete observed.etcd;
    // Only observations that carry these call patched(): older histories never had them.
    if (observation.etcdRefused && patched(ISSUED_TLS_PATCH)) observed.etcdRefused = observation.etcdRefused;
    let tlsRecheckMs: number | undefined;
    if (observation.issuedTLS && patched(ISSUED_TLS_PATCH)) {
      const members = observation.kube.map((k) => ({
        ...(k.pod?.template ? { upToDate: k.pod.template.upToDate } : {}),
        ready: k.pod !== undefined && !k.pod.terminating && k.pod.ready,
      }));
      const next = planIssuedTLS(observation.issuedTLS, members);
      if (next?.kind === 'Stage') {
        const changed = await acts.stageIssuedTLS({ ref, spec: target.spec, stage: next.stage });
        // Nothing changed means the look was older than the Secrets: plan on; a Secret change signals anyway.
        if (changed.length > 0) {
          await acts.recordEvent({
            ref,
            type: 'Normal',
            reason: STAGE_EVENT[next.stage],
            message: `${next.why} (${changed.join(', ')})`,
          });
          dirty = true;
          continue;
        }
      } else if (next?.kind === 'Later') {
        tlsRecheckMs = next.afterMs;
      }
    }
    // Only a cluster with spec.auth asks: histories of clusters without it keep their command sequence.
    if (target.spec.auth) observed.auth = await observeAuth(ref);
    // The defrag schedule is judged by the workflow's clock; a firing is served by the next Defrag operation.
    const now = new Date().toISOString();
    const defragSchedule = advanceSchedule(
      maintenance.defragSchedule,
      target.spec.maintenance?.defrag?.schedule,
      now,
    );
    maintenance = withDefragSchedule(maintenance, defragSchedule);
    const defragDue = scheduleDue(defragSchedule, now);
    const desiredNow = desiredOf(ref, target.spec, observation.versionKnown);
    if (defragDue) desiredNow.defrag = defragConfigOf(target.spec, true);
    // The threshold waits out its cooldown after any Defrag; the schedule and NOSPACE do not (defrag-plan.ts).
    const { lastDefragAt } = maintenance;
    if (lastDefragAt && desiredNow.defrag) desiredNow.defrag.cooldown = { lastDefragAt, now };
    const decision = plan(desiredNow, observed);
    lastDecision = `${decision.check}: ${describeStep(decision.step)}`;
    const step = decision.step;
    // A refusal is told once per message (an upgrade path, auth, TLS trust, storage growth).
    const notice = refusalNotice(step, { refusal: refusalReported, storage: storageRefusalReported });
    refusalReported = notice.told.refusal;
    storageRefusalReported = notice.told.storage;
    if (notice.event) await acts.recordEvent({ ref, type: 'Warning', ...notice.event });

    if (step.kind !== 'Wait' && step.kind !== 'None' && !isHalted()) {
      const type = operationFor(step, target.spec.replicas);
      const module = operationModule(type);
      seq += 1;
      const workflowId = operationWorkflowId(ref.namespace, ref.name, seq, type);
      const summary = summarize(type, ref, currentSize(observed), target.spec.replicas, step);
      current = { type, workflowId, startedAt: new Date().toISOString(), step: describeStep(step) };
      await publish(observed, decision, observation.versionKnown);
      if (deleted) break;
      await runOperation(
        type,
        {
          ref,
          spec: target.spec,
          generation: target.generation,
          type,
          summary,
          versionKnown: observation.versionKnown,
          recorded,
          ...module.startInput?.({ defragDue }),
        },
        workflowId,
      );
      if (module.ended) maintenance = module.ended(maintenance, { defragDue, spec: target.spec });
      dirty = true;
      continue;
    }

    await publish(observed, decision, observation.versionKnown);
    setCurrentDetails(
      isHalted()
        ? `halted after **${lastOperation?.type ?? 'an operation'}** ${lastOperation?.result ?? ''}: change the spec or set the retry annotation to go on`
        : `idle: ${describeStep(step)}`,
    );
    // A wait that stays the same is looked at less and less often (a signal ends the pause at once); one
    // only a spec change can end costs what an idle cluster does.
    if (step.kind === 'Wait') {
      waitStreak = step.reason === lastWaitReason ? waitStreak + 1 : 0;
      lastWaitReason = step.reason;
    } else {
      waitStreak = 0;
      lastWaitReason = '';
    }
    const idle = maintenance.defragSchedule
      ? idleWaitMs(maintenance.defragSchedule, new Date().toISOString(), DRIFT_CHECK_MS)
      : DRIFT_CHECK_INTERVAL;
    const timeout =
      step.kind === 'Wait' && !SPEC_ONLY_WAITS.includes(step.reason)
        ? Math.min(waitBackoffMs(waitStreak, WAIT_RECHECK_MS), MAX_WAIT_MS)
        : idle;
    await condition(
      () => dirty || deleted,
      // A TLS stage due later (the old CA's grace) wakes the cluster no later than then.
      tlsRecheckMs === undefined
        ? timeout
        : Math.min(tlsRecheckMs, typeof timeout === 'number' ? timeout : DRIFT_CHECK_MS),
    );
  }

  if (successor) {
    // The new object's run: nothing carried but the operation counter, so its operation ids stay unique.
    const next = successor;
    await condition(allHandlersFinished);
    setCurrentDetails(`EtcdCluster ${ref.namespace}/${ref.name} was created again (uid ${next.uid})`);
    return makeContinueAsNewFunc<typeof etcdClusterWorkflow>({
      typedSearchAttributes: [
        { key: SearchAttributes.clusterNamespace, value: ref.namespace },
        { key: SearchAttributes.clusterName, value: ref.name },
        { key: SearchAttributes.clusterUid, value: next.uid },
      ],
    })({
      ref: { namespace: ref.namespace, name: ref.name, uid: next.uid },
      change: next,
      carried: { recorded: { members: [], paused: false }, seq },
    });
  }
}

/**
 * The wait reason in a step line (`wait (Reason): ...`, plan.ts describeStep), for operations started before
 * the step came as data (`operation-step-as-data`): they send the line alone.
 */
function waitReasonOfLine(line: string): string | undefined {
  return /^wait \(([A-Za-z]+)\)/.exec(line)?.[1];
}
