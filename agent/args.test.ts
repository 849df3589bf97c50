// The agent's command line: accepted forms parse to typed arguments; every mistake is InvalidArguments with a message that names the flag.
import { AgentError } from './agent-error';
import { DEFAULT_BUMP_REVISION, DEFAULT_RESULT_FILE, parseAgentArgs, resultFileOf } from './args';
import { AgentFailureReasons } from '../contracts/agent-result';

const S3 = [
  '--s3-endpoint',
  'http://127.0.0.1:9000',
  '--s3-bucket',
  'backups',
  '--s3-key',
  'prod/main/2026.db',
  '--s3-region',
  'us-east-1',
];
const SNAP = ['snapshot', '--endpoint', 'http://main-0.main-peer.prod.svc:2379'];
const SHA = 'ab'.repeat(32);
const MEMBER = [
  '--name',
  'main-0',
  '--initial-cluster',
  'main-0=http://main-0.peer:2380',
  '--initial-advertise-peer-urls',
  'http://main-0.peer:2380',
  '--initial-cluster-token',
  'prod-main-2',
];
const RESTORE = [
  'restore',
  '--file',
  '/snap/x.db',
  '--sha256',
  SHA,
  '--data-dir',
  '/var/lib/etcd/data',
  ...MEMBER,
];

const VERIFY = ['verify', ...S3, '--sha256', SHA, '--work-dir', '/work/', '--hash-revision', '456'];

describe('accepted command lines', () => {
  it('a verify of an S3 object hashes the given revision in its work dir', () => {
    expect(parseAgentArgs(VERIFY)).toEqual({
      command: 'verify',
      source: {
        kind: 's3',
        s3: {
          endpoint: 'http://127.0.0.1:9000',
          bucket: 'backups',
          key: 'prod/main/2026.db',
          region: 'us-east-1',
          forcePathStyle: false,
        },
      },
      sha256: SHA,
      workDir: '/work',
      hashRevision: 456,
      resultFile: DEFAULT_RESULT_FILE,
    });
  });

  it('a snapshot to S3 reports s3://bucket/key and writes to the termination log by default', () => {
    expect(parseAgentArgs([...SNAP, ...S3])).toEqual({
      command: 'snapshot',
      endpoint: 'http://main-0.main-peer.prod.svc:2379',
      destination: {
        kind: 's3',
        s3: {
          endpoint: 'http://127.0.0.1:9000',
          bucket: 'backups',
          key: 'prod/main/2026.db',
          region: 'us-east-1',
          forcePathStyle: false,
        },
      },
      uri: 's3://backups/prod/main/2026.db',
      resultFile: DEFAULT_RESULT_FILE,
    });
  });

  it('--s3-force-path-style, --uri and --result-file are honoured', () => {
    const args = parseAgentArgs([
      ...SNAP,
      ...S3,
      '--s3-force-path-style',
      '--uri',
      'pvc://claim/x.db',
      '--result-file=/tmp/r',
    ]);
    expect(args).toMatchObject({
      uri: 'pvc://claim/x.db',
      resultFile: '/tmp/r',
      destination: { kind: 's3', s3: { forcePathStyle: true } },
    });
  });

  it('a snapshot to a file reports file://PATH', () => {
    expect(parseAgentArgs([...SNAP, '--file', '/backups/a.db'])).toMatchObject({
      destination: { kind: 'file', path: '/backups/a.db' },
      uri: 'file:///backups/a.db',
    });
  });

  it('a restore defaults --bump-revision to 1e9, lowercases the sha256 and drops a trailing slash of the data dir', () => {
    const args = parseAgentArgs([
      'restore',
      '--file',
      '/snap/x.db',
      '--sha256',
      SHA.toUpperCase(),
      '--data-dir',
      '/var/lib/etcd/data/',
      ...MEMBER,
    ]);
    expect(args).toMatchObject({
      command: 'restore',
      source: { kind: 'file', path: '/snap/x.db' },
      sha256: SHA,
      dataDir: '/var/lib/etcd/data',
      name: 'main-0',
      initialClusterToken: 'prod-main-2',
      bumpRevision: DEFAULT_BUMP_REVISION,
    });
  });

  it('a restore from S3 with an explicit --bump-revision', () => {
    expect(
      parseAgentArgs([
        ...RESTORE.filter((a) => a !== '--file' && a !== '/snap/x.db'),
        ...S3,
        '--bump-revision',
        '5',
      ]),
    ).toMatchObject({
      source: { kind: 's3', s3: { bucket: 'backups' } },
      bumpRevision: 5,
    });
  });

  it('a member may advertise several peer URLs when --initial-cluster lists them all', () => {
    const args = parseAgentArgs([
      ...RESTORE.slice(0, 7),
      '--name',
      'a',
      '--initial-cluster',
      'a=http://h1:2380,a=http://h2:2380,b=http://h3:2380',
      '--initial-advertise-peer-urls',
      'http://h2:2380,http://h1:2380',
      '--initial-cluster-token',
      't',
    ]);
    expect(args).toMatchObject({ name: 'a' });
  });
});

const BAD: Array<[string, string[], RegExp]> = [
  ['no command at all', [], /no command given; expected snapshot, restore or verify/],
  ['an unknown command', ['backup'], /unknown command "backup"/],
  ['an unknown flag', [...SNAP, ...S3, '--bogus'], /Unknown option '--bogus'/],
  ['a flag without its value', ['snapshot', '--endpoint'], /--endpoint/],
  ['a positional argument', [...SNAP, ...S3, 'extra'], /extra/],
  ['no --endpoint', ['snapshot', ...S3], /--endpoint is required/],
  [
    'an --endpoint that is not a URL',
    ['snapshot', '--endpoint', 'main-0 port 2379', ...S3],
    /--endpoint "main-0 port 2379" is not a URL/,
  ],
  [
    'an --endpoint with a non-http scheme',
    ['snapshot', '--endpoint', 'unix:///run/etcd.sock', ...S3],
    /--endpoint must be an http/,
  ],
  ['no destination', SNAP, /a destination is required/],
  ['both S3 and a file', [...SNAP, ...S3, '--file', '/x.db'], /either --s3-\* flags or --file, not both/],
  ['S3 without a bucket', [...SNAP, ...S3.slice(0, 2), ...S3.slice(4)], /--s3-bucket is required/],
  ['S3 without a key', [...SNAP, ...S3.slice(0, 4), ...S3.slice(6)], /--s3-key is required/],
  ['S3 without a region', [...SNAP, ...S3.slice(0, 6)], /--s3-region is required/],
  [
    'an invalid bucket name',
    [...SNAP, ...S3.slice(0, 2), '--s3-bucket', 'Not_A_Bucket', ...S3.slice(4)],
    /not a valid bucket name/,
  ],
  [
    'a key over 1024 bytes',
    [...SNAP, ...S3.slice(0, 4), '--s3-key', 'k'.repeat(1025), ...S3.slice(6)],
    /over S3's 1024-byte limit/,
  ],
  ['a relative --file', [...SNAP, '--file', 'snap.db'], /--file must be an absolute path/],
  [
    'a relative --result-file',
    [...SNAP, ...S3, '--result-file', 'out'],
    /--result-file must be an absolute path/,
  ],
  ['an empty --uri', [...SNAP, ...S3, '--uri', ''], /--uri must not be empty/],
  ['verify without a source', ['verify', '--sha256', SHA], /a source is required/],
  ['verify without --work-dir', VERIFY.slice(0, -4).concat(VERIFY.slice(-2)), /--work-dir is required/],
  ['verify with a relative --work-dir', VERIFY.map((a) => (a === '/work/' ? 'work' : a)), /absolute path/],
  ['verify without --hash-revision', VERIFY.slice(0, -2), /--hash-revision is required/],
  ['verify at revision 0', VERIFY.map((a) => (a === '456' ? '0' : a)), /--hash-revision must be a positive/],
  ['verify with a short --sha256', VERIFY.map((a) => (a === SHA ? 'abc' : a)), /verify: --sha256 must be 64/],
  ['restore without --sha256', RESTORE.filter((a, i) => i !== 3 && i !== 4), /--sha256 is required/],
  [
    'restore with a short --sha256',
    RESTORE.map((a) => (a === SHA ? 'abc' : a)),
    /--sha256 must be 64 hexadecimal/,
  ],
  ['restore without --data-dir', RESTORE.filter((a, i) => i !== 5 && i !== 6), /--data-dir is required/],
  ['restore into /', RESTORE.map((a) => (a === '/var/lib/etcd/data' ? '/' : a)), /must not be the root/],
  ['restore without --initial-cluster-token', RESTORE.slice(0, -2), /--initial-cluster-token is required/],
  [
    'restore with a malformed --initial-cluster',
    RESTORE.map((a) => (a === 'main-0=http://main-0.peer:2380' ? 'main-0' : a)),
    /entry "main-0" is not NAME=URL/,
  ],
  [
    'restore whose --name is not in --initial-cluster',
    RESTORE.map((a) => (a === 'main-0' ? 'main-9' : a)),
    /no entry for --name "main-9"/,
  ],
  [
    'restore whose advertised URL differs from --initial-cluster',
    RESTORE.map((a) => (a === 'http://main-0.peer:2380' ? 'http://other:2380' : a)),
    /differ from the --initial-cluster entries/,
  ],
  ['a negative --bump-revision', [...RESTORE, '--bump-revision', '-1'], /--bump-revision/],
  [
    'a fractional --bump-revision',
    [...RESTORE, '--bump-revision', '1.5'],
    /--bump-revision must be a non-negative integer/,
  ],
];

describe('rejected command lines are InvalidArguments', () => {
  it.each(BAD)('%s', (_name, argv, message) => {
    let caught: unknown;
    try {
      parseAgentArgs(argv);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(AgentError);
    expect((caught as AgentError).reason).toBe(AgentFailureReasons.InvalidArguments);
    expect((caught as AgentError).message).toMatch(message);
  });
});

describe('resultFileOf finds where to report even when parsing fails', () => {
  it.each([
    ['the default when no --result-file is given', ['snapshot', '--bogus'], DEFAULT_RESULT_FILE],
    ['--result-file PATH', ['snapshot', '--bogus', '--result-file', '/tmp/r'], '/tmp/r'],
    ['--result-file=PATH', ['snapshot', '--result-file=/tmp/r2', '--bogus'], '/tmp/r2'],
    ['the default when the value is relative', ['snapshot', '--result-file', 'r'], DEFAULT_RESULT_FILE],
    ['the default when the value is missing', ['snapshot', '--result-file'], DEFAULT_RESULT_FILE],
  ])('%s', (_name, argv, file) => {
    expect(resultFileOf(argv)).toBe(file);
  });
});

describe('client TLS flags of a snapshot', () => {
  it('--cacert, --cert and --key become the files of the client certificate', () => {
    const args = parseAgentArgs([
      ...SNAP,
      ...S3,
      '--cacert',
      '/tls/ca.crt',
      '--cert',
      '/tls/tls.crt',
      '--key',
      '/tls/tls.key',
    ]);
    expect(args).toMatchObject({
      command: 'snapshot',
      tls: { caFile: '/tls/ca.crt', certFile: '/tls/tls.crt', keyFile: '/tls/tls.key' },
    });
  });

  it.each([
    [
      'only --cacert',
      ['--cacert', '/tls/ca.crt'],
      /--cacert, --cert and --key go together \(got only --cacert\)/,
    ],
    [
      'a relative --key',
      ['--cacert', '/a', '--cert', '/b', '--key', 'tls.key'],
      /--key must be an absolute path/,
    ],
  ])('%s is refused', (_name, extra, message) => {
    expect(() => parseAgentArgs([...SNAP, ...S3, ...extra])).toThrow(message);
  });
});
