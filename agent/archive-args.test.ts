// `etcd-conductor archive`'s command line: the accepted form parses to typed arguments; each mistake names its flag.
import { AgentError } from './agent-error';
import { parseArchiveArgs } from './archive-args';
import { AgentFailureReasons } from '../contracts/agent-result';

const GOOD = [
  '--endpoint',
  'https://main-client.prod.svc:2379',
  '--s3-endpoint',
  'http://minio:9000',
  '--s3-bucket',
  'backups',
  '--s3-key',
  'etcd/main',
  '--s3-region',
  'us-east-1',
  '--s3-force-path-style',
  '--cluster-uid',
  '0b7e4b1e-7c1f-4f7e-a7a4-1f6c8f3d2a10',
  '--work-dir',
  '/work/',
  '--full-snapshot-interval-seconds',
  '3600',
  '--max-lag-seconds',
  '5',
  '--retention-seconds',
  '604800',
];

const without = (flag: string, takesValue = true) => {
  const i = GOOD.indexOf(flag);
  return [...GOOD.slice(0, i), ...GOOD.slice(i + (takesValue ? 2 : 1))];
};
const replaced = (flag: string, value: string) => GOOD.map((a, i) => (GOOD[i - 1] === flag ? value : a));

test('the full command line parses to typed arguments', () => {
  expect(parseArchiveArgs(GOOD)).toEqual({
    command: 'archive',
    endpoint: 'https://main-client.prod.svc:2379',
    destination: {
      endpoint: 'http://minio:9000',
      bucket: 'backups',
      key: 'etcd/main',
      region: 'us-east-1',
      forcePathStyle: true,
    },
    clusterUid: '0b7e4b1e-7c1f-4f7e-a7a4-1f6c8f3d2a10',
    workDir: '/work',
    fullSnapshotIntervalSeconds: 3600,
    maxLagSeconds: 5,
    retentionSeconds: 604800,
  });
});

test('client TLS files come through as a set', () => {
  const args = parseArchiveArgs([
    ...GOOD,
    '--cacert',
    '/tls/ca.crt',
    '--cert',
    '/tls/tls.crt',
    '--key',
    '/tls/tls.key',
  ]);
  expect(args.tls).toEqual({ caFile: '/tls/ca.crt', certFile: '/tls/tls.crt', keyFile: '/tls/tls.key' });
});

test.each<[string, string[], RegExp]>([
  ['no endpoint', without('--endpoint'), /archive: --endpoint is required/],
  [
    'a file destination',
    [
      ...without('--s3-endpoint').filter(
        (a) => !a.startsWith('--s3') && !['backups', 'etcd/main', 'us-east-1'].includes(a),
      ),
      '--file',
      '/x',
    ],
    /S3 only/,
  ],
  ['no cluster uid', without('--cluster-uid'), /--cluster-uid is required/],
  ['a uid with a slash', replaced('--cluster-uid', 'a/b'), /--cluster-uid "a\/b" is not a uid/],
  ['a relative work dir', replaced('--work-dir', 'work'), /--work-dir must be an absolute path/],
  [
    'a lag of zero',
    replaced('--max-lag-seconds', '0'),
    /--max-lag-seconds must be a whole number of seconds, at least 1, got "0"/,
  ],
  [
    'a fractional interval',
    replaced('--full-snapshot-interval-seconds', '1.5'),
    /--full-snapshot-interval-seconds must be a whole number/,
  ],
  [
    'retention shorter than the full snapshot interval',
    replaced('--retention-seconds', '3600').map((a, i, all) =>
      all[i - 1] === '--full-snapshot-interval-seconds' ? '7200' : a,
    ),
    /--retention-seconds \(3600\) must be at least --full-snapshot-interval-seconds \(7200\)/,
  ],
  [
    'half the TLS files',
    [...GOOD, '--cacert', '/tls/ca.crt'],
    /archive: --cacert, --cert and --key go together/,
  ],
  [
    'a result file (it never ends with one)',
    [...GOOD, '--result-file', '/tmp/r'],
    /--result-file is not used/,
  ],
  ['an unknown flag', [...GOOD, '--retention', '7d'], /^archive: .*Unknown option '--retention'/],
])('%s is InvalidArguments naming the flag', (_name, argv, message) => {
  let caught: unknown;
  try {
    parseArchiveArgs(argv);
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(AgentError);
  expect((caught as AgentError).reason).toBe(AgentFailureReasons.InvalidArguments);
  expect((caught as AgentError).message).toMatch(message);
});
