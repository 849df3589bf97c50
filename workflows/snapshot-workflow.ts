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

export async function etcdSnapshotWorkflow(input: SnapshotWorkflowInput): Promise<SnapshotOutcome> {
  const { snapshot, spec } = input;
  const target = spec.destination.s3
    ? `s3://${spec.destination.s3.bucket}`
    : `pvc ${spec.destination.pvc?.claimName ?? ''}`;
  const summary = `snapshot ${snapshot.namespace}/${spec.clusterRef.name} -> ${target} as ${snapshot.name}`;
  let status: EtcdSnapshotStatus = {};
  let attempt = 0;
  let jobChanged = false;
  setHandler(snapshotJobChangedSignal, () => {
    jobChanged = true;
  });

  const details = (line: string) => setCurrentDetails(`**${summary}**\n\n${line}`);
  const now = () => new Date().toISOString();
  async function publish(
    phase: SnapshotPhase,
    reason: SnapshotReason,
    message: string,
    more: Partial<EtcdSnapshotStatus> = {},
  ) {
    status = snapshotStatus(status, phase, reason, message, now(), more);
    await acts.writeSnapshotStatus({ snapshot, status });
  }
  const event = (type: 'Normal' | 'Warning', reason: EventReason, message: string) =>
    acts.recordSnapshotEvent({ snapshot, type, reason, message });

  async function finish(outcome: SnapshotOutcome): Promise<SnapshotOutcome> {
    await publish(outcome.phase, outcome.reason, outcome.message, {
      finishedAt: now(),
      ...(outcome.artifact ? { artifact: outcome.artifact } : {}),
    });
    await event(
      outcome.phase === 'Succeeded' ? 'Normal' : 'Warning',
      outcome.phase === 'Succeeded' ? 'SnapshotSucceeded' : 'SnapshotFailed',
      `${outcome.reason}: ${outcome.message}`,
    );
    details(`${outcome.phase}: ${outcome.reason}: ${outcome.message}`);
    return outcome;
  }

  /** Waits for one attempt's Job to finish: on the watcher's signal, or a periodic look. */
  async function waitForJob(
    jobName: string,
  ): Promise<Extract<SnapshotJobObservation, { state: 'finished' | 'absent' }>> {
    for (;;) {
      jobChanged = false;
      const seen = await acts.readSnapshotJob({ snapshot, jobName });
      if (seen.state !== 'running') return seen;
      await condition(() => jobChanged, JOB_RECHECK);
    }
  }

  /** Picks a healthy voter, waiting a little while none answers (a leader election, a restarting member). */
  async function pickSource(): Promise<{ endpoint: string; member: string } | { why: string }> {
    for (let wait = 0; ; wait++) {
      const prep = await acts.prepareSnapshot({ snapshot, spec });
      if (attempt === 0 && prep.clusterUid) {
        upsertSearchAttributes([{ key: SearchAttributes.clusterUid, value: prep.clusterUid }]);
      }
      if (prep.endpoint && prep.member) return { endpoint: prep.endpoint, member: prep.member };
      if (wait >= SOURCE_WAITS) return { why: prep.why };
      details(`waiting for a voter to answer: ${prep.why}`);
      await sleep(SOURCE_WAIT);
    }
  }

  async function run(): Promise<SnapshotOutcome> {
    await publish('Running', SnapshotReasons.SnapshotRunning, 'checking the cluster and the destination', {
      workflowId: workflowInfo().workflowId,
      startedAt: now(),
    });
    await event('Normal', 'SnapshotStarted', summary);
    let last = { reason: SnapshotReasons.JobFailed as SnapshotReason, message: 'no attempt ran' };
    while (attempt < MAX_SNAPSHOT_ATTEMPTS) {
      let source: Awaited<ReturnType<typeof pickSource>>;
      try {
        source = await pickSource();
      } catch (err) {
        const refused = refusal(err);
        if (!refused) throw err;
        return finish({ phase: 'Failed', ...refused });
      }
      if (!('endpoint' in source)) {
        last = {
          reason: SnapshotReasons.EtcdUnavailable,
          message: `no member to stream from: ${source.why}`,
        };
        break;
      }
      attempt += 1;
      const { jobName } = await acts.createSnapshotJob({
        snapshot,
        spec,
        attempt,
        endpoint: source.endpoint,
      });
      details(`attempt ${attempt}/${MAX_SNAPSHOT_ATTEMPTS}: Job ${jobName} streams from ${source.member}`);
      await publish(
        'Running',
        SnapshotReasons.SnapshotRunning,
        `attempt ${attempt}: Job ${jobName} streams from ${source.member}`,
        { jobName, attempts: attempt },
      );
      const seen = await waitForJob(jobName);
      if (seen.state === 'finished' && seen.result?.ok && 'artifact' in seen.result) {
        return finish({
          phase: 'Succeeded',
          reason: SnapshotReasons.SnapshotSucceeded,
          message: `${seen.result.artifact.size} bytes at revision ${seen.result.artifact.revision} from ${source.member}`,
          artifact: seen.result.artifact,
        });
      }
      if (seen.state === 'finished' && seen.result && !seen.result.ok) {
        last = { reason: snapshotReasonOf(seen.result.reason), message: seen.result.message };
        if (!isTransientFailure(seen.result.reason)) return finish({ phase: 'Failed', ...last });
      } else {
        last = {
          reason: SnapshotReasons.JobFailed,
          message:
            seen.state === 'absent'
              ? `Job ${jobName} disappeared before it finished`
              : `Job ${jobName} ended without a result from the agent (${seen.jobMessage || 'no reason given'})`,
        };
      }
      if (attempt >= MAX_SNAPSHOT_ATTEMPTS) break;
      const pause = RETRY_PAUSE_MS * 2 ** (attempt - 1);
      await event(
        'Warning',
        'SnapshotRetrying',
        `attempt ${attempt} failed (${last.reason}: ${last.message}); next in ${pause / 1000}s`,
      );
      details(`attempt ${attempt} failed: ${last.reason}: ${last.message}; next attempt in ${pause / 1000}s`);
      await sleep(pause);
    }
    return finish({
      phase: 'Failed',
      reason: last.reason,
      message: `${last.message} (after ${attempt} attempt(s))`,
    });
  }

  try {
    return await run();
  } catch (err) {
    if (!isCancellation(err)) throw err;
    // Deleted EtcdSnapshot or `temporal workflow cancel`: take the running Job down, say so, end cancelled.
    await CancellationScope.nonCancellable(async () => {
      if (attempt > 0) await acts.deleteSnapshotJob({ snapshot, attempt });
      status = snapshotStatus(
        status,
        'Failed',
        SnapshotReasons.SnapshotCancelled,
        'the snapshot workflow was cancelled; its Job was deleted',
        now(),
        {
          finishedAt: now(),
        },
      );
      await acts.writeSnapshotStatus({ snapshot, status });
    });
    throw err;
  }
}
