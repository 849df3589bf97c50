// `etcd-conductor verify` against a real etcd 3.6 snapshot: the restored member's revision, key count and hashkv equal
// the source's, and an altered, truncated or missing file is told apart by its reason.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { AgentError } from './agent-error';
import type { VerifyArgs } from './args';
import { hashKV } from './etcd-hashkv';
import { etcdutlTimeoutMs, verifySnapshot } from './verify';
import { AgentFailureReasons, encodeAgentResult, parseAgentResult } from '../contracts/agent-result';
import { withEtcdClient } from '../activities/etcd-admin';
import { binaryPath, cacheRoot, ETCD_TOOLS } from '../localcluster/tool-cache';
import { startLocalEtcd, type LocalEtcd } from '../test/support/local-etcd';

jest.setTimeout(120_000);

const binDir = dirname(binaryPath(cacheRoot(), ETCD_TOOLS['3.6.16'], 'etcd'));
const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

let etcd: LocalEtcd;
let dir: string;
let snapshotFile: string;
let source: { revision: number; keys: number; hash: number; compactRevision: number };
/** The verifier finds etcd, etcdutl (and nothing else it needs) on this PATH, as in the image. */
const env = { PATH: `${binDir}:${process.env.PATH ?? ''}` };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'verify-test-'));
  etcd = await startLocalEtcd('verify-src-');
  source = await withEtcdClient({ callTimeoutMs: 10_000 }, [etcd.url], async (c) => {
    for (let i = 0; i < 30; i++) await c.put(`k/${i}`).value(`v${i}`);
    for (let i = 0; i < 5; i++) await c.put(`k/${i}`).value(`again${i}`);
    await c.delete().key('k/29');
    const all = await c.kv.range({ key: Buffer.from([0]), range_end: Buffer.from([0]), count_only: true });
    const revision = Number(all.header.revision);
    const h = await hashKV(c, revision);
    return { revision, keys: Number(all.count), hash: h.hash, compactRevision: h.compactRevision };
  });
  snapshotFile = join(dir, 'source.db');
  execFileSync(join(binDir, 'etcdctl'), ['--endpoints', etcd.url, 'snapshot', 'save', snapshotFile], {
    stdio: 'ignore',
  });
});

afterAll(() => {
  etcd?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const args = (file: string, sha: string, hashRevision: number, work = 'work'): VerifyArgs => ({
  command: 'verify',
  source: { kind: 'file', path: file },
  sha256: sha,
  workDir: join(dir, work),
  hashRevision,
  resultFile: join(dir, 'result'),
});

async function failureOf(a: VerifyArgs): Promise<AgentError> {
  const e = await verifySnapshot(a, env).then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!(e instanceof AgentError)) throw new Error(`expected an AgentError, got ${String(e)}`);
  return e;
}

test('a good snapshot restores to the source revision, key count and hashkv', async () => {
  const result = await verifySnapshot(args(snapshotFile, sha256(snapshotFile), source.revision), env);
  expect(result.verification).toEqual({
    sha256: sha256(snapshotFile),
    size: readFileSync(snapshotFile).length,
    revision: source.revision,
    keys: 29,
    hashRevision: source.revision,
    hash: source.hash,
    compactRevision: source.compactRevision,
  });
  expect(source.keys).toBe(29);
  // Never compacted: etcd says -1, and the result line still parses as a verification.
  expect(result.verification.compactRevision).toBe(-1);
  expect(parseAgentResult(encodeAgentResult(result))).toEqual(result);
});

test('an older revision is hashed as asked, and differs from the newest one', async () => {
  const result = await verifySnapshot(args(snapshotFile, sha256(snapshotFile), source.revision - 3), env);
  expect(result.verification.hashRevision).toBe(source.revision - 3);
  expect(result.verification.revision).toBe(source.revision);
  expect(result.verification.hash).not.toBe(source.hash);
});

test('a file whose bytes changed after the upload is ChecksumMismatch, naming both hashes', async () => {
  const altered = join(dir, 'altered.db');
  const bytes = readFileSync(snapshotFile);
  const at = Math.floor(bytes.length / 2);
  bytes[at] = (bytes[at] ?? 0) ^ 0xff;
  writeFileSync(altered, bytes);
  const e = await failureOf(args(altered, sha256(snapshotFile), source.revision));
  expect(e.reason).toBe(AgentFailureReasons.ChecksumMismatch);
  expect(e.message).toContain(sha256(altered));
  expect(e.message).toContain(sha256(snapshotFile));
});

test('a damaged snapshot uploaded as it was (its sha256 matches) is SnapshotCorrupt', async () => {
  const damaged = join(dir, 'damaged.db');
  const bytes = readFileSync(snapshotFile);
  bytes.fill(0xee, Math.floor(bytes.length / 3), Math.floor(bytes.length / 3) + 512);
  writeFileSync(damaged, bytes);
  const e = await failureOf(args(damaged, sha256(damaged), source.revision, 'work-damaged'));
  expect(e.reason).toBe(AgentFailureReasons.SnapshotCorrupt);
  expect(e.message).toMatch(/etcdutl snapshot (status|restore) failed/);
});

test('a missing file is SourceNotFound', async () => {
  const e = await failureOf(args(join(dir, 'nothing.db'), sha256(snapshotFile), source.revision));
  expect(e.reason).toBe(AgentFailureReasons.SourceNotFound);
});

test('a snapshot of a compacted store hashes as its source did, over the same compacted history', async () => {
  const compacted = await startLocalEtcd('verify-compacted-');
  try {
    const src = await withEtcdClient({ callTimeoutMs: 10_000 }, [compacted.url], async (c) => {
      for (let i = 0; i < 20; i++) await c.put(`c/${i % 7}`).value(`v${i}`);
      await c.kv.compact({ revision: '12', physical: true });
      for (let i = 0; i < 5; i++) await c.put(`c/late${i}`).value('x');
      const all = await c.kv.range({ key: Buffer.from([0]), range_end: Buffer.from([0]), count_only: true });
      const revision = Number(all.header.revision);
      return { revision, keys: Number(all.count), ...(await hashKV(c, revision - 2)) };
    });
    const file = join(dir, 'compacted.db');
    execFileSync(join(binDir, 'etcdctl'), ['--endpoints', compacted.url, 'snapshot', 'save', file], {
      stdio: 'ignore',
    });
    const { verification } = await verifySnapshot(
      args(file, sha256(file), src.revision - 2, 'work-compacted'),
      env,
    );
    expect(verification).toMatchObject({
      revision: src.revision,
      keys: src.keys,
      hashRevision: src.revision - 2,
      hash: src.hash,
      compactRevision: 12,
    });
    expect(src.compactRevision).toBe(12);
  } finally {
    compacted.stop();
  }
});

test.each([
  [0, 60_000],
  [16 * 1024 * 1024, 61_000],
  [16 * 1024 * 1024 + 1, 62_000],
  [8 * 1024 * 1024 * 1024, 572_000],
])('etcdutl may run for a minute plus a second per 16 MiB: %d bytes -> %d ms', (bytes, ms) => {
  expect(etcdutlTimeoutMs(bytes)).toBe(ms);
});
