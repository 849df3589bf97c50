// `etcd-conductor restore`: idempotently turns a stored snapshot into a member's data dir; the bytes are verified against --sha256 before etcdutl sees them, and the data dir appears only complete (restored beside it, then renamed).
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pipeline, type Readable } from 'node:stream';
import { AgentError, describe } from './agent-error';
import { defaultUri, type Location, type RestoreArgs } from './args';
import { DigestStream } from './digest-stream';
import { CollectingStream } from './memory';
import { AgentFailureReasons, type RestoreSuccess } from '../contracts/agent-result';
import { createS3Client, s3CredentialsFromEnv, s3Failure } from './s3-store';

/** Derived from the data dir, so a re-run after a crash finds (and replaces) its own leftovers. */
export const restorePaths = (dataDir: string) => ({
  download: `${dataDir}.snapshot`,
  staging: `${dataDir}.tmp`,
});

const exists = (path: string) =>
  stat(path).then(
    () => true,
    (e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return false;
      throw e;
    },
  );

function destination(message: string, cause?: unknown): AgentError {
  return new AgentError(AgentFailureReasons.DestinationUnavailable, message, { cause });
}

/** A data dir we may rename onto: absent, or an empty directory (rename(2) replaces an empty one). */
async function checkDataDir(dataDir: string): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(dataDir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    throw destination(`cannot read the data dir ${dataDir}: ${describe(e)}`, e);
  }
  if (entries.length > 0)
    throw destination(
      `the data dir ${dataDir} is not empty but holds no member/ (found ${entries.slice(0, 5).join(', ')}); refusing to restore over it`,
    );
}

async function openSource(
  source: Location,
  env: NodeJS.ProcessEnv,
): Promise<{ body: Readable; close(): void }> {
  if (source.kind === 'file') {
    const stream = createReadStream(source.path);
    // Surface a missing file here, as SourceNotFound, rather than halfway through the pipe.
    await new Promise<void>((resolve, reject) => {
      stream.once('open', () => resolve());
      stream.once('error', reject);
    }).catch((e: NodeJS.ErrnoException) => {
      throw e.code === 'ENOENT'
        ? new AgentError(AgentFailureReasons.SourceNotFound, `snapshot file ${source.path} does not exist`)
        : destination(`cannot read snapshot file ${source.path}: ${describe(e)}`, e);
    });
    return { body: stream, close: () => stream.destroy() };
  }
  const { s3 } = source;
  const client = createS3Client(s3, s3CredentialsFromEnv(env));
  try {
    const object = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: s3.key }));
    if (!object.Body) throw new Error('S3 returned no body');
    return { body: object.Body as Readable, close: () => client.destroy() };
  } catch (e) {
    client.destroy();
    throw s3Failure(e, 'download', `s3://${s3.bucket}/${s3.key}`);
  }
}

/** Copies the source into `file` (fsynced), returning what went through. */
export async function download(
  source: Location,
  file: string,
  env: NodeJS.ProcessEnv,
  signal: AbortSignal,
): Promise<{ sha256: string; size: number }> {
  const { body, close } = await openSource(source, env);
  const digest = new DigestStream();
  const out = createWriteStream(file, { flush: true, mode: 0o600 });
  const onAbort = () => body.destroy(new Error(`terminated by ${String(signal.reason ?? 'a signal')}`));
  signal.addEventListener('abort', onAbort, { once: true });
  if (signal.aborted) onAbort(); // the signal came while the source was being opened
  try {
    await new Promise<void>((resolve, reject) =>
      pipeline(body, new CollectingStream(), digest, out, (e) => (e ? reject(e) : resolve())),
    );
    return { sha256: digest.sha256, size: digest.byteCount };
  } catch (e) {
    throw destination(`downloading ${defaultUri(source)} to ${file} failed: ${describe(e)}`, e);
  } finally {
    signal.removeEventListener('abort', onAbort);
    close();
  }
}

/** etcdutl's own integrity check failing means the stored snapshot was bad, whatever its sha256. */
const INTEGRITY_FAILURE = /integrity check failed|expected sha256|snapshot missing hash/i;

function runEtcdutl(args: string[], signal: AbortSignal, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('etcdutl', args, { stdio: ['ignore', 'pipe', 'pipe'], signal, env });
    let output = '';
    const collect = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-8192);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('error', (e: NodeJS.ErrnoException) =>
      reject(
        e.code === 'ENOENT'
          ? destination('etcdutl is not on PATH (the image must carry etcd 3.6 etcdutl)', e)
          : destination(`etcdutl could not run: ${describe(e)}`, e),
      ),
    );
    child.on('close', (code, sig) => {
      if (code === 0) return resolve(output);
      const lines = output.trim().split('\n').filter(Boolean);
      const last = lines.slice(-3).join(' | ') || '(no output)';
      const reason = INTEGRITY_FAILURE.test(output)
        ? AgentFailureReasons.ChecksumMismatch
        : AgentFailureReasons.DestinationUnavailable;
      reject(new AgentError(reason, `etcdutl snapshot restore failed (${code ?? sig}): ${last}`));
    });
  });
}

/**
 * The revision the snapshot holds, as `etcdutl snapshot status` reports it (the newest revision that left a key or
 * tombstone), for the result; undefined when etcdutl cannot say, which the restore itself would then report.
 */
async function snapshotRevision(
  path: string,
  signal: AbortSignal,
  env: NodeJS.ProcessEnv,
): Promise<number | undefined> {
  try {
    const out = await runEtcdutl(['snapshot', 'status', path, '-w', 'json'], signal, env);
    const revision = (JSON.parse(out.trim().split('\n').pop() ?? '{}') as { revision?: unknown }).revision;
    return typeof revision === 'number' && Number.isSafeInteger(revision) && revision >= 0
      ? revision
      : undefined;
  } catch {
    return undefined;
  }
}

async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export async function restoreSnapshot(
  args: RestoreArgs,
  env: NodeJS.ProcessEnv,
  signal: AbortSignal = new AbortController().signal,
): Promise<RestoreSuccess> {
  const { dataDir } = args;
  if (
    await exists(join(dataDir, 'member')).catch((e: unknown) => {
      throw destination(`cannot inspect the data dir ${dataDir}: ${describe(e)}`, e);
    })
  ) {
    // A run that crashed after its rename may have left its download behind; it is ours and no longer needed.
    await rm(restorePaths(dataDir).download, { force: true }).catch(() => undefined);
    return { ok: true, restored: false };
  }
  await checkDataDir(dataDir);
  const paths = restorePaths(dataDir);
  const parent = dirname(dataDir);
  await mkdir(parent, { recursive: true }).catch((e: unknown) => {
    throw destination(`cannot create ${parent}: ${describe(e)}`, e);
  });
  try {
    const got = await download(args.source, paths.download, env, signal);
    if (got.sha256 !== args.sha256)
      throw new AgentError(
        AgentFailureReasons.ChecksumMismatch,
        `${defaultUri(args.source)} has sha256 ${got.sha256} (${got.size} bytes), expected ${args.sha256}; not restoring it`,
      );
    const revision = await snapshotRevision(paths.download, signal, env);
    // A staging dir left by an interrupted run is ours (its name derives from the data dir) and incomplete.
    await rm(paths.staging, { recursive: true, force: true });
    await runEtcdutl(
      [
        'snapshot',
        'restore',
        paths.download,
        '--data-dir',
        paths.staging,
        '--name',
        args.name,
        '--initial-cluster',
        args.initialCluster,
        '--initial-advertise-peer-urls',
        args.initialAdvertisePeerUrls,
        '--initial-cluster-token',
        args.initialClusterToken,
        '--bump-revision',
        String(args.bumpRevision),
        '--mark-compacted',
      ],
      signal,
      env,
    );
    try {
      await rename(paths.staging, dataDir);
      await fsyncDir(parent);
    } catch (e) {
      throw destination(`moving the restored data into ${dataDir} failed: ${describe(e)}`, e);
    }
    return {
      ok: true,
      restored: true,
      sha256: got.sha256,
      size: got.size,
      ...(revision !== undefined ? { revision } : {}),
    };
  } catch (e) {
    await rm(paths.staging, { recursive: true, force: true }).catch(() => undefined);
    throw e instanceof AgentError ? e : destination(`restore into ${dataDir} failed: ${describe(e)}`, e);
  } finally {
    await rm(paths.download, { force: true }).catch(() => undefined);
  }
}
