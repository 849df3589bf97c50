// A re-check of a stored snapshot, asked for with the verify-request annotation: the same check the snapshot workflow
// runs after upload, compared with the source hash that check recorded.
//
// Invariant: as the check after upload, it never changes phase, Ready or artifact and never deletes anything but
// its own Job; a cancelled re-check deletes its Job and says so.
import { CancellationScope, isCancellation, setHandler } from '@temporalio/workflow';
import type { SnapshotVerifyWorkflowInput } from '../contracts/messages';
import { snapshotJobChangedSignal } from '../contracts/messages';
import type { SnapshotVerificationStatus } from '../crds/etcd-snapshot';
import type { SourceHash, VerificationVerdict } from './snapshot-verification';
import type { VerifyRun } from './snapshot-verify-step';
import { cancelVerification, verifyStoredSnapshot } from './snapshot-verify-step';

/** The source hash the first check recorded, or why there is none to compare with. */
export function recordedSourceHash(v: SnapshotVerificationStatus | undefined): SourceHash | { why: string } {
  return v?.sourceHash !== undefined
    ? { hash: v.sourceHash, compactRevision: v.sourceCompactRevision ?? 0 }
    : { why: 'none was recorded when the snapshot was taken' };
}

export async function etcdSnapshotVerifyWorkflow(
  input: SnapshotVerifyWorkflowInput,
): Promise<VerificationVerdict | { skipped: string }> {
  const { artifact } = input.status;
  if (input.status.phase !== 'Succeeded' || !artifact)
    return { skipped: 'the snapshot has not succeeded: there is nothing stored to check' };
  const r: VerifyRun = {
    snapshot: input.snapshot,
    spec: input.spec,
    status: input.status,
    jobChanged: false,
  };
  setHandler(snapshotJobChangedSignal, () => {
    r.jobChanged = true;
  });
  const previous = input.status.verification;
  try {
    return await verifyStoredSnapshot(r, artifact, {
      run: (previous?.run ?? 0) + 1,
      request: input.request,
      source: recordedSourceHash(previous),
    });
  } catch (err) {
    if (!isCancellation(err)) throw err;
    await CancellationScope.nonCancellable(() => cancelVerification(r));
    throw err;
  }
}
