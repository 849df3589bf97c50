// `etcd-conductor restore-point`: the seed member's restore from a continuous backup. Builds a snapshot of the store at
// the point (agent/point-in-time.ts) in the data volume, then restores it into the data dir exactly as `restore` does
// a stored snapshot; idempotent like it: a data dir that already holds a member is left alone.
import { stat, rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  absolutePath,
  httpUrl,
  invalid,
  location,
  parseFlags,
  parseInitialCluster,
  required,
  LOCATION_OPTIONS,
  type Values,
} from './args';
import { S3ArchiveStore } from './archive-store';
import { buildPointSnapshot } from './point-in-time';
import { restoreSnapshot } from './restore';
import { createS3Client, s3CredentialsFromEnv, s3Failure } from './s3-store';
import type { S3Location } from './args';
import type { RestoreSuccess } from '../contracts/agent-result';
import { DEFAULT_BUMP_REVISION, DEFAULT_RESULT_FILE } from './args';

export interface RestorePointArgs {
  command: 'restore-point';
  /** The bucket, and in `key` the backup destination's prefix. */
  archive: S3Location;
  clusterUid: string;
  point: { revision: number } | { time: string } | 'newest';
  /** Where the point's snapshot is built (on the data volume, beside the data dir). */
  workDir: string;
  dataDir: string;
  name: string;
  initialCluster: string;
  initialAdvertisePeerUrls: string;
  initialClusterToken: string;
  bumpRevision: number;
  resultFile: string;
}

const OPTIONS = {
  ...LOCATION_OPTIONS,
  'cluster-uid': { type: 'string' },
  revision: { type: 'string' },
  time: { type: 'string' },
  newest: { type: 'boolean' },
  'work-dir': { type: 'string' },
  'data-dir': { type: 'string' },
  name: { type: 'string' },
  'initial-cluster': { type: 'string' },
  'initial-advertise-peer-urls': { type: 'string' },
  'initial-cluster-token': { type: 'string' },
  'bump-revision': { type: 'string' },
} as const;

const C = 'restore-point';

function positive(values: Values, flag: string): number {
  const text = required(C, values, flag).trim();
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < 1)
    throw invalid(`${C}: --${flag} must be a positive integer, got ${JSON.stringify(text)}`);
  return n;
}

export function parseRestorePointArgs(args: string[]): RestorePointArgs {
  const values = parseFlags(C, OPTIONS, args);
  const where = location(C, values);
  if (where.kind !== 's3') throw invalid(`${C}: a continuous backup is in S3 (--s3-*), not --file`);
  const clusterUid = required(C, values, 'cluster-uid');
  if (!/^[A-Za-z0-9-]+$/.test(clusterUid))
    throw invalid(`${C}: --cluster-uid ${JSON.stringify(clusterUid)} is not a uid`);
  const newest = values.newest === true;
  const given = [newest, values.revision !== undefined, values.time !== undefined].filter(Boolean).length;
  if (given !== 1) throw invalid(`${C}: give exactly one of --revision N, --time RFC3339 or --newest`);
  const time = typeof values.time === 'string' ? values.time : undefined;
  if (time !== undefined && (!/^\d{4}-\d{2}-\d{2}T/.test(time) || Number.isNaN(Date.parse(time))))
    throw invalid(`${C}: --time must be an RFC 3339 time, got ${JSON.stringify(time)}`);
  const dataDir = absolutePath(C, 'data-dir', required(C, values, 'data-dir')).replace(/\/+$/, '');
  if (dataDir === '') throw invalid(`${C}: --data-dir must not be the root directory`);
  const workDir = absolutePath(C, 'work-dir', required(C, values, 'work-dir')).replace(/\/+$/, '');
  if (workDir === '' || workDir === dataDir || workDir.startsWith(`${dataDir}/`))
    throw invalid(`${C}: --work-dir must be a folder of its own, outside --data-dir`);
  const name = required(C, values, 'name');
  const initialCluster = required(C, values, 'initial-cluster');
  parseInitialCluster(initialCluster);
  const advertise = required(C, values, 'initial-advertise-peer-urls');
  advertise.split(',').forEach((u) => httpUrl(C, 'initial-advertise-peer-urls', u.trim()));
  return {
    command: C,
    archive: where.s3,
    clusterUid,
    point: newest ? 'newest' : time !== undefined ? { time } : { revision: positive(values, 'revision') },
    workDir,
    dataDir,
    name,
    initialCluster,
    initialAdvertisePeerUrls: advertise,
    initialClusterToken: required(C, values, 'initial-cluster-token'),
    bumpRevision:
      values['bump-revision'] !== undefined ? positive(values, 'bump-revision') : DEFAULT_BUMP_REVISION,
    resultFile: absolutePath(
      C,
      'result-file',
      typeof values['result-file'] === 'string' ? values['result-file'] : DEFAULT_RESULT_FILE,
    ),
  };
}

const holdsMember = (dataDir: string) =>
  stat(join(dataDir, 'member')).then(
    () => true,
    () => false,
  );

export async function restoreToPoint(
  args: RestorePointArgs,
  env: NodeJS.ProcessEnv,
  signal: AbortSignal = new AbortController().signal,
): Promise<RestoreSuccess> {
  // A re-run after the member started (or after a crash past the rename) must not rebuild anything.
  if (await holdsMember(args.dataDir)) return { ok: true, restored: false };
  const client = createS3Client(args.archive, s3CredentialsFromEnv(env));
  try {
    const store = new S3ArchiveStore(client, args.archive.bucket);
    let point;
    try {
      point = await buildPointSnapshot({
        store,
        prefix: args.archive.key,
        clusterUid: args.clusterUid,
        point: args.point,
        workDir: args.workDir,
        env,
        signal,
      });
    } catch (e) {
      throw s3Failure(e, 'download', `s3://${args.archive.bucket}/${args.archive.key}`);
    }
    const restored = await restoreSnapshot(
      {
        command: 'restore',
        source: { kind: 'file', path: point.file },
        sha256: point.sha256,
        dataDir: args.dataDir,
        name: args.name,
        initialCluster: args.initialCluster,
        initialAdvertisePeerUrls: args.initialAdvertisePeerUrls,
        initialClusterToken: args.initialClusterToken,
        bumpRevision: args.bumpRevision,
        resultFile: args.resultFile,
      },
      env,
      signal,
    );
    return restored.restored
      ? {
          ...restored,
          revision: point.revision,
          time: point.time,
          leasesGranted: point.leases.leasesGranted,
          keysWithoutLease: point.leases.keysWithoutLease,
        }
      : restored;
  } finally {
    client.destroy();
    await rm(args.workDir, { recursive: true, force: true }).catch(() => undefined);
  }
}
