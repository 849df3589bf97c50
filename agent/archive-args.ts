// The command line of `etcd-conductor archive` (the continuous backup, a long-running Deployment): checked and typed
// before anything touches etcd or the store; every mistake is InvalidArguments naming the flag.
import {
  clientTLS,
  httpUrl,
  invalid,
  location,
  parseFlags,
  required,
  absolutePath,
  LOCATION_OPTIONS,
  type ClientTLSFiles,
  type S3Location,
  type Values,
} from './args';

export interface ArchiveArgs {
  command: 'archive';
  endpoint: string;
  tls?: ClientTLSFiles;
  /** The bucket, and in `key` the destination's prefix (the archive goes under <prefix>/continuous/<uid>/). */
  destination: S3Location;
  clusterUid: string;
  /** An emptyDir of its own: the full snapshot passes through it on the way to the store. */
  workDir: string;
  fullSnapshotIntervalSeconds: number;
  maxLagSeconds: number;
  retentionSeconds: number;
}

export const ARCHIVE_USAGE = `usage:
  etcd-conductor archive --endpoint URL [--cacert FILE --cert FILE --key FILE] --s3-endpoint URL --s3-bucket B --s3-key PREFIX --s3-region R [--s3-force-path-style] --cluster-uid UID --work-dir DIR --full-snapshot-interval-seconds N --max-lag-seconds N --retention-seconds N
S3 credentials come only from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; etcd's root credentials, when the cluster has auth, from ETCD_USERNAME and ETCD_PASSWORD.`;

const ARCHIVE_OPTIONS = {
  ...LOCATION_OPTIONS,
  endpoint: { type: 'string' },
  cacert: { type: 'string' },
  cert: { type: 'string' },
  key: { type: 'string' },
  'cluster-uid': { type: 'string' },
  'work-dir': { type: 'string' },
  'full-snapshot-interval-seconds': { type: 'string' },
  'max-lag-seconds': { type: 'string' },
  'retention-seconds': { type: 'string' },
} as const;

function seconds(values: Values, flag: string, min: number): number {
  const text = required('archive', values, flag).trim();
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < min)
    throw invalid(
      `archive: --${flag} must be a whole number of seconds, at least ${min}, got ${JSON.stringify(text)}`,
    );
  return n;
}

export function parseArchiveArgs(args: string[]): ArchiveArgs {
  const values = parseFlags('archive', ARCHIVE_OPTIONS, args);
  if (values['result-file'] !== undefined)
    throw invalid('archive: --result-file is not used (archive runs until stopped)');
  const endpoint = httpUrl('archive', 'endpoint', required('archive', values, 'endpoint'));
  const where = location('archive', values);
  if (where.kind !== 's3')
    throw invalid('archive: the continuous backup goes to S3 only (--s3-*), not --file');
  const clusterUid = required('archive', values, 'cluster-uid');
  if (!/^[A-Za-z0-9-]+$/.test(clusterUid))
    throw invalid(`archive: --cluster-uid ${JSON.stringify(clusterUid)} is not a uid`);
  const workDir = absolutePath('archive', 'work-dir', required('archive', values, 'work-dir')).replace(
    /\/+$/,
    '',
  );
  if (workDir === '') throw invalid('archive: --work-dir must not be the root directory');
  const fullSnapshotIntervalSeconds = seconds(values, 'full-snapshot-interval-seconds', 60);
  const maxLagSeconds = seconds(values, 'max-lag-seconds', 1);
  const retentionSeconds = seconds(values, 'retention-seconds', 3600);
  if (retentionSeconds < fullSnapshotIntervalSeconds)
    throw invalid(
      `archive: --retention-seconds (${retentionSeconds}) must be at least --full-snapshot-interval-seconds (${fullSnapshotIntervalSeconds})`,
    );
  const tls = clientTLS(values, 'archive');
  return {
    command: 'archive',
    endpoint,
    ...(tls ? { tls } : {}),
    destination: where.s3,
    clusterUid,
    workDir,
    fullSnapshotIntervalSeconds,
    maxLagSeconds,
    retentionSeconds,
  };
}
