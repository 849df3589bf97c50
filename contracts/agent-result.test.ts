// The result line: what the agent encodes the control side parses back unchanged, it always fits the 4096-byte termination log, and anything else is refused.
import {
  AgentFailureReasons,
  encodeAgentResult,
  MAX_MESSAGE_BYTES,
  MAX_RESULT_BYTES,
  parseAgentResult,
  truncateMessage,
  type AgentResult,
} from './agent-result';

const SHA = 'c7d0faa987e540ca6247f8fb4e431f3bce70ca9fda2ba4a542d2402d4763c3c2';
const snapshot: AgentResult = {
  ok: true,
  artifact: {
    uri: 's3://backups/prod/main/20261120T235214Z.db',
    size: 20512,
    sha256: SHA,
    revision: 456,
    etcdVersion: '3.6.16',
    takenAt: '2026-11-20T23:52:14.012Z',
  },
};

describe('round trip', () => {
  it.each<[string, AgentResult]>([
    ['a snapshot artifact', snapshot],
    ['a restore that restored', { ok: true, restored: true, sha256: SHA, size: 20512 }],
    [
      'a point-in-time restore, with the revision it reached',
      { ok: true, restored: true, sha256: SHA, size: 20512, revision: 1200 },
    ],
    [
      'a point-in-time restore, with the revision and the time it reached',
      {
        ok: true,
        restored: true,
        sha256: SHA,
        size: 20512,
        revision: 1200,
        time: '2026-11-25T10:32:00.123Z',
      },
    ],
    [
      'a point-in-time restore that granted leases and restored some keys without theirs',
      {
        ok: true,
        restored: true,
        sha256: SHA,
        size: 20512,
        revision: 1200,
        time: '2026-11-25T10:32:00.123Z',
        leasesGranted: 3,
        keysWithoutLease: 2,
      },
    ],
    ['a restore that found a member already there', { ok: true, restored: false }],
    [
      'a verification',
      {
        ok: true,
        verification: {
          sha256: SHA,
          size: 20512,
          revision: 460,
          keys: 12,
          hashRevision: 456,
          hash: 4294967295,
          compactRevision: -1,
        },
      },
    ],
    [
      'a failure',
      {
        ok: false,
        reason: AgentFailureReasons.BucketNotFound,
        message: 'S3 bucket of s3://x/y does not exist',
      },
    ],
  ])('%s', (_name, result) => {
    const line = encodeAgentResult(result);
    expect(line).not.toContain('\n');
    expect(parseAgentResult(`${line}\n`)).toEqual(result);
  });

  it('the snapshot line is exactly the contract shape', () => {
    expect(JSON.parse(encodeAgentResult(snapshot))).toEqual({
      ok: true,
      artifact: {
        uri: 's3://backups/prod/main/20261120T235214Z.db',
        size: 20512,
        sha256: SHA,
        revision: 456,
        etcdVersion: '3.6.16',
        takenAt: '2026-11-20T23:52:14.012Z',
      },
    });
  });
});

describe('size limit', () => {
  it('a huge failure message is truncated, marked, and the line stays under 4096 bytes', () => {
    const message = `etcdutl said: ${'x'.repeat(10_000)}`;
    const line = encodeAgentResult({
      ok: false,
      reason: AgentFailureReasons.DestinationUnavailable,
      message,
    });
    expect(Buffer.byteLength(line)).toBeLessThan(MAX_RESULT_BYTES);
    const parsed = parseAgentResult(line);
    expect(parsed.ok).toBe(false);
    const got = (parsed as { message: string }).message;
    expect(got.startsWith('etcdutl said: xxx')).toBe(true);
    expect(got.endsWith('…')).toBe(true);
  });

  it('multi-byte and escaped characters count by their encoded size, cut on a character boundary', () => {
    const message = '€"\n'.repeat(2000);
    const cut = truncateMessage(message);
    expect(Buffer.byteLength(JSON.stringify(cut)) - 2).toBeLessThanOrEqual(MAX_MESSAGE_BYTES);
    expect(message.startsWith(cut.slice(0, -1))).toBe(true);
    expect(cut).not.toContain('\uFFFD');
  });

  it('a short message is kept as it is', () => {
    expect(truncateMessage('short')).toBe('short');
  });

  it('a success line over the limit is refused rather than written cut', () => {
    expect(() =>
      encodeAgentResult({
        ...snapshot,
        artifact: { ...snapshot.artifact, uri: `s3://b/${'k'.repeat(5000)}` },
      }),
    ).toThrow(/over the 4096-byte limit/);
  });
});

describe('parseAgentResult refuses what is not a result', () => {
  it.each<[string, string, RegExp]>([
    ['an empty termination message', '', /not JSON/],
    ['a Go panic', 'panic: runtime error', /not JSON/],
    ['a truncated line', encodeAgentResult(snapshot).slice(0, 100), /not JSON/],
    ['a JSON array', '[]', /not a JSON object/],
    ['ok missing', '{"reason":"BucketNotFound","message":"m"}', /"ok" is neither/],
    ['an unknown reason', '{"ok":false,"reason":"Oops","message":"m"}', /unknown reason/],
    ['a failure without message', '{"ok":false,"reason":"BucketNotFound"}', /message/],
    [
      'an artifact with a short sha256',
      JSON.stringify({ ok: true, artifact: { ...snapshot.artifact, sha256: 'abc' } }),
      /artifact.sha256/,
    ],
    [
      'an artifact with a string size',
      JSON.stringify({ ok: true, artifact: { ...snapshot.artifact, size: '1' } }),
      /artifact.size/,
    ],
    [
      'an artifact with a negative revision',
      JSON.stringify({ ok: true, artifact: { ...snapshot.artifact, revision: -1 } }),
      /artifact.revision/,
    ],
    [
      'an artifact with a bad date',
      JSON.stringify({ ok: true, artifact: { ...snapshot.artifact, takenAt: 'yesterday' } }),
      /artifact.takenAt/,
    ],
    ['a restore without its sha256', '{"ok":true,"restored":true,"size":1}', /sha256/],
    [
      'a restore with a time that is no time',
      JSON.stringify({ ok: true, restored: true, sha256: SHA, size: 1, revision: 2, time: 'yesterday' }),
      /time/,
    ],
    [
      'a restore with a negative count of keys without their lease',
      JSON.stringify({ ok: true, restored: true, sha256: SHA, size: 1, keysWithoutLease: -1 }),
      /keysWithoutLease/,
    ],
    [
      'a restore with a count of leases granted that is no number',
      JSON.stringify({ ok: true, restored: true, sha256: SHA, size: 1, leasesGranted: '3' }),
      /leasesGranted/,
    ],
    [
      'a verification without its key count',
      JSON.stringify({
        ok: true,
        verification: { sha256: SHA, size: 1, revision: 2, hashRevision: 2, hash: 3, compactRevision: 0 },
      }),
      /verification.keys/,
    ],
    [
      'a verification with a negative hash',
      JSON.stringify({
        ok: true,
        verification: {
          sha256: SHA,
          size: 1,
          revision: 2,
          keys: 1,
          hashRevision: 2,
          hash: -3,
          compactRevision: 0,
        },
      }),
      /verification.hash/,
    ],
    [
      'a verification with a compacted revision below -1',
      JSON.stringify({
        ok: true,
        verification: {
          sha256: SHA,
          size: 1,
          revision: 2,
          keys: 1,
          hashRevision: 2,
          hash: 3,
          compactRevision: -2,
        },
      }),
      /verification.compactRevision/,
    ],
    [
      'an ok without artifact or restored',
      '{"ok":true}',
      /neither a snapshot artifact, a restore outcome nor a verification/,
    ],
  ])('%s', (_name, text, why) => {
    expect(() => parseAgentResult(text)).toThrow(why);
  });

  it('every reason of the contract is accepted', () => {
    for (const reason of Object.values(AgentFailureReasons)) {
      expect(parseAgentResult(JSON.stringify({ ok: false, reason, message: 'm' }))).toEqual({
        ok: false,
        reason,
        message: 'm',
      });
    }
    expect(Object.keys(AgentFailureReasons).sort()).toEqual([
      'BucketNotFound',
      'ChecksumMismatch',
      'DestinationUnavailable',
      'EtcdUnavailable',
      'InvalidArguments',
      'InvalidCredentials',
      'SnapshotCorrupt',
      'SourceNotFound',
    ]);
  });
});
