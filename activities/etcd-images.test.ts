import { etcdImageFor, memberImage } from './etcd-images';

describe('etcdImageFor', () => {
  test.each([
    ['the newest 3.6 release has an image', '3.6.16', 'quay.io/coreos/etcd:v3.6.16'],
    ['an older 3.5 patch has an image', '3.5.26', 'quay.io/coreos/etcd:v3.5.26'],
    ['a 3.6 patch newer than any release has none', '3.6.99', undefined],
    ['an unsupported minor has none', '3.4.30', undefined],
    ['a malformed version has none', 'v3.6.16', undefined],
  ])('%s', (_name, version, want) => {
    expect(etcdImageFor(version)).toBe(want);
  });

  test('a custom repository is used as given', () => {
    expect(etcdImageFor('3.6.16', 'registry.example/etcd')).toBe('registry.example/etcd:v3.6.16');
  });
});

describe('memberImage', () => {
  const operator = (v: string) => etcdImageFor(v, 'quay.io/coreos/etcd');
  test.each([
    ["no spec.image: the operator's repository", { version: '3.6.16' }, 'quay.io/coreos/etcd:v3.6.16'],
    [
      'a mirror repository gets the version tag',
      { version: '3.5.26', image: { repository: 'registry.example.com:5000/mirror/etcd' } },
      'registry.example.com:5000/mirror/etcd:v3.5.26',
    ],
    [
      'a ref is used whole, digest and all',
      { version: '3.6.16', image: { ref: 'registry.example.com/etcd:v3.6.16@sha256:' + 'a'.repeat(64) } },
      'registry.example.com/etcd:v3.6.16@sha256:' + 'a'.repeat(64),
    ],
    [
      'an unknown version has no image, whatever the spec names',
      { version: '3.6.99', image: { ref: 'registry.example.com/etcd:v3.6.99' } },
      undefined,
    ],
    [
      'an unknown version with a mirror has none either',
      { version: '3.4.30', image: { repository: 'r/etcd' } },
      undefined,
    ],
  ])('%s', (_name, spec, want) => {
    expect(memberImage(spec, operator)).toBe(want);
  });
});
