// Pure parts of checking a stored snapshot: what the verification Job's end means (the Verified verdict), and the
// EtcdSnapshot status that shows it (the Verified condition and status.verification).
//
// Invariant: a verdict never touches phase, Ready or artifact: a failed check says so beside a snapshot that succeeded.
import type { SnapshotJobObservation } from '../contracts/snapshot';
import { AgentFailureReasons } from '../contracts/agent-result';
import type { VerificationReason } from '../crds/conditions';
import { VerificationReasons } from '../crds/conditions';
import type { Condition, ConditionStatus } from '../crds/etcd-cluster';
import type { EtcdSnapshotStatus, SnapshotArtifact, SnapshotVerificationStatus } from '../crds/etcd-snapshot';
import { SnapshotConditionTypes } from '../crds/etcd-snapshot';

/** What the member the snapshot came from answered to hashkv at the artifact's revision, right after the upload. */
export interface SourceHash {
  hash: number;
  compactRevision: number;
}

export interface VerificationVerdict {
  status: ConditionStatus;
  reason: VerificationReason;
  message: string;
  /** The figures the Job measured, when it measured any. */
  figures?: Pick<
    SnapshotVerificationStatus,
    'revision' | 'keys' | 'hashRevision' | 'hash' | 'compactRevision'
  >;
}

/** The agent's failure reasons as Verified reasons: what is wrong with the object, or what kept the check from it. */
const FAILURE_REASONS: Record<string, VerificationReason> = {
  [AgentFailureReasons.SourceNotFound]: VerificationReasons.ObjectMissing,
  [AgentFailureReasons.ChecksumMismatch]: VerificationReasons.ObjectAltered,
  [AgentFailureReasons.SnapshotCorrupt]: VerificationReasons.SnapshotCorrupt,
  [AgentFailureReasons.InvalidCredentials]: VerificationReasons.DestinationUnreadable,
  [AgentFailureReasons.BucketNotFound]: VerificationReasons.DestinationUnreadable,
  [AgentFailureReasons.DestinationUnavailable]: VerificationReasons.DestinationUnreadable,
};

/** Why the two hashes cannot be compared, or undefined when they can. */
function notComparable(
  source: SourceHash | { why: string },
  artifactRevision: number,
  hashRevision: number,
  compactRevision: number,
): string | undefined {
  if ('why' in source) return `the source's hashkv is unknown (${source.why})`;
  if (hashRevision !== artifactRevision)
    return `the snapshot had compacted revision ${artifactRevision} away, so revision ${hashRevision} was hashed`;
  if (compactRevision !== source.compactRevision)
    return `the source was compacted at ${source.compactRevision} when it hashed, the snapshot at ${compactRevision}`;
  return undefined;
}

/**
 * How a finished (or vanished) verification Job ends the check. The restored member must serve at least the
 * artifact's revision (the artifact's revision is a lower bound: the member's revision just before the stream); its
 * hashkv at that revision must equal the source's when the two hashed the same history.
 */
export function verificationVerdict(input: {
  artifact: Pick<SnapshotArtifact, 'sha256' | 'revision'>;
  source: SourceHash | { why: string };
  seen: Extract<SnapshotJobObservation, { state: 'finished' | 'absent' }>;
  jobName: string;
}): VerificationVerdict {
  const { artifact, seen, jobName } = input;
  if (seen.state === 'absent')
    return {
      status: 'False',
      reason: VerificationReasons.VerificationJobFailed,
      message: `Job ${jobName} disappeared before it finished`,
    };
  const result = seen.result;
  if (result && !result.ok) {
    const reason = FAILURE_REASONS[result.reason] ?? VerificationReasons.VerificationJobFailed;
    return { status: 'False', reason, message: `${result.reason}: ${result.message}` };
  }
  if (!result || !('verification' in result))
    return {
      status: 'False',
      reason: VerificationReasons.VerificationJobFailed,
      message: `Job ${jobName} ended without a verification result (${seen.jobMessage || 'no reason given'})`,
    };
  const v = result.verification;
  const figures = {
    revision: v.revision,
    keys: v.keys,
    hashRevision: v.hashRevision,
    hash: v.hash,
    compactRevision: v.compactRevision,
  };
  if (v.sha256 !== artifact.sha256)
    return {
      status: 'False',
      reason: VerificationReasons.ObjectAltered,
      message: `the object read back has sha256 ${v.sha256}, the upload measured ${artifact.sha256}`,
      figures,
    };
  if (v.revision < artifact.revision)
    return {
      status: 'False',
      reason: VerificationReasons.RevisionMismatch,
      message: `the restored etcd serves revision ${v.revision}, older than the snapshot's revision ${artifact.revision}`,
      figures,
    };
  const why = notComparable(input.source, artifact.revision, v.hashRevision, v.compactRevision);
  if (!why && 'hash' in input.source && input.source.hash !== v.hash)
    return {
      status: 'False',
      reason: VerificationReasons.HashMismatch,
      message: `hashkv at revision ${v.hashRevision} is ${v.hash} in the restored etcd but was ${input.source.hash} on the source`,
      figures,
    };
  const restored = `restored at revision ${v.revision} with ${v.keys} keys`;
  return {
    status: 'True',
    reason: VerificationReasons.SnapshotVerified,
    message: why
      ? `${restored}; hashkv ${v.hash} at revision ${v.hashRevision}, not compared: ${why}`
      : `${restored}; hashkv ${v.hash} at revision ${v.hashRevision} equals the source's`,
    figures,
  };
}

/** The Verified condition; lastTransitionTime moves only when its status flips. */
export function verifiedCondition(
  previous: readonly Condition[] | undefined,
  verdict: Pick<VerificationVerdict, 'status' | 'reason' | 'message'>,
  now: string,
): Condition {
  const before = previous?.find((c) => c.type === SnapshotConditionTypes.Verified);
  return {
    type: SnapshotConditionTypes.Verified,
    status: verdict.status,
    reason: verdict.reason,
    message: verdict.message,
    lastTransitionTime: before && before.status === verdict.status ? before.lastTransitionTime : now,
  };
}

/**
 * The status with a verification's state: the Verified condition and status.verification. A new run (another Job)
 * replaces the figures of the last; the same run keeps what it recorded (source hash, job) and adds the result.
 */
export function withVerification(
  previous: EtcdSnapshotStatus,
  verdict: Pick<VerificationVerdict, 'status' | 'reason' | 'message' | 'figures'>,
  run: Pick<SnapshotVerificationStatus, 'jobName' | 'run' | 'request'> & {
    source?: SourceHash | { why: string };
  },
  now: string,
): EtcdSnapshotStatus {
  const condition = verifiedCondition(previous.conditions, verdict, now);
  const sameRun = previous.verification?.run === run.run && previous.verification.jobName === run.jobName;
  const source = run.source && 'hash' in run.source ? run.source : undefined;
  const verification: SnapshotVerificationStatus = {
    ...(sameRun ? previous.verification : {}),
    jobName: run.jobName,
    run: run.run,
    ...(run.request !== undefined ? { request: run.request } : {}),
    ...(source ? { sourceHash: source.hash, sourceCompactRevision: source.compactRevision } : {}),
    ...(verdict.status !== 'Unknown' ? { verifiedAt: now } : {}),
    ...(verdict.figures ?? {}),
  };
  return {
    ...previous,
    verification,
    conditions: [...(previous.conditions ?? []).filter((c) => c.type !== condition.type), condition],
  };
}
