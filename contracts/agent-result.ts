// The agent's result line (written to the termination log) as types, reason constants, an encoder that keeps it under Kubernetes' 4096-byte limit, and a strict parser for the control side; imports nothing so workflow code may use it.

/** Why the agent failed; the control side maps each to a condition reason. Spelled once, here. */
export const AgentFailureReasons = {
  /** S3 refused the credentials: InvalidAccessKeyId, SignatureDoesNotMatch, AccessDenied or any 403. */
  InvalidCredentials: 'InvalidCredentials',
  /** The S3 bucket does not exist. */
  BucketNotFound: 'BucketNotFound',
  /** Any other S3, network or file-system failure at the destination (or, for restore, the data dir). */
  DestinationUnavailable: 'DestinationUnavailable',
  /** The etcd endpoint could not be reached or broke off the snapshot stream. */
  EtcdUnavailable: 'EtcdUnavailable',
  /** The command line was wrong; retrying the same Job cannot help. */
  InvalidArguments: 'InvalidArguments',
  /** restore: the downloaded snapshot's sha256 differs from --sha256. */
  ChecksumMismatch: 'ChecksumMismatch',
  /** restore, verify: the object or file to restore from does not exist. */
  SourceNotFound: 'SourceNotFound',
  /** verify: etcdutl refused the snapshot, or the etcd restored from it did not start or answer. */
  SnapshotCorrupt: 'SnapshotCorrupt',
} as const;
export type AgentFailureReason = (typeof AgentFailureReasons)[keyof typeof AgentFailureReasons];

/** What a finished snapshot is: enough to restore it and to tell the user what it holds. */
export interface SnapshotArtifact {
  uri: string;
  size: number;
  /** Lowercase hex sha256 of the stored bytes (what restore's --sha256 checks). */
  sha256: string;
  /** etcd revision the snapshot holds at least (see docs/agent.md for why it is a lower bound). */
  revision: number;
  etcdVersion: string;
  /** RFC 3339, when the snapshot stream was opened. */
  takenAt: string;
}

export interface SnapshotSuccess {
  ok: true;
  artifact: SnapshotArtifact;
}

/**
 * What `etcd-conductor verify` found in a throwaway etcd restored from the stored snapshot: the bytes it read, the
 * revision and live key count the restored member serves, and `hashkv` at `hashRevision` (the revision the source's
 * hash was asked for, so the two can be compared).
 */
export interface SnapshotVerification {
  sha256: string;
  size: number;
  revision: number;
  keys: number;
  hashRevision: number;
  /** etcd's HashKV, a uint32. */
  hash: number;
  /** -1 when the store was never compacted (etcd's own answer). */
  compactRevision: number;
}

export interface VerifySuccess {
  ok: true;
  verification: SnapshotVerification;
}

/**
 * restored:false means the data dir already held a member (idempotent re-run): nothing was downloaded. `revision`:
 * the revision the restored store holds, before revisions are bumped (a snapshot's, from `etcdutl snapshot status`;
 * the point a `restore-point` reached); `time` (RFC 3339): with `restore-point`, when the source applied that
 * revision as the archiver received it. Also with `restore-point`: `leasesGranted`, the leases the replay granted with
 * their source ids and granted TTLs (besides those in the full snapshot); `keysWithoutLease`, the keys restored without
 * the lease the source had attached them to (the lease was gone when the archiver first saw it, or the chunk that
 * named it predates chunk format 2).
 */
export type RestoreSuccess =
  | {
      ok: true;
      restored: true;
      sha256: string;
      size: number;
      revision?: number;
      time?: string;
      leasesGranted?: number;
      keysWithoutLease?: number;
    }
  | { ok: true; restored: false };

export interface AgentFailure {
  ok: false;
  reason: AgentFailureReason;
  message: string;
}

export type AgentResult = SnapshotSuccess | RestoreSuccess | VerifySuccess | AgentFailure;

/** The kubelet keeps at most 4096 bytes of /dev/termination-log. */
export const MAX_RESULT_BYTES = 4096;
/** Room a failure leaves for its message; the rest of the line is at most ~80 bytes. */
export const MAX_MESSAGE_BYTES = 1024;

const REASONS = new Set<string>(Object.values(AgentFailureReasons));
const SHA256_HEX = /^[0-9a-f]{64}$/;

/** UTF-8 length without TextEncoder or Buffer, so this file runs in any sandbox. */
function utf8Length(s: string): number {
  let n = 0;
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    n += cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  }
  return n;
}

/** Cuts `s` to at most `max` UTF-8 bytes (JSON escaping included) on a character boundary, marking the cut. */
export function truncateMessage(s: string, max = MAX_MESSAGE_BYTES): string {
  const size = (t: string) => utf8Length(JSON.stringify(t)) - 2;
  if (size(s) <= max) return s;
  const marker = '…';
  let out = '';
  for (const ch of s) {
    if (size(out + ch + marker) > max) break;
    out += ch;
  }
  return out + marker;
}

/** One JSON line, always under MAX_RESULT_BYTES: failure messages are truncated; success fields are bounded by argument checks. */
export function encodeAgentResult(result: AgentResult): string {
  const bounded = result.ok ? result : { ...result, message: truncateMessage(result.message) };
  const line = JSON.stringify(bounded);
  if (utf8Length(line) >= MAX_RESULT_BYTES) {
    // Only a success can get here (its URI is bounded by argument checks); never write a line the kubelet would cut.
    throw new Error(`agent result is ${utf8Length(line)} bytes, over the ${MAX_RESULT_BYTES}-byte limit`);
  }
  return line;
}

function fail(text: string, why: string): never {
  throw new Error(`not an agent result (${why}): ${truncateMessage(text, 200)}`);
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/**
 * Reads what the agent wrote (the container's termination message). Strict: anything that is not exactly
 * one of the result shapes throws, so a crash message or a truncated line is never taken for a result.
 */
export function parseAgentResult(text: string): AgentResult {
  const line = text.trim();
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    fail(text, 'not JSON');
  }
  if (!isObject(value)) fail(text, 'not a JSON object');
  if (value.ok === false) {
    if (typeof value.reason !== 'string' || !REASONS.has(value.reason)) fail(text, 'unknown reason');
    if (typeof value.message !== 'string') fail(text, 'message is not a string');
    return { ok: false, reason: value.reason as AgentFailureReason, message: value.message };
  }
  if (value.ok !== true) fail(text, '"ok" is neither true nor false');
  if ('artifact' in value) {
    const a = value.artifact;
    if (!isObject(a)) fail(text, 'artifact is not an object');
    if (typeof a.uri !== 'string' || a.uri === '') fail(text, 'artifact.uri');
    if (!isCount(a.size)) fail(text, 'artifact.size');
    if (typeof a.sha256 !== 'string' || !SHA256_HEX.test(a.sha256)) fail(text, 'artifact.sha256');
    if (!isCount(a.revision)) fail(text, 'artifact.revision');
    if (typeof a.etcdVersion !== 'string') fail(text, 'artifact.etcdVersion');
    if (typeof a.takenAt !== 'string' || Number.isNaN(Date.parse(a.takenAt))) fail(text, 'artifact.takenAt');
    return {
      ok: true,
      artifact: {
        uri: a.uri,
        size: a.size,
        sha256: a.sha256,
        revision: a.revision,
        etcdVersion: a.etcdVersion,
        takenAt: a.takenAt,
      },
    };
  }
  if ('verification' in value) {
    const v = value.verification;
    if (!isObject(v)) fail(text, 'verification is not an object');
    if (typeof v.sha256 !== 'string' || !SHA256_HEX.test(v.sha256)) fail(text, 'verification.sha256');
    const counts = ['size', 'revision', 'keys', 'hashRevision', 'hash'] as const;
    for (const k of counts) if (!isCount(v[k])) fail(text, `verification.${k}`);
    // etcd answers -1 for a store that was never compacted.
    const compacted = v.compactRevision;
    if (!(typeof compacted === 'number' && Number.isSafeInteger(compacted) && compacted >= -1))
      fail(text, 'verification.compactRevision');
    return {
      ok: true,
      verification: {
        sha256: v.sha256,
        size: v.size as number,
        revision: v.revision as number,
        keys: v.keys as number,
        hashRevision: v.hashRevision as number,
        hash: v.hash as number,
        compactRevision: v.compactRevision as number,
      },
    };
  }
  if (value.restored === false) return { ok: true, restored: false };
  if (value.restored === true) {
    if (typeof value.sha256 !== 'string' || !SHA256_HEX.test(value.sha256)) fail(text, 'sha256');
    if (!isCount(value.size)) fail(text, 'size');
    if (value.revision !== undefined && !isCount(value.revision)) fail(text, 'revision');
    if (value.time !== undefined && (typeof value.time !== 'string' || Number.isNaN(Date.parse(value.time))))
      fail(text, 'time');
    for (const k of ['leasesGranted', 'keysWithoutLease'] as const)
      if (value[k] !== undefined && !isCount(value[k])) fail(text, k);
    return {
      ok: true,
      restored: true,
      sha256: value.sha256,
      size: value.size,
      ...(value.revision !== undefined ? { revision: value.revision as number } : {}),
      ...(value.time !== undefined ? { time: value.time as string } : {}),
      ...(value.leasesGranted !== undefined ? { leasesGranted: value.leasesGranted as number } : {}),
      ...(value.keysWithoutLease !== undefined ? { keysWithoutLease: value.keysWithoutLease as number } : {}),
    };
  }
  return fail(text, 'neither a snapshot artifact, a restore outcome nor a verification');
}

/**
 * How far a restore raises the revision (etcdutl snapshot restore --bump-revision, with --mark-compacted), so that
 * revisions only go up for clients of a restored cluster; a restored member serves the point's revision plus this.
 */
export const RESTORE_BUMP_REVISION = 1_000_000_000;
