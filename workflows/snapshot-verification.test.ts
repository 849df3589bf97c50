// The Verified verdict as a table (every way a verification Job ends), and the status that shows it.
import type { SnapshotJobObservation } from '../contracts/snapshot';
import type { SnapshotVerification } from '../contracts/agent-result';
import type { EtcdSnapshotStatus } from '../crds/etcd-snapshot';
import type { SourceHash } from './snapshot-verification';
import { verificationVerdict, withVerification } from './snapshot-verification';

const SHA = 'ab'.repeat(32);
const OTHER = 'cd'.repeat(32);
const artifact = { sha256: SHA, revision: 100 };
const good: SnapshotVerification = {
  sha256: SHA,
  size: 4096,
  revision: 103,
  keys: 42,
  hashRevision: 100,
  hash: 777,
  compactRevision: 20,
};
const source: SourceHash = { hash: 777, compactRevision: 20 };
type Ended = Extract<SnapshotJobObservation, { state: 'finished' | 'absent' }>;
const finished = (result?: unknown, jobMessage = ''): Ended =>
  ({
    state: 'finished',
    succeeded: true,
    jobMessage,
    ...(result ? { result } : {}),
  }) as Ended;
const verified = (v: Partial<SnapshotVerification>) =>
  finished({ ok: true, verification: { ...good, ...v } });
const failed = (reason: string, message = 'm') => finished({ ok: false, reason, message });

type Row = [string, Ended, SourceHash | { why: string }, string, string, RegExp];
const rows: Row[] = [
  [
    'the same hash at the same history',
    verified({}),
    source,
    'True',
    'SnapshotVerified',
    /equals the source's/,
  ],
  [
    'a restored revision above the artifact (a lower bound) is fine',
    verified({ revision: 250 }),
    source,
    'True',
    'SnapshotVerified',
    /restored at revision 250 with 42 keys/,
  ],
  [
    'a source that could not hash: verified, and says the hash was not compared',
    verified({}),
    { why: 'member main-1 did not answer' },
    'True',
    'SnapshotVerified',
    /not compared: the source's hashkv is unknown \(member main-1 did not answer\)/,
  ],
  [
    'the source compacted before it hashed: not compared',
    verified({ hash: 1 }),
    { hash: 777, compactRevision: 60 },
    'True',
    'SnapshotVerified',
    /not compared: the source was compacted at 60 when it hashed, the snapshot at 20/,
  ],
  [
    'the snapshot had the artifact revision compacted away: not compared',
    verified({ hashRevision: 103, hash: 5 }),
    source,
    'True',
    'SnapshotVerified',
    /not compared: the snapshot had compacted revision 100 away/,
  ],
  [
    'a different hash of the same history',
    verified({ hash: 778 }),
    source,
    'False',
    'HashMismatch',
    /hashkv at revision 100 is 778 in the restored etcd but was 777 on the source/,
  ],
  [
    'an older revision than the snapshot reported',
    verified({ revision: 99 }),
    source,
    'False',
    'RevisionMismatch',
    /serves revision 99, older than the snapshot's revision 100/,
  ],
  [
    'bytes that are not the upload (a result of another object)',
    verified({ sha256: OTHER }),
    source,
    'False',
    'ObjectAltered',
    /has sha256 cdcd.*the upload measured abab/,
  ],
  [
    'the agent saw altered bytes',
    failed('ChecksumMismatch', 'x has sha256 y'),
    source,
    'False',
    'ObjectAltered',
    /^ChecksumMismatch: x has sha256 y$/,
  ],
  ['the object is gone', failed('SourceNotFound'), source, 'False', 'ObjectMissing', /^SourceNotFound/],
  ['etcdutl refused it', failed('SnapshotCorrupt'), source, 'False', 'SnapshotCorrupt', /^SnapshotCorrupt/],
  [
    'S3 refused the keys',
    failed('InvalidCredentials'),
    source,
    'False',
    'DestinationUnreadable',
    /^InvalidCredentials/,
  ],
  [
    'the bucket is gone',
    failed('BucketNotFound'),
    source,
    'False',
    'DestinationUnreadable',
    /^BucketNotFound/,
  ],
  [
    'the store failed',
    failed('DestinationUnavailable'),
    source,
    'False',
    'DestinationUnreadable',
    /^DestinationUnavailable/,
  ],
  [
    'the agent refused its flags',
    failed('InvalidArguments'),
    source,
    'False',
    'VerificationJobFailed',
    /^InvalidArguments/,
  ],
  [
    'the Job ended with no result (deadline)',
    finished(undefined, 'DeadlineExceeded: Job was active longer than specified deadline'),
    source,
    'False',
    'VerificationJobFailed',
    /without a verification result \(DeadlineExceeded/,
  ],
  [
    'the Job left a result of another command',
    finished({ ok: true, restored: false }),
    source,
    'False',
    'VerificationJobFailed',
    /without a verification result/,
  ],
  [
    'the Job vanished',
    { state: 'absent' },
    source,
    'False',
    'VerificationJobFailed',
    /disappeared before it finished/,
  ],
];

test.each(rows)('%s', (_name, seen, src, status, reason, message) => {
  const v = verificationVerdict({ artifact, source: src, seen, jobName: 'snap-verify-1' });
  expect(v.status).toBe(status);
  expect(v.reason).toBe(reason);
  expect(v.message).toMatch(message);
});

test('a verdict from a verification carries the figures; one from a failure carries none', () => {
  const ok = verificationVerdict({ artifact, source, seen: verified({}), jobName: 'j' });
  expect(ok.figures).toEqual({ revision: 103, keys: 42, hashRevision: 100, hash: 777, compactRevision: 20 });
  expect(
    verificationVerdict({ artifact, source, seen: failed('SourceNotFound'), jobName: 'j' }).figures,
  ).toBeUndefined();
});

describe('withVerification', () => {
  const ready = {
    type: 'Ready',
    status: 'True' as const,
    reason: 'SnapshotSucceeded',
    message: 'stored',
    lastTransitionTime: 't0',
  };
  const succeeded: EtcdSnapshotStatus = {
    phase: 'Succeeded',
    conditions: [ready],
    artifact: { uri: 's3://b/k', size: 1, sha256: SHA, revision: 100, etcdVersion: '3.6.16', takenAt: 't0' },
  };
  const running = withVerification(
    succeeded,
    { status: 'Unknown', reason: 'VerificationRunning', message: 'Job j runs' },
    { jobName: 'snap-verify-1', run: 1, source },
    't1',
  );

  test('running: Unknown, the Job and the source hash recorded; phase, Ready and artifact untouched', () => {
    expect(running.phase).toBe('Succeeded');
    expect(running.artifact).toEqual(succeeded.artifact);
    expect(running.conditions).toContainEqual(ready);
    expect(running.conditions).toContainEqual(
      expect.objectContaining({ type: 'Verified', status: 'Unknown', lastTransitionTime: 't1' }),
    );
    expect(running.verification).toEqual({
      jobName: 'snap-verify-1',
      run: 1,
      sourceHash: 777,
      sourceCompactRevision: 20,
    });
  });

  test('the result of the same run keeps what the run recorded and adds the figures and verifiedAt', () => {
    const done = withVerification(
      running,
      verificationVerdict({ artifact, source, seen: verified({}), jobName: 'snap-verify-1' }),
      { jobName: 'snap-verify-1', run: 1 },
      't2',
    );
    expect(done.verification).toEqual({
      jobName: 'snap-verify-1',
      run: 1,
      sourceHash: 777,
      sourceCompactRevision: 20,
      verifiedAt: 't2',
      revision: 103,
      keys: 42,
      hashRevision: 100,
      hash: 777,
      compactRevision: 20,
    });
    expect(done.conditions?.filter((c) => c.type === 'Verified')).toEqual([
      expect.objectContaining({ status: 'True', reason: 'SnapshotVerified', lastTransitionTime: 't2' }),
    ]);
  });

  test('a re-check replaces the old figures, names its request, and a failure flips the condition', () => {
    const done = withVerification(
      running,
      verificationVerdict({ artifact, source, seen: failed('ChecksumMismatch'), jobName: 'snap-verify-2' }),
      { jobName: 'snap-verify-2', run: 2, request: 'again', source },
      't3',
    );
    expect(done.verification).toEqual({
      jobName: 'snap-verify-2',
      run: 2,
      request: 'again',
      sourceHash: 777,
      sourceCompactRevision: 20,
      verifiedAt: 't3',
    });
    expect(done.conditions?.find((c) => c.type === 'Verified')).toMatchObject({
      status: 'False',
      reason: 'ObjectAltered',
      lastTransitionTime: 't3',
    });
  });
});
