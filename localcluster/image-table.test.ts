import { createImageTable, etcdVersionOfTag, parseImage } from './image-table';
import { OPERATOR_NODE_FLAGS } from '../contracts/node-flags';

const table = createImageTable({
  repoRoot: '/repo',
  etcdBinDirs: { '3.6.16': '/c/etcd-3.6.16/bin', '3.5.35': '/c/etcd-3.5.35/bin' },
  projectEtcdVersion: '3.6.16',
});

describe('parseImage', () => {
  const cases: Array<[string, string, { repository: string; tag: string | undefined }]> = [
    [
      'a tagged image splits at the last colon',
      'quay.io/coreos/etcd:v3.6.16',
      { repository: 'quay.io/coreos/etcd', tag: 'v3.6.16' },
    ],
    [
      'a registry port is not a tag',
      'localhost:5000/etcd',
      { repository: 'localhost:5000/etcd', tag: undefined },
    ],
    [
      'a digest is ignored',
      'quay.io/coreos/etcd:v3.5.35@sha256:abc',
      { repository: 'quay.io/coreos/etcd', tag: 'v3.5.35' },
    ],
  ];
  it.each(cases)('%s', (_n, image, expected) => expect(parseImage(image)).toEqual(expected));
});

describe('etcdVersionOfTag', () => {
  const cases: Array<[string, string, string | undefined, string | undefined]> = [
    ['quay tags carry a v prefix', 'quay.io/coreos/etcd', 'v3.6.16', '3.6.16'],
    ['registry.k8s.io tags carry a -N build suffix', 'registry.k8s.io/etcd', '3.5.35-0', '3.5.35'],
    [
      'a registry.k8s.io tag with a v prefix is not an etcd version',
      'registry.k8s.io/etcd',
      'v3.5.35',
      undefined,
    ],
    ['latest is not a version', 'quay.io/coreos/etcd', 'latest', undefined],
    ['no tag is no version', 'quay.io/coreos/etcd', undefined, undefined],
  ];
  it.each(cases)('%s', (_n, repo, tag, expected) => expect(etcdVersionOfTag(repo, tag)).toBe(expected));
});

describe('createImageTable', () => {
  const cases: Array<[string, string, string | undefined]> = [
    ['quay etcd 3.6 runs the built etcd 3.6', 'quay.io/coreos/etcd:v3.6.16', '/c/etcd-3.6.16/bin/etcd'],
    [
      'gcr etcd 3.5 runs the built etcd 3.5',
      'gcr.io/etcd-development/etcd:v3.5.35',
      '/c/etcd-3.5.35/bin/etcd',
    ],
    ['registry.k8s.io etcd runs by its -0 tag', 'registry.k8s.io/etcd:3.6.16-0', '/c/etcd-3.6.16/bin/etcd'],
    ['an etcd version that was not built is an unknown image', 'quay.io/coreos/etcd:v3.4.30', undefined],
    [
      'the project image with any tag runs the agent with the pinned Node',
      'ghcr.io/etcd-conductor/etcd-conductor:dev',
      '/repo/node_modules/.bin/node',
    ],
    [
      'the project image without a tag is still the project image',
      'ghcr.io/etcd-conductor/etcd-conductor',
      '/repo/node_modules/.bin/node',
    ],
    ['any other image is unknown', 'busybox:1.36', undefined],
  ];
  it.each(cases)('%s', (_n, image, firstArg) => expect(table(image)?.entrypoint[0]).toBe(firstArg));

  it('offers etcd tools by name and by their /usr/local/bin path', () => {
    const etcd = table('quay.io/coreos/etcd:v3.6.16');
    expect(etcd?.commands.etcdctl).toEqual(['/c/etcd-3.6.16/bin/etcdctl']);
    expect(etcd?.commands['/usr/local/bin/etcdutl']).toEqual(['/c/etcd-3.6.16/bin/etcdutl']);
    expect(etcd?.path).toEqual(['/c/etcd-3.6.16/bin']);
  });
  it('gives the project image the agent entrypoint and etcdutl for restores', () => {
    const img = table('ghcr.io/etcd-conductor/etcd-conductor:v0.1.0');
    expect(img?.entrypoint).toEqual(['/repo/node_modules/.bin/node', '/repo/dist/agent/main.js']);
    expect(img?.commands.etcdutl).toEqual(['/c/etcd-3.6.16/bin/etcdutl']);
    expect(img?.commands.etcd).toEqual(['/c/etcd-3.6.16/bin/etcd']);
  });
  const programs: Array<[string, string, string[]]> = [
    ['the agent by name', 'etcd-conductor', ['/repo/node_modules/.bin/node', '/repo/dist/agent/main.js']],
    [
      'the agent by its absolute path',
      '/usr/local/bin/etcd-conductor',
      ['/repo/node_modules/.bin/node', '/repo/dist/agent/main.js'],
    ],
    [
      "the operator by name (the chart's command)",
      'etcd-conductor-operator',
      ['/repo/node_modules/.bin/node', ...OPERATOR_NODE_FLAGS, '/repo/dist/worker/main.js'],
    ],
    [
      'the operator by its absolute path',
      '/usr/local/bin/etcd-conductor-operator',
      ['/repo/node_modules/.bin/node', ...OPERATOR_NODE_FLAGS, '/repo/dist/worker/main.js'],
    ],
  ];
  it.each(programs)('the project image runs %s', (_n, command, argv) =>
    expect(table('ghcr.io/etcd-conductor/etcd-conductor:v0.1.0')?.commands[command]).toEqual(argv),
  );
});
