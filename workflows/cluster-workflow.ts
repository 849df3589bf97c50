// One long-lived workflow per EtcdCluster: keeps the desired spec, observes, plans, and runs one operation at a time as a child workflow.
//
// Invariants: at most one operation runs; an operation that was cancelled, timed out or failed is not
// started again for the same spec generation until the retry annotation changes; status is written only
// when it changed; deleting the EtcdCluster ends this workflow and leaves cleanup to owner references; an
// EtcdCluster created again under the same name (a new uid) runs on the same workflow id once this run ended.
//
// The pieces: the run's state (cluster-run-state.ts), its signal handlers (cluster-signals.ts), status
// (cluster-status.ts), running one operation (cluster-operation-run.ts); this file is the loop of looks.
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  makeContinueAsNewFunc,
  patched,
  setCurrentDetails,
  workflowInfo,
} from '@temporalio/workflow';
import type { EventReason } from '../contracts/event-reasons';
import type { IssuedTLSStage } from '../contracts/issued-tls';
import type { ClusterChange } from '../contracts/messages';
import { operationWorkflowId, SearchAttributes } from '../contracts/messages';
import type { ClusterObservation } from '../contracts/observation';
import { Reasons } from '../crds/conditions';
import { autoTLSOn } from '../crds/tls-names';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { BACKUP_LOOK_MS } from './continuous-backup-status';
import { keepContinuousBackup } from './cluster-continuous-backup';
import { autoTLSRenewalInMs, keepAutoTLS } from './cluster-auto-tls';
import { observeAuth } from './auth-step';
import { authNeedsAnotherLook } from './auth-plan';
import { runOperation } from './cluster-operation-run';
import { FIRST_LOOK_PATCH } from './operation-workflow';
import type { ClusterRunState, ClusterWorkflowArgs } from './cluster-run-state';
import { carriedOf, clusterActs as acts, initialRunState, isHalted } from './cluster-run-state';
import { installClusterHandlers } from './cluster-signals';
import { publish } from './cluster-status';
import { defragConfigOf } from './defrag-plan';
import { advanceSchedule, idleWaitMs, scheduleDue } from './defrag-schedule';
import {
  defragOnTemporalSchedule,
  deleteKept,
  keepDefragSchedule,
  temporalDefragDue,
} from './defrag-schedule-keeper';
import { planIssuedTLS } from './issued-tls-plan';
import { desiredOf, lookServesChange, recordedAfter } from './observation';
import { withDefragSchedule } from './operations/operation-module';
import { operationModule, summarize } from './operations/registry';
import type { ActionStep, Decision, Observed, Step } from './plan';
import { currentSize, describeStep, operationFor } from './plan';
import { planWithApprovals } from './plan-now';
import { dropStaleApproval, findLossFacts, tellQuorumLoss } from './cluster-quorum-loss';
import { tellRefusedRollback } from './cluster-rollback';
import { highestRevision, newerRevision } from './quorum-loss';
import { refusalNotice } from './refusal-notice';
import { MAX_WAIT_MS, waitBackoffMs } from './wait-backoff';

export type { CarriedState } from './cluster-run-state';
export { waitReasonOfLine } from './cluster-signals';

/**
 * How often an idle cluster is observed without being told of a change. The watcher signals every Pod
 * and claim change, so this only catches what no watch reports (an etcd member going quiet); it is also
 * what an idle cluster costs in Temporal actions: two per interval (one timer, one activity).
 */
export const DRIFT_CHECK_INTERVAL = '10m';
const DRIFT_CHECK_MS = 10 * 60_000;
/**
 * While the plan waits on something outside the operator (a Pod starting, quorum coming back): the first
 * look again after this long, then backing off while the wait stays the same (workflows/wait-backoff.ts).
 * The watcher signals every Pod and claim change, which ends the pause at once.
 */
const WAIT_RECHECK_MS = 5000;
/** Waits only a spec change can end: as cheap as an idle cluster (a spec change is a signal). */
const SPEC_ONLY_WAITS: readonly string[] = [Reasons.UnsupportedVersion, Reasons.UpgradePathRefused];
/** The patch behind looking again soon (backing off) when auth could not be read while etcd answered. */
const RECHECK_UNKNOWN_AUTH_PATCH = 'recheck-unknown-auth';
/** The patch behind planning a change of spec.replicas alone, signalled while a look ran, on that look. */
const REPLICAS_ON_RUNNING_LOOK_PATCH = 'replicas-change-on-running-look';
/** The patch behind publishing an operation's start (status, Event) together with starting its child workflow. */
const OPERATION_START_TOGETHER_PATCH = 'operation-start-together';

/**
 * The patch behind moving cert-manager's TLS changes into the operator's copies in stages, and behind saying
 * TLSTrustBroken when members refuse the operator's certificate (histories before it never observed either).
 */
const ISSUED_TLS_PATCH = 'issued-tls-stages';
/** The patch behind keeping the continuous backup's archiver and status.backup (spec.backup.continuous). */
const CONTINUOUS_BACKUP_PATCH = 'continuous-backup';
const STAGE_EVENT: Record<IssuedTLSStage, EventReason> = {
  Copy: 'IssuedTLSCopied',
  TrustNewCA: 'CATrustExtended',
  ApplyReissued: 'CertificatesReissued',
  DropOldCA: 'OldCADropped',
};

export async function etcdClusterWorkflow(input: ClusterWorkflowArgs): Promise<void> {
  const s = initialRunState(input);
  installClusterHandlers(s);
  while (!s.deleted) {
    if (workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof etcdClusterWorkflow>({
        ref: s.ref,
        change: s.desired,
        carried: carriedOf(s),
      });
    }
    await lookAndAct(s);
  }
  // The deleted object's defrag schedule goes with it (a successor of the same name keeps its own).
  await deleteKept(s);
  if (s.successor) return handOverToSuccessor(s, s.successor);
}

/** One look: observe, plan, then start the operation the plan asks for or wait for the next reason to look. */
async function lookAndAct(s: ClusterRunState): Promise<void> {
  s.dirty = false;
  let target = s.desired;
  // Only a cluster with spec.tls.mode Auto asks: histories of every other cluster keep their command sequence.
  if (autoTLSOn(target.spec)) await keepAutoTLS(s, target.spec);
  // Only a cluster whose spec or status has the continuous backup asks: histories of every other cluster keep theirs.
  if ((target.spec.backup?.continuous || s.status?.backup) && patched(CONTINUOUS_BACKUP_PATCH))
    await keepContinuousBackup(s, target.spec);
  const { observation, observed } = await observe(s, target.spec);
  const tls = await advanceIssuedTLS(s, target.spec, observation);
  if (tls.staged) {
    s.dirty = true;
    return;
  }
  // Only a cluster with spec.auth asks: histories of clusters without it keep their command sequence.
  if (target.spec.auth) observed.auth = await observeAuth(s.ref);
  await findLossFacts(s, target.spec, observed, observation.versionKnown);
  await keepDefragSchedule(s, target.spec);
  // A change of spec.replicas alone that came while this look ran is planned on it (a look for it would read the
  // same), instead of after a status write for the spec it replaces and another look.
  if (
    s.desired !== target &&
    lookServesChange(target, s.desired) &&
    patched(REPLICAS_ON_RUNNING_LOOK_PATCH)
  ) {
    target = s.desired;
  }
  const { decision, defragDue } = decide(s, target.spec, observation, observed);
  await tellRefusal(s, decision.step);
  await tellQuorumLoss(s, decision.step);
  await dropStaleApproval(s, observed);
  await tellRefusedRollback(s);
  const step = decision.step;
  if (step.kind !== 'Wait' && step.kind !== 'None' && !isHalted(s)) {
    await startOperation(s, target, { observation, observed, decision, step, defragDue });
    return;
  }
  await publish(s, observed, decision, observation.versionKnown);
  setCurrentDetails(
    isHalted(s)
      ? `halted after **${s.lastOperation?.type ?? 'an operation'}** ${s.lastOperation?.result ?? ''}: change the spec or set the retry annotation to go on`
      : `idle: ${describeStep(step)}`,
  );
  await waitForNextLook(
    s,
    step,
    earliest(
      earliest(earliest(tls.recheckMs, autoTLSRenewalInMs(s)), authRecheckMs(s, target.spec, observed)),
      s.desired.spec.backup?.continuous ? BACKUP_LOOK_MS : undefined,
    ),
  );
}

/**
 * Auth that could not be read while etcd answered is looked at again after 5 s, backing off while it stays unknown;
 * asked of the patch only then, so histories that never met it record no marker.
 */
function authRecheckMs(s: ClusterRunState, spec: EtcdClusterSpec, observed: Observed): number | undefined {
  if (!authNeedsAnotherLook(spec.auth !== undefined, observed.etcd !== undefined, observed.auth)) {
    s.authUnknownStreak = 0;
    return undefined;
  }
  if (!patched(RECHECK_UNKNOWN_AUTH_PATCH)) return undefined;
  return waitBackoffMs(s.authUnknownStreak++, WAIT_RECHECK_MS);
}

/**
 * spec.backup.continuous: keeps the archiver's Deployment and reads what the store holds; status.backup and the
 * ContinuousBackup condition follow on this look's status write, and what changed is told as Events. A failed call
 * (the apiserver refusing a Deployment) leaves the last look's outcome and is tried again on the next look.
 */
const earliest = (a: number | undefined, b: number | undefined) =>
  a === undefined ? b : b === undefined ? a : Math.min(a, b);

/** Observes the cluster and records what the observation says about its members. */
async function observe(
  s: ClusterRunState,
  spec: EtcdClusterSpec,
): Promise<{ observation: ClusterObservation; observed: Observed }> {
  const observation = await acts.observeCluster({ ref: s.ref, version: spec.version, spec });
  s.recorded = recordedAfter(s.recorded, observation);
  // The newest revision seen, for the window a later recovery gives up (members may lag: the highest counts).
  const revision = highestRevision(observation.etcd?.members ?? []);
  if (revision !== undefined) {
    s.lastSeenRevision = newerRevision(s.lastSeenRevision, { revision, at: new Date().toISOString() });
  }
  const observed: Observed = { etcd: observation.etcd, kube: observation.kube, recorded: s.recorded };
  if (!observed.etcd) delete observed.etcd;
  // Only observations that carry these call patched(): older histories never had them.
  if (observation.etcdRefused && patched(ISSUED_TLS_PATCH)) observed.etcdRefused = observation.etcdRefused;
  return { observation, observed };
}

/**
 * Moves cert-manager's reissued TLS into the operator's copies, one stage at a time (issued-tls-plan.ts).
 * `staged`: a stage changed Secrets, so look again; `recheckMs`: a stage is due later (the old CA's grace).
 */
async function advanceIssuedTLS(
  s: ClusterRunState,
  spec: EtcdClusterSpec,
  observation: ClusterObservation,
): Promise<{ staged: boolean; recheckMs?: number }> {
  if (!observation.issuedTLS || !patched(ISSUED_TLS_PATCH)) return { staged: false };
  const members = observation.kube.map((k) => ({
    ...(k.pod?.template ? { upToDate: k.pod.template.upToDate } : {}),
    ready: k.pod !== undefined && !k.pod.terminating && k.pod.ready,
  }));
  const next = planIssuedTLS(observation.issuedTLS, members);
  if (next?.kind === 'Later') return { staged: false, recheckMs: next.afterMs };
  if (next?.kind !== 'Stage') return { staged: false };
  const changed = await acts.stageIssuedTLS({ ref: s.ref, spec, stage: next.stage });
  // Nothing changed means the look was older than the Secrets: plan on; a Secret change signals anyway.
  if (changed.length === 0) return { staged: false };
  await acts.recordEvent({
    ref: s.ref,
    type: 'Normal',
    reason: STAGE_EVENT[next.stage],
    message: `${next.why} (${changed.join(', ')})`,
  });
  return { staged: true };
}

/** The plan for this look, with the defrag schedule judged by the workflow's clock. */
function decide(
  s: ClusterRunState,
  spec: EtcdClusterSpec,
  observation: ClusterObservation,
  observed: Observed,
): { decision: Decision; defragDue: boolean } {
  const now = new Date().toISOString();
  const defragDue = defragOnTemporalSchedule(s, spec)
    ? temporalDefragDue(s, spec)
    : handCronDefragDue(s, spec, now);
  const desiredNow = desiredOf(s.ref, spec, observation.versionKnown);
  if (defragDue) desiredNow.defrag = defragConfigOf(spec, true);
  // The threshold waits out its cooldown after any Defrag; the schedule and NOSPACE do not (defrag-plan.ts).
  const { lastDefragAt } = s.maintenance;
  if (lastDefragAt && desiredNow.defrag) desiredNow.defrag.cooldown = { lastDefragAt, now };
  const { decision, used } = planWithApprovals(desiredNow, observed, {
    uid: s.ref.uid,
    spec,
    held: s.desired,
  });
  if (used) {
    // The approval is used once: the operation removes the annotation; until the watcher tells, this run forgets it.
    const { [used]: _used, ...rest } = s.desired;
    s.desired = rest;
  }
  s.lastDecision = `${decision.check}: ${describeStep(decision.step)}`;
  return { decision, defragDue };
}

/**
 * DEPRECATED PATH (runs from before patch defrag-on-temporal-schedule, until they continue as new): the defrag
 * schedule judged by the workflow's clock; a firing is served by the next Defrag operation.
 */
function handCronDefragDue(s: ClusterRunState, spec: EtcdClusterSpec, now: string): boolean {
  const defragSchedule = advanceSchedule(
    s.maintenance.defragSchedule,
    spec.maintenance?.defrag?.schedule,
    now,
  );
  s.maintenance = withDefragSchedule(s.maintenance, defragSchedule);
  return scheduleDue(defragSchedule, now);
}

/** A refusal is told once per message (an upgrade path, auth, TLS trust, storage growth). */
async function tellRefusal(s: ClusterRunState, step: Step): Promise<void> {
  const notice = refusalNotice(step, { refusal: s.refusalReported, storage: s.storageRefusalReported });
  s.refusalReported = notice.told.refusal;
  s.storageRefusalReported = notice.told.storage;
  if (notice.event) await acts.recordEvent({ ref: s.ref, type: 'Warning', ...notice.event });
}

interface Look {
  observation: ClusterObservation;
  observed: Observed;
  decision: Decision;
  step: ActionStep;
  defragDue: boolean;
}

/** Publishes the operation the plan chose as current, runs it to its end, and lets its module note the end. */
async function startOperation(s: ClusterRunState, target: ClusterChange, look: Look): Promise<void> {
  const { ref } = s;
  const { observation, observed, decision, step, defragDue } = look;
  const type = operationFor(step, target.spec.replicas);
  const module = operationModule(type);
  s.seq += 1;
  const workflowId = operationWorkflowId(ref.namespace, ref.name, s.seq, type);
  const summary = summarize(type, ref, currentSize(observed), target.spec.replicas, step);
  s.current = { type, workflowId, startedAt: new Date().toISOString(), step: describeStep(step) };
  // Status and the Started Event go out in the same workflow task as the child's start, not one after the other
  // before it: the operation's first step is not held up by two writes the user reads anyway.
  const together = patched(OPERATION_START_TOGETHER_PATCH);
  if (!together) {
    await publish(s, observed, decision, observation.versionKnown);
    if (s.deleted) return;
  }
  await runOperation(
    s,
    type,
    {
      ref,
      spec: target.spec,
      generation: target.generation,
      type,
      summary,
      versionKnown: observation.versionKnown,
      recorded: s.recorded,
      ...(patched(FIRST_LOOK_PATCH) ? { firstLook: observation } : {}),
      ...module.startInput?.({
        defragDue,
        step,
        ...(s.lastSeenRevision ? { lastSeenRevision: s.lastSeenRevision } : {}),
      }),
    },
    workflowId,
    together ? () => publish(s, observed, decision, observation.versionKnown) : undefined,
  );
  if (module.ended) s.maintenance = module.ended(s.maintenance, { defragDue, spec: target.spec });
  s.dirty = true;
}

/**
 * Waits until a signal says something changed or it is time to look again. A wait that stays the same is
 * looked at less and less often (a signal ends the pause at once); one only a spec change can end costs what
 * an idle cluster does.
 */
async function waitForNextLook(
  s: ClusterRunState,
  step: Step,
  tlsRecheckMs: number | undefined,
): Promise<void> {
  if (step.kind === 'Wait') {
    s.waitStreak = step.reason === s.lastWaitReason ? s.waitStreak + 1 : 0;
    s.lastWaitReason = step.reason;
  } else {
    s.waitStreak = 0;
    s.lastWaitReason = '';
  }
  const idle = s.maintenance.defragSchedule
    ? idleWaitMs(s.maintenance.defragSchedule, new Date().toISOString(), DRIFT_CHECK_MS)
    : DRIFT_CHECK_INTERVAL;
  const timeout =
    step.kind === 'Wait' && !SPEC_ONLY_WAITS.includes(step.reason)
      ? Math.min(waitBackoffMs(s.waitStreak, WAIT_RECHECK_MS), MAX_WAIT_MS)
      : idle;
  await condition(
    () => s.dirty || s.deleted,
    // A TLS stage due later (the old CA's grace) or an auto-TLS renewal wakes the cluster no later than then.
    tlsRecheckMs === undefined
      ? timeout
      : Math.min(tlsRecheckMs, typeof timeout === 'number' ? timeout : DRIFT_CHECK_MS),
  );
}

/** The new object's run: nothing carried but the operation counter, so its operation ids stay unique. */
async function handOverToSuccessor(s: ClusterRunState, next: ClusterChange): Promise<void> {
  const { ref } = s;
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
    carried: { recorded: { members: [], paused: false }, seq: s.seq },
  });
}
