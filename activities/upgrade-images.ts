// Reads the etcd version a member Pod will run from its image reference, so an upgrade knows which members still need a restart.

/**
 * `quay.io/coreos/etcd:v3.6.16` -> `3.6.16`; registry.k8s.io's `etcd:3.6.16-0` -> `3.6.16`. Undefined for a
 * digest-only or untagged image, or a tag that names no version: such a member is never restarted for an
 * upgrade, because nothing says it runs another version.
 */
export function etcdVersionOfImage(image: string | undefined): string | undefined {
  if (!image) return undefined;
  const withoutDigest = image.split('@')[0] ?? image;
  const slash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.lastIndexOf(':');
  // A colon before the last slash belongs to a registry host's port, not to a tag.
  if (colon <= slash) return undefined;
  const m = /^v?(\d+\.\d+\.\d+)(?:-\d+)?$/.exec(withoutDigest.slice(colon + 1));
  return m?.[1];
}
