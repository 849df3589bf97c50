// Image references to etcd versions: the tags the operator and the common registries use, and what names no version.
import { etcdVersionOfImage } from './upgrade-images';

test.each([
  ['quay.io/coreos/etcd:v3.6.16', '3.6.16'],
  ['quay.io/coreos/etcd:v3.5.35', '3.5.35'],
  ['registry.k8s.io/etcd:3.6.16-0', '3.6.16'],
  ['gcr.io/etcd-development/etcd:v3.6.16@sha256:abc', '3.6.16'],
  ['localhost:5000/etcd:v3.6.16', '3.6.16'],
  ['localhost:5000/etcd', undefined],
  ['quay.io/coreos/etcd@sha256:abc', undefined],
  ['quay.io/coreos/etcd:latest', undefined],
  ['quay.io/coreos/etcd:v3.6', undefined],
  [undefined, undefined],
])('%s runs %s', (image, version) => {
  expect(etcdVersionOfImage(image)).toBe(version);
});
