// One EtcdSnapshot as a workflow: check the cluster and destination, run the agent's Job from a healthy voter, record the artifact or the reason it failed.
//
// Invariants: a reported permanent failure (bad credentials, missing bucket) ends the snapshot at once;
// a crash or a transient failure gets a new Job after a growing pause, a bounded number of times; a
// cancelled workflow (the EtcdSnapshot was deleted, or `temporal workflow cancel`) deletes its Job.
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { SnapshotActivities } from '../activities/snapshot-activities';
import type { SnapshotReason } from '../crds/conditions';
import { SnapshotReasons } from '../crds/conditions';
import type { EtcdSnapshotStatus, SnapshotArtifact, SnapshotPhase } from '../crds/etcd-snapshot';
import type { SnapshotWorkflowInput } from '../contracts/messages';
import { SearchAttributes, snapshotJobChangedSignal } from '../contracts/messages';
import { isTransientFailure, snapshotReasonOf, snapshotStatus } from './snapshot-status';
import type { SnapshotJobObservation } from '../contracts/snapshot';
import { ActivityKinds } from './activity-kinds';
import type { EventReason } from '../contracts/event-reasons';
import { cancelVerification, verifyStoredSnapshot, VERIFY_SNAPSHOT_PATCH } from './snapshot-verify-step';

/** Jobs per snapshot at most; each Job itself retries a crashed Pod a couple of times. */
export const MAX_SNAPSHOT_ATTEMPTS = 3;
/** Pause before attempt n+1: 10 s, 20 s, … */
const RETRY_PAUSE_MS = 10_000;
/** How often a running Job is looked at when no signal says it changed. */
const JOB_RECHECK = '15s';
/** How long to wait for a voter to answer before giving up with EtcdUnavailable. */
const SOURCE_WAITS = 6;
const SOURCE_WAIT = '5s';

export interface SnapshotOutcome {
  phase: Extract<SnapshotPhase, 'Succeeded' | 'Failed'>;
  reason: SnapshotReason;
  message: string;
  artifact?: SnapshotArtifact;
}

const acts = proxyActivities<SnapshotActivities>(ActivityKinds.entityCall);

/** A refusal an activity reported as nonRetryable, with its type as the status reason. */
function refusal(err: unknown): { reason: SnapshotReason; message: string } | undefined {
  if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.nonRetryable) {
    return { reason: snapshotReasonOf(err.cause.type ?? ''), message: err.cause.message };
  }
  return undefined;
}

/** What one snapshot's run keeps: the status last written, the attempt under way, whether its Job changed. */
interface SnapshotRun {
  readonly snapshot: SnapshotWorkflowInput['snapshot'];
  readonly spec: SnapshotWorkflowInput['spec'];
  readonly summary: string;
  status: EtcdSnapshotStatus;
  attempt: number;
  jobChanged: boolean;
  /** The verification run under way after upload (snapshot-verify-step). */
  verifying?: number;
}

/** Why the last attempt failed, and whether another Job may fix it. */
type AttemptEnd =
  | { outcome: SnapshotOutcome; source?: { endpoint: string; member: string } }
  | { failed: { reason: SnapshotReason; message: string }; again: boolean };

export async function etcdSnapshotWorkflow(input: SnapshotWorkflowInput): Promise<SnapshotOutcome> {
  const { snapshot, spec } = input;
  const target = spec.destination.s3
    ? `s3://${spec.destination.s3.bucket}`
    : `pvc ${spec.destination.pvc?.claimName ?? ''}`;
  const r: SnapshotRun = {
    snapshot,
    spec,
    summary: `snapshot ${snapshot.namespace}/${spec.clusterRef.name} -> ${target} as ${snapshot.name}`,
    status: {},
    attempt: 0,
    jobChanged: false,
  };
  setHandler(snapshotJobChangedSignal, () => {
    r.jobChanged = true;
  });
  try {
    return await run(r);
  } catch (err) {
    if (!isCancellation(err)) throw err;
    // Deleted EtcdSnapshot or `temporal workflow cancel`: take the running Job down, say so, end cancelled.
    await CancellationScope.nonCancellable(() => cleanUpCancelled(r));
    throw err;
  }
}

const details = (r: SnapshotRun, line: string) => setCurrentDetails(`**${r.summary}**\n\n${line}`);
const now = () => new Date().toISOString();

async function publish(
  r: SnapshotRun,
  phase: SnapshotPhase,
  reason: SnapshotReason,
  message: string,
  more: Partial<EtcdSnapshotStatus> = {},
) {
  r.status = snapshotStatus(r.status, phase, reason, message, now(), more);
  await acts.writeSnapshotStatus({ snapshot: r.snapshot, status: r.status });
}

const event = (r: SnapshotRun, type: 'Normal' | 'Warning', reason: EventReason, message: string) =>
  acts.recordSnapshotEvent({ snapshot: r.snapshot, type, reason, message });

/** Attempts until one succeeds, one fails for good, no voter answers, or the attempts run out. */
async function run(r: SnapshotRun): Promise<SnapshotOutcome> {
  await publish(r, 'Running', SnapshotReasons.SnapshotRunning, 'checking the cluster and the destination', {
    workflowId: workflowInfo().workflowId,
    startedAt: now(),
  });
  await event(r, 'Normal', 'SnapshotStarted', r.summary);
  let last = { reason: SnapshotReasons.JobFailed as SnapshotReason, message: 'no attempt ran' };
  while (r.attempt < MAX_SNAPSHOT_ATTEMPTS) {
    const end = await runAttempt(r);
    if ('outcome' in end) return finishAndVerify(r, end);
    last = end.failed;
    if (!end.again || r.attempt >= MAX_SNAPSHOT_ATTEMPTS) break;
    const pause = RETRY_PAUSE_MS * 2 ** (r.attempt - 1);
    await event(
      r,
      'Warning',
      'SnapshotRetrying',
      `attempt ${r.attempt} failed (${last.reason}: ${last.message}); next in ${pause / 1000}s`,
    );
    details(
      r,
      `attempt ${r.attempt} failed: ${last.reason}: ${last.message}; next attempt in ${pause / 1000}s`,
    );
    await sleep(pause);
  }
  return finish(r, {
    phase: 'Failed',
    reason: last.reason,
    message: `${last.message} (after ${r.attempt} attempt(s))`,
  });
}

/** One attempt: pick a voter, run a Job streaming from it, read how it ended. */
async function runAttempt(r: SnapshotRun): Promise<AttemptEnd> {
  let source: Awaited<ReturnType<typeof pickSource>>;
  try {
    source = await pickSource(r);
  } catch (err) {
    const refused = refusal(err);
    if (!refused) throw err;
    return { outcome: { phase: 'Failed', ...refused } };
  }
  if (!('endpoint' in source)) {
    const message = `no member to stream from: ${source.why}`;
    return { failed: { reason: SnapshotReasons.EtcdUnavailable, message }, again: false };
  }
  r.attempt += 1;
  const { snapshot, spec, attempt } = r;
  const { jobName } = await acts.createSnapshotJob({ snapshot, spec, attempt, endpoint: source.endpoint });
  details(r, `attempt ${attempt}/${MAX_SNAPSHOT_ATTEMPTS}: Job ${jobName} streams from ${source.member}`);
  await publish(
    r,
    'Running',
    SnapshotReasons.SnapshotRunning,
    `attempt ${attempt}: Job ${jobName} streams from ${source.member}`,
    { jobName, attempts: attempt },
  );
  const end = attemptEnd(await waitForJob(r, jobName), jobName, source.member);
  return 'outcome' in end ? { ...end, source } : end;
}

/**
 * Publishes the outcome; a stored snapshot is then checked (behind VERIFY_SNAPSHOT_PATCH). The source member's hashkv
 * at the artifact's revision is asked first, right after the upload, so the check can compare with it. A failed
 * check leaves the outcome as it is.
 */
async function finishAndVerify(
  r: SnapshotRun,
  end: Extract<AttemptEnd, { outcome: SnapshotOutcome }>,
): Promise<SnapshotOutcome> {
  const { artifact } = end.outcome;
  const verify = artifact !== undefined && end.source !== undefined && patched(VERIFY_SNAPSHOT_PATCH);
  const sourceHash =
    verify && end.source
      ? await acts.readSourceHash({ ...end.source, revision: artifact.revision })
      : undefined;
  const outcome = await finish(r, end.outcome);
  if (artifact && sourceHash) await verifyStoredSnapshot(r, artifact, { run: 1, source: sourceHash });
  return outcome;
}

/** How a finished (or vanished) Job ended the attempt. */
function attemptEnd(
  seen: Extract<SnapshotJobObservation, { state: 'finished' | 'absent' }>,
  jobName: string,
  member: string,
): AttemptEnd {
  if (seen.state === 'finished' && seen.result?.ok && 'artifact' in seen.result) {
    const { artifact } = seen.result;
    return {
      outcome: {
        phase: 'Succeeded',
        reason: SnapshotReasons.SnapshotSucceeded,
        message: `${artifact.size} bytes at revision ${artifact.revision} from ${member}`,
        artifact,
      },
    };
  }
  if (seen.state === 'finished' && seen.result && !seen.result.ok) {
    const failed = { reason: snapshotReasonOf(seen.result.reason), message: seen.result.message };
    if (!isTransientFailure(seen.result.reason)) return { outcome: { phase: 'Failed', ...failed } };
    return { failed, again: true };
  }
  const message =
    seen.state === 'absent'
      ? `Job ${jobName} disappeared before it finished`
      : `Job ${jobName} ended without a result from the agent (${seen.jobMessage || 'no reason given'})`;
  return { failed: { reason: SnapshotReasons.JobFailed, message }, again: true };
}

async function finish(r: SnapshotRun, outcome: SnapshotOutcome): Promise<SnapshotOutcome> {
  await publish(r, outcome.phase, outcome.reason, outcome.message, {
    finishedAt: now(),
    ...(outcome.artifact ? { artifact: outcome.artifact } : {}),
  });
  await event(
    r,
    outcome.phase === 'Succeeded' ? 'Normal' : 'Warning',
    outcome.phase === 'Succeeded' ? 'SnapshotSucceeded' : 'SnapshotFailed',
    `${outcome.reason}: ${outcome.message}`,
  );
  details(r, `${outcome.phase}: ${outcome.reason}: ${outcome.message}`);
  return outcome;
}

/** Waits for one attempt's Job to finish: on the watcher's signal, or a periodic look. */
async function waitForJob(
  r: SnapshotRun,
  jobName: string,
): Promise<Extract<SnapshotJobObservation, { state: 'finished' | 'absent' }>> {
  for (;;) {
    r.jobChanged = false;
    const seen = await acts.readSnapshotJob({ snapshot: r.snapshot, jobName });
    if (seen.state !== 'running') return seen;
    await condition(() => r.jobChanged, JOB_RECHECK);
  }
}

/** Picks a healthy voter, waiting a little while none answers (a leader election, a restarting member). */
async function pickSource(r: SnapshotRun): Promise<{ endpoint: string; member: string } | { why: string }> {
  for (let wait = 0; ; wait++) {
    const prep = await acts.prepareSnapshot({ snapshot: r.snapshot, spec: r.spec });
    if (r.attempt === 0 && prep.clusterUid) {
      upsertSearchAttributes([{ key: SearchAttributes.clusterUid, value: prep.clusterUid }]);
    }
    if (prep.endpoint && prep.member) return { endpoint: prep.endpoint, member: prep.member };
    if (wait >= SOURCE_WAITS) return { why: prep.why };
    details(r, `waiting for a voter to answer: ${prep.why}`);
    await sleep(SOURCE_WAIT);
  }
}

/** A cancelled snapshot deletes the Job it started and says so in status. */
async function cleanUpCancelled(r: SnapshotRun): Promise<void> {
  // Cancelled while checking a snapshot that succeeded: only the check ends.
  if (r.verifying !== undefined) return cancelVerification(r);
  if (r.attempt > 0) await acts.deleteSnapshotJob({ snapshot: r.snapshot, attempt: r.attempt });
  r.status = snapshotStatus(
    r.status,
    'Failed',
    SnapshotReasons.SnapshotCancelled,
    'the snapshot workflow was cancelled; its Job was deleted',
    now(),
    { finishedAt: now() },
  );
  await acts.writeSnapshotStatus({ snapshot: r.snapshot, status: r.status });
}
