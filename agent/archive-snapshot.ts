// The archiver's full snapshot: etcd's snapshot stream into a local file (the same stream and checks as
// `etcd-conductor snapshot`), then `etcdutl snapshot status` for the exact revision it holds. A chain's changes start
// right after that revision, so it must be exact: the member's status before the stream is only a lower bound.
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { AgentError, describe } from './agent-error';
import type { ClientTLSFiles } from './args';
import { takeSnapshot } from './snapshot';
import { etcdutl, etcdutlTimeoutMs } from './verify';
import { AgentFailureReasons } from '../contracts/agent-result';

export interface FullSnapshot {
  /** The local file; the caller uploads it and then calls discard(). */
  path: string;
  size: number;
  sha256: string;
  revision: number;
  etcdVersion: string;
  takenAt: string;
  discard(): Promise<void>;
}

export async function takeFullSnapshot(
  endpoint: string,
  tls: ClientTLSFiles | undefined,
  workDir: string,
  env: NodeJS.ProcessEnv,
  signal: AbortSignal,
): Promise<FullSnapshot> {
  await mkdir(workDir, { recursive: true });
  const path = join(workDir, 'full-snapshot.db');
  const discard = () => rm(path, { force: true }).then(() => undefined);
  await discard();
  const { artifact } = await takeSnapshot(
    {
      command: 'snapshot',
      endpoint,
      ...(tls ? { tls } : {}),
      destination: { kind: 'file', path },
      uri: `file://${path}`,
      resultFile: join(workDir, 'unused-result'),
    },
    env,
    signal,
  );
  try {
    const out = await etcdutl(
      ['snapshot', 'status', path, '-w', 'json'],
      env,
      signal,
      etcdutlTimeoutMs(artifact.size),
    );
    const newestKey = Number(
      (JSON.parse(out.trim().split('\n').pop() ?? '{}') as { revision?: unknown }).revision,
    );
    if (!Number.isSafeInteger(newestKey) || newestKey < 0)
      throw new AgentError(
        AgentFailureReasons.SnapshotCorrupt,
        `etcdutl snapshot status gave no revision (${JSON.stringify(out.slice(-200))})`,
      );
    // etcdutl reports the newest revision that left a key (or tombstone) in the database. Every write after the
    // status call leaves one above the status revision, so a newest key at or below it means nothing was written
    // since: the snapshot holds exactly the status revision (an empty store, or its last revisions compacted away).
    const revision = Math.max(newestKey, artifact.revision);
    return {
      path,
      size: artifact.size,
      sha256: artifact.sha256,
      revision,
      etcdVersion: artifact.etcdVersion,
      takenAt: artifact.takenAt,
      discard,
    };
  } catch (e) {
    await discard();
    throw e instanceof AgentError
      ? e
      : new AgentError(
          AgentFailureReasons.SnapshotCorrupt,
          `reading the snapshot's revision failed: ${describe(e)}`,
        );
  }
}
