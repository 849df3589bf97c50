// Checks a stored snapshot: runs the verification Job, waits for it (bounded), writes the Verified condition and the
// figures, tells an Event. The snapshot workflow runs it after upload; etcdSnapshotVerifyWorkflow runs it on request.
//
// Invariant: a check never changes phase, Ready or artifact, never deletes the snapshot or its object, and never
// fails its workflow: a failed check is Verified=False with the reason and a Warning Event.
import { condition, proxyActivities, setCurrentDetails } from '@temporalio/workflow';
import type { SnapshotActivities } from '../activities/snapshot-activities';
import { VerificationReasons } from '../crds/conditions';
import type { EtcdSnapshotSpec, EtcdSnapshotStatus, SnapshotArtifact } from '../crds/etcd-snapshot';
import type { ResourceRef } from '../contracts/messages';
import type { SnapshotJobObservation } from '../contracts/snapshot';
import { VERIFY_JOB_DEADLINE_SECONDS } from '../contracts/snapshot';
import { ActivityKinds } from './activity-kinds';
import type { SourceHash, VerificationVerdict } from './snapshot-verification';
import { verificationVerdict, withVerification } from './snapshot-verification';

/** The patch that added the check after upload to etcdSnapshotWorkflow. */
export const VERIFY_SNAPSHOT_PATCH = 'verify-snapshot';

const acts = proxyActivities<SnapshotActivities>(ActivityKinds.entityCall);

/** How often a running verification Job is looked at when no signal says it changed. */
const JOB_RECHECK_MS = 15_000;
/** The Job ends itself at its deadline; a little more for the Job controller to say so. */
const WAIT_LIMIT_MS = (VERIFY_JOB_DEADLINE_SECONDS + 120) * 1000;

/** What a check needs of the workflow that runs it; the snapshot workflow's run satisfies it. */
export interface VerifyRun {
  readonly snapshot: ResourceRef;
  readonly spec: EtcdSnapshotSpec;
  status: EtcdSnapshotStatus;
  jobChanged: boolean;
  /** The run under way, so a cancellation can delete its Job. */
  verifying?: number;
}

const now = () => new Date().toISOString();

async function write(r: VerifyRun, status: EtcdSnapshotStatus): Promise<void> {
  r.status = status;
  await acts.writeSnapshotStatus({ snapshot: r.snapshot, status });
}

/** Waits for the Job to finish, at most WAIT_LIMIT_MS; undefined when it did not. */
async function waitForVerifyJob(
  r: VerifyRun,
  jobName: string,
): Promise<Extract<SnapshotJobObservation, { state: 'finished' | 'absent' }> | undefined> {
  const looks = Math.ceil(WAIT_LIMIT_MS / JOB_RECHECK_MS);
  for (let look = 0; look <= looks; look++) {
    r.jobChanged = false;
    const seen = await acts.readSnapshotJob({ snapshot: r.snapshot, jobName });
    if (seen.state !== 'running') return seen;
    await condition(() => r.jobChanged, JOB_RECHECK_MS);
  }
  return undefined;
}

export async function verifyStoredSnapshot(
  r: VerifyRun,
  artifact: SnapshotArtifact,
  check: { run: number; request?: string; source: SourceHash | { why: string } },
): Promise<VerificationVerdict> {
  r.verifying = check.run;
  const { jobName } = await acts.createVerifyJob({
    snapshot: r.snapshot,
    spec: r.spec,
    artifact,
    run: check.run,
  });
  const run = {
    jobName,
    run: check.run,
    ...(check.request !== undefined ? { request: check.request } : {}),
    source: check.source,
  };
  const running = `Job ${jobName} restores ${artifact.uri} into a throwaway etcd and checks it`;
  setCurrentDetails(`**verifying ${r.snapshot.namespace}/${r.snapshot.name}**\n\n${running}`);
  await write(
    r,
    withVerification(
      r.status,
      { status: 'Unknown', reason: VerificationReasons.VerificationRunning, message: running },
      run,
      now(),
    ),
  );
  const seen = await waitForVerifyJob(r, jobName);
  let verdict: VerificationVerdict;
  if (seen) {
    verdict = verificationVerdict({ artifact, source: check.source, seen, jobName });
  } else {
    await acts.deleteVerifyJob({ snapshot: r.snapshot, run: check.run });
    verdict = {
      status: 'False',
      reason: VerificationReasons.VerificationJobFailed,
      message: `Job ${jobName} did not finish within ${WAIT_LIMIT_MS / 1000}s; it was deleted`,
    };
  }
  await write(r, withVerification(r.status, verdict, run, now()));
  await acts.recordSnapshotEvent({
    snapshot: r.snapshot,
    type: verdict.status === 'True' ? 'Normal' : 'Warning',
    reason: verdict.status === 'True' ? 'SnapshotVerified' : 'SnapshotVerificationFailed',
    message: `${verdict.reason}: ${verdict.message}`,
  });
  setCurrentDetails(
    `**verified ${r.snapshot.namespace}/${r.snapshot.name}**\n\n${verdict.reason}: ${verdict.message}`,
  );
  r.verifying = undefined;
  return verdict;
}

/** A check cancelled while its Job ran: the Job is deleted and Verified says so; nothing else changes. */
export async function cancelVerification(r: VerifyRun): Promise<void> {
  const run = r.verifying;
  if (run === undefined) return;
  await acts.deleteVerifyJob({ snapshot: r.snapshot, run });
  const jobName = r.status.verification?.jobName ?? '';
  await write(
    r,
    withVerification(
      r.status,
      {
        status: 'False',
        reason: VerificationReasons.VerificationCancelled,
        message: 'the verification was cancelled; its Job was deleted',
      },
      { jobName, run },
      now(),
    ),
  );
}
