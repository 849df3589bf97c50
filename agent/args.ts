// Turns the agent's command line into checked, typed arguments; every mistake becomes InvalidArguments with a message naming the flag, before anything touches etcd, S3 or the disk.
import { isAbsolute } from 'node:path';
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { AgentError } from './agent-error';
import { AgentFailureReasons, RESTORE_BUMP_REVISION } from '../contracts/agent-result';

export const DEFAULT_RESULT_FILE = '/dev/termination-log';
export const DEFAULT_BUMP_REVISION = RESTORE_BUMP_REVISION;
/** S3's own limit on key length, which also keeps the result line under 4096 bytes. */
const MAX_KEY_BYTES = 1024;
const MAX_URI_BYTES = 2048;

export interface S3Location {
  endpoint: string;
  bucket: string;
  key: string;
  region: string;
  forcePathStyle: boolean;
}

/** Where a snapshot goes to or comes from: exactly one of S3 or a file. */
export type Location = { kind: 's3'; s3: S3Location } | { kind: 'file'; path: string };

/** Files of the client certificate the agent presents to a member with client TLS (etcdctl's flag names). */
export interface ClientTLSFiles {
  caFile: string;
  certFile: string;
  keyFile: string;
}

export interface SnapshotArgs {
  command: 'snapshot';
  endpoint: string;
  /** With --cacert, --cert and --key: the member requires TLS and client certificates. */
  tls?: ClientTLSFiles;
  destination: Location;
  /** The URI to report: --uri, else s3://bucket/key or file://PATH. */
  uri: string;
  resultFile: string;
}

export interface RestoreArgs {
  command: 'restore';
  source: Location;
  /** Lowercase hex. */
  sha256: string;
  dataDir: string;
  name: string;
  initialCluster: string;
  initialAdvertisePeerUrls: string;
  initialClusterToken: string;
  bumpRevision: number;
  resultFile: string;
}

export interface VerifyArgs {
  command: 'verify';
  source: Location;
  /** Lowercase hex: what the snapshot's upload measured. */
  sha256: string;
  /** An empty folder of the verifier's own (an emptyDir): the download, the restored data dir, etcd's files. */
  workDir: string;
  /** The revision to hash: the one the source member's hashkv was asked for. */
  hashRevision: number;
  resultFile: string;
}

export type AgentArgs = SnapshotArgs | RestoreArgs | VerifyArgs;

export const USAGE = `usage:
  etcd-conductor snapshot --endpoint URL [--cacert FILE --cert FILE --key FILE] (--s3-endpoint URL --s3-bucket B --s3-key KEY --s3-region R [--s3-force-path-style] | --file PATH) [--uri URI] [--result-file PATH]
  etcd-conductor restore (--s3-endpoint URL --s3-bucket B --s3-key KEY --s3-region R [--s3-force-path-style] | --file PATH) --sha256 HEX --data-dir DIR --name NAME --initial-cluster NAME=URL[,...] --initial-advertise-peer-urls URL[,...] --initial-cluster-token TOKEN [--bump-revision N] [--result-file PATH]
  etcd-conductor verify (--s3-endpoint URL --s3-bucket B --s3-key KEY --s3-region R [--s3-force-path-style] | --file PATH) --sha256 HEX --work-dir DIR --hash-revision N [--result-file PATH]
S3 credentials come only from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.`;

export const invalid = (message: string): AgentError =>
  new AgentError(AgentFailureReasons.InvalidArguments, message);

export const LOCATION_OPTIONS = {
  's3-endpoint': { type: 'string' },
  's3-bucket': { type: 'string' },
  's3-key': { type: 'string' },
  's3-region': { type: 'string' },
  's3-force-path-style': { type: 'boolean' },
  file: { type: 'string' },
  'result-file': { type: 'string' },
} as const;

const SNAPSHOT_OPTIONS = {
  ...LOCATION_OPTIONS,
  endpoint: { type: 'string' },
  uri: { type: 'string' },
  cacert: { type: 'string' },
  cert: { type: 'string' },
  key: { type: 'string' },
} as const;

const RESTORE_OPTIONS = {
  ...LOCATION_OPTIONS,
  sha256: { type: 'string' },
  'data-dir': { type: 'string' },
  name: { type: 'string' },
  'initial-cluster': { type: 'string' },
  'initial-advertise-peer-urls': { type: 'string' },
  'initial-cluster-token': { type: 'string' },
  'bump-revision': { type: 'string' },
} as const;

const VERIFY_OPTIONS = {
  ...LOCATION_OPTIONS,
  sha256: { type: 'string' },
  'work-dir': { type: 'string' },
  'hash-revision': { type: 'string' },
} as const;

export type Values = Record<string, string | boolean | undefined>;

/** node:util parseArgs in strict mode; its messages already name the offending flag. */
export function parseFlags(command: string, options: ParseArgsOptionsConfig, args: string[]): Values {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values as Values;
  } catch (e) {
    throw invalid(`${command}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

export function required(command: string, values: Values, flag: string): string {
  const v = values[flag];
  if (typeof v !== 'string' || v.trim() === '') throw invalid(`${command}: --${flag} is required`);
  return v;
}

function optional(values: Values, flag: string): string | undefined {
  const v = values[flag];
  return typeof v === 'string' ? v : undefined;
}

export function httpUrl(command: string, flag: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid(`${command}: --${flag} ${JSON.stringify(value)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw invalid(`${command}: --${flag} must be an http:// or https:// URL, got ${JSON.stringify(value)}`);
  return value;
}

export function absolutePath(command: string, flag: string, value: string): string {
  if (!isAbsolute(value))
    throw invalid(`${command}: --${flag} must be an absolute path, got ${JSON.stringify(value)}`);
  return value;
}

const byteLength = (s: string) => Buffer.byteLength(s, 'utf8');

export function location(command: string, values: Values): Location {
  const s3Flags = ['s3-endpoint', 's3-bucket', 's3-key', 's3-region', 's3-force-path-style'].filter(
    (f) => values[f] !== undefined,
  );
  const file = optional(values, 'file');
  if (file !== undefined && s3Flags.length > 0)
    throw invalid(
      `${command}: give either --s3-* flags or --file, not both (got --file and --${s3Flags[0]})`,
    );
  if (file !== undefined) return { kind: 'file', path: absolutePath(command, 'file', file) };
  if (s3Flags.length === 0)
    throw invalid(
      `${command}: a ${command === 'snapshot' ? 'destination' : 'source'} is required: --s3-endpoint, --s3-bucket, --s3-key and --s3-region, or --file`,
    );
  const bucket = required(command, values, 's3-bucket');
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket))
    throw invalid(`${command}: --s3-bucket ${JSON.stringify(bucket)} is not a valid bucket name`);
  const key = required(command, values, 's3-key');
  if (byteLength(key) > MAX_KEY_BYTES)
    throw invalid(`${command}: --s3-key is ${byteLength(key)} bytes, over S3's ${MAX_KEY_BYTES}-byte limit`);
  return {
    kind: 's3',
    s3: {
      endpoint: httpUrl(command, 's3-endpoint', required(command, values, 's3-endpoint')),
      bucket,
      key,
      region: required(command, values, 's3-region'),
      forcePathStyle: values['s3-force-path-style'] === true,
    },
  };
}

const resultFile = (command: string, values: Values) =>
  absolutePath(command, 'result-file', optional(values, 'result-file') ?? DEFAULT_RESULT_FILE);

export function defaultUri(loc: Location): string {
  return loc.kind === 's3' ? `s3://${loc.s3.bucket}/${loc.s3.key}` : `file://${loc.path}`;
}

function parseSnapshot(args: string[]): SnapshotArgs {
  const values = parseFlags('snapshot', SNAPSHOT_OPTIONS, args);
  const endpoint = httpUrl('snapshot', 'endpoint', required('snapshot', values, 'endpoint'));
  const destination = location('snapshot', values);
  const uri = optional(values, 'uri') ?? defaultUri(destination);
  if (uri === '') throw invalid('snapshot: --uri must not be empty');
  if (byteLength(uri) > MAX_URI_BYTES)
    throw invalid(`snapshot: --uri is ${byteLength(uri)} bytes, over the ${MAX_URI_BYTES}-byte limit`);
  const tls = clientTLS(values);
  return {
    command: 'snapshot',
    endpoint,
    ...(tls ? { tls } : {}),
    destination,
    uri,
    resultFile: resultFile('snapshot', values),
  };
}

/** --cacert, --cert and --key come together or not at all: a member with client TLS needs all three. */
export function clientTLS(values: Values, command = 'snapshot'): ClientTLSFiles | undefined {
  const given = (['cacert', 'cert', 'key'] as const).filter((f) => values[f] !== undefined);
  if (given.length === 0) return undefined;
  if (given.length < 3)
    throw invalid(
      `${command}: --cacert, --cert and --key go together (got only ${given.map((f) => `--${f}`).join(', ')})`,
    );
  return {
    caFile: absolutePath(command, 'cacert', required(command, values, 'cacert')),
    certFile: absolutePath(command, 'cert', required(command, values, 'cert')),
    keyFile: absolutePath(command, 'key', required(command, values, 'key')),
  };
}

/** etcd's `--initial-cluster` format: name=url pairs, comma separated; a name may repeat for several URLs. */
export function parseInitialCluster(value: string): Array<{ name: string; url: string }> {
  return value.split(',').map((entry) => {
    const eq = entry.indexOf('=');
    const name = entry.slice(0, eq).trim();
    const url = entry.slice(eq + 1).trim();
    if (eq <= 0 || url === '')
      throw invalid(`restore: --initial-cluster entry ${JSON.stringify(entry)} is not NAME=URL`);
    httpUrl('restore', 'initial-cluster', url);
    return { name, url };
  });
}

function sha256Of(command: string, values: Values): string {
  const sha256 = required(command, values, 'sha256').toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(sha256)) throw invalid(`${command}: --sha256 must be 64 hexadecimal characters`);
  return sha256;
}

function parseVerify(args: string[]): VerifyArgs {
  const values = parseFlags('verify', VERIFY_OPTIONS, args);
  const source = location('verify', values);
  const sha256 = sha256Of('verify', values);
  const workDir = absolutePath('verify', 'work-dir', required('verify', values, 'work-dir')).replace(
    /\/+$/,
    '',
  );
  if (workDir === '') throw invalid('verify: --work-dir must not be the root directory');
  const revText = required('verify', values, 'hash-revision').trim();
  const hashRevision = Number(revText);
  if (!/^\d+$/.test(revText) || !Number.isSafeInteger(hashRevision) || hashRevision < 1)
    throw invalid(`verify: --hash-revision must be a positive integer, got ${JSON.stringify(revText)}`);
  return {
    command: 'verify',
    source,
    sha256,
    workDir,
    hashRevision,
    resultFile: resultFile('verify', values),
  };
}

function parseRestore(args: string[]): RestoreArgs {
  const values = parseFlags('restore', RESTORE_OPTIONS, args);
  const source = location('restore', values);
  const sha256 = sha256Of('restore', values);
  const dataDir = absolutePath('restore', 'data-dir', required('restore', values, 'data-dir'));
  if (dataDir.replace(/\/+$/, '') === '') throw invalid('restore: --data-dir must not be the root directory');
  const name = required('restore', values, 'name');
  const initialCluster = required('restore', values, 'initial-cluster');
  const advertise = required('restore', values, 'initial-advertise-peer-urls');
  const advertised = advertise
    .split(',')
    .map((u) => httpUrl('restore', 'initial-advertise-peer-urls', u.trim()));
  // etcdutl refuses a member whose advertised peer URLs differ from its --initial-cluster entries; say so up front.
  const listed = parseInitialCluster(initialCluster)
    .filter((m) => m.name === name)
    .map((m) => m.url);
  if (listed.length === 0)
    throw invalid(`restore: --initial-cluster has no entry for --name ${JSON.stringify(name)}`);
  if ([...listed].sort().join(',') !== [...advertised].sort().join(','))
    throw invalid(
      `restore: --initial-advertise-peer-urls ${advertise} differ from the --initial-cluster entries for ${name} (${listed.join(',')})`,
    );
  const bumpText = optional(values, 'bump-revision');
  const bumpRevision = bumpText === undefined ? DEFAULT_BUMP_REVISION : Number(bumpText);
  if (bumpText !== undefined && (!/^\d+$/.test(bumpText.trim()) || !Number.isSafeInteger(bumpRevision)))
    throw invalid(`restore: --bump-revision must be a non-negative integer, got ${JSON.stringify(bumpText)}`);
  return {
    command: 'restore',
    source,
    sha256,
    dataDir: dataDir.replace(/\/+$/, ''),
    name,
    initialCluster,
    initialAdvertisePeerUrls: advertise,
    initialClusterToken: required('restore', values, 'initial-cluster-token'),
    bumpRevision,
    resultFile: resultFile('restore', values),
  };
}

/** argv without node and the script: `[command, ...flags]`. */
export function parseAgentArgs(argv: string[]): AgentArgs {
  const [command, ...rest] = argv;
  if (command === 'snapshot') return parseSnapshot(rest);
  if (command === 'restore') return parseRestore(rest);
  if (command === 'verify') return parseVerify(rest);
  throw invalid(
    `${command === undefined ? 'no command given' : `unknown command ${JSON.stringify(command)}`}; expected snapshot, restore or verify`,
  );
}

/**
 * Where to write the result even when the arguments do not parse: the last well-formed --result-file,
 * else the default, so a bad command line still reaches the control side through the termination log.
 */
export function resultFileOf(argv: string[]): string {
  let file = DEFAULT_RESULT_FILE;
  argv.forEach((arg, i) => {
    const value = arg.startsWith('--result-file=') ? arg.slice('--result-file='.length) : undefined;
    const next = arg === '--result-file' ? argv[i + 1] : value;
    if (next !== undefined && isAbsolute(next)) file = next;
  });
  return file;
}
