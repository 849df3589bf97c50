// `etcd-conductor snapshot`: streams one member's snapshot straight to S3 (multipart, bounded memory) or to a file, measuring size and sha256 on the way; a failure leaves no object and no file behind.
import { createWriteStream } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { pipeline, type Readable, type Writable } from 'node:stream';
import { AgentError, describe } from './agent-error';
import type { S3Location, SnapshotArgs } from './args';
import { etcdAuthFromEnv, isGrpcStatusError, openSnapshot, type OpenedSnapshot } from './etcd-source';
import { CollectingStream } from './memory';
import { uploadParts } from './part-uploader';
import { AgentFailureReasons, type SnapshotSuccess } from '../contracts/agent-result';
import { createS3Client, s3CredentialsFromEnv, s3Failure } from './s3-store';
import { SnapshotStream } from './snapshot-stream';

/**
 * Parts of 5 MiB (S3's minimum), two uploading while a third fills: 15 MiB of part buffers whatever the
 * snapshot size, and 10,000 parts still cover 48 GiB, six times etcd's largest supported database.
 * Measured in docs/agent.md: 8 MiB parts cost memory and gained no speed.
 */
export const UPLOAD_PART_BYTES = 5 * 1024 * 1024;
export const UPLOAD_QUEUE_SIZE = 2;
/** The heap grows while streaming (SDK request objects, decoded messages); a full GC now and then gives it back. */
const MAJOR_GC_EVERY_BYTES = 32 * 1024 * 1024;

/** Why the transfer stopped: etcd's side of the pipe is told apart from the destination's. */
class FailureBlame {
  etcd: unknown;
  terminated: string | undefined;
  /** Set before we cancel the stream ourselves: the CANCELLED status that follows is not etcd's fault. */
  tearingDown = false;
  noteSource = (e: unknown) => {
    if (this.etcd !== undefined || this.tearingDown) return;
    if (e instanceof AgentError || isGrpcStatusError(e)) this.etcd = e;
  };
  toAgentError(endpoint: string): AgentError | undefined {
    if (this.terminated)
      return new AgentError(
        AgentFailureReasons.DestinationUnavailable,
        `snapshot stopped by ${this.terminated} before it was stored`,
      );
    if (this.etcd === undefined) return undefined;
    if (this.etcd instanceof AgentError) return this.etcd;
    return new AgentError(
      AgentFailureReasons.EtcdUnavailable,
      `etcd at ${endpoint} broke off the snapshot stream: ${describe(this.etcd)}`,
      { cause: this.etcd },
    );
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

/** Runs `source` through `through` and `collect` into `sink` (or up to `collect`, which the caller reads), settling when all are done. */
function pump(source: Readable, through: SnapshotStream, collect: CollectingStream, sink?: Writable) {
  return new Promise<void>((resolve, reject) => {
    const done = (e: NodeJS.ErrnoException | null) => (e ? reject(e) : resolve());
    if (sink) pipeline(source, through, collect, sink, done);
    else pipeline(source, through, collect, done);
  });
}

function artifact(args: SnapshotArgs, through: SnapshotStream, source: OpenedSnapshot): SnapshotSuccess {
  return {
    ok: true,
    artifact: {
      uri: args.uri,
      size: through.byteCount,
      sha256: through.sha256,
      revision: through.headerRevision ?? source.statusRevision,
      etcdVersion: source.etcdVersion,
      takenAt: source.takenAt,
    },
  };
}

async function toS3(
  args: SnapshotArgs,
  s3: S3Location,
  env: NodeJS.ProcessEnv,
  signal: AbortSignal,
): Promise<SnapshotSuccess> {
  const client = createS3Client(s3, s3CredentialsFromEnv(env));
  const where = `s3://${s3.bucket}/${s3.key}`;
  try {
    const source = await openSnapshot(args.endpoint, args.tls, etcdAuthFromEnv(env));
    const through = new SnapshotStream();
    const body = new CollectingStream({ majorEveryBytes: MAJOR_GC_EVERY_BYTES });
    const blame = new FailureBlame();
    source.messages.on('error', blame.noteSource);
    through.on('error', blame.noteSource);
    const onAbort = () => {
      blame.terminated = String(signal.reason ?? 'a signal');
      body.destroy(new Error(`terminated by ${blame.terminated}`));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort(); // the signal came while etcd was being asked
    try {
      // The body errors when etcd fails; the upload then aborts its multipart upload and rejects.
      const piped = pump(source.messages, through, body);
      const [pipeOutcome, uploadOutcome] = await Promise.allSettled([
        piped,
        uploadParts(body, {
          client,
          bucket: s3.bucket,
          key: s3.key,
          partBytes: UPLOAD_PART_BYTES,
          queueSize: UPLOAD_QUEUE_SIZE,
        }).catch((e: unknown) => {
          // S3 gave up first: stop reading from etcd, so the pipe settles and the member stops sending.
          blame.tearingDown = true;
          source.close();
          body.destroy();
          throw e;
        }),
      ]);
      const etcdFailure = blame.toAgentError(args.endpoint);
      if (etcdFailure) throw etcdFailure;
      if (uploadOutcome.status === 'rejected') throw s3Failure(uploadOutcome.reason, 'upload', where);
      if (pipeOutcome.status === 'rejected')
        throw new AgentError(
          AgentFailureReasons.DestinationUnavailable,
          `snapshot to ${where} failed: ${describe(pipeOutcome.reason)}`,
        );
      return artifact(args, through, source);
    } finally {
      signal.removeEventListener('abort', onAbort);
      blame.tearingDown = true;
      source.close();
    }
  } finally {
    client.destroy();
  }
}

async function toFile(
  args: SnapshotArgs,
  path: string,
  signal: AbortSignal,
  env: NodeJS.ProcessEnv,
): Promise<SnapshotSuccess> {
  const partial = `${path}.partial`;
  const source = await openSnapshot(args.endpoint, args.tls, etcdAuthFromEnv(env));
  const through = new SnapshotStream();
  const blame = new FailureBlame();
  source.messages.on('error', blame.noteSource);
  through.on('error', blame.noteSource);
  // flush: fsync before close, so the rename below never publishes a file whose bytes are still in the page cache.
  const file = createWriteStream(partial, { flush: true, mode: 0o600 });
  const onAbort = () => {
    blame.terminated = String(signal.reason ?? 'a signal');
    file.destroy(new Error(`terminated by ${blame.terminated}`));
  };
  signal.addEventListener('abort', onAbort, { once: true });
  if (signal.aborted) onAbort(); // the signal came while etcd was being asked
  try {
    await pump(source.messages, through, new CollectingStream(), file);
    await rename(partial, path);
    await fsyncDir(dirname(path));
  } catch (e) {
    blame.tearingDown = true;
    await rm(partial, { force: true }).catch(() => undefined);
    throw (
      blame.toAgentError(args.endpoint) ??
      new AgentError(AgentFailureReasons.DestinationUnavailable, `writing ${path} failed: ${describe(e)}`, {
        cause: e,
      })
    );
  } finally {
    signal.removeEventListener('abort', onAbort);
    blame.tearingDown = true;
    source.close();
  }
  return artifact(args, through, source);
}

export function takeSnapshot(
  args: SnapshotArgs,
  env: NodeJS.ProcessEnv,
  signal: AbortSignal = new AbortController().signal,
): Promise<SnapshotSuccess> {
  return args.destination.kind === 's3'
    ? toS3(args, args.destination.s3, env, signal)
    : toFile(args, args.destination.path, signal, env);
}
