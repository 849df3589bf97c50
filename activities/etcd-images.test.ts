import { etcdImageFor } from './etcd-images';

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
