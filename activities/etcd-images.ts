// Which etcd versions the operator knows an image for: the 3.5 and 3.6 releases up to the newest it was tested with.
import type { EtcdClusterSpec } from '../crds/etcd-cluster';

/** Newest patch per supported minor; a version above these, or another minor, has no known image. */
export const NEWEST_PATCH: Readonly<Record<string, number>> = { '3.5': 35, '3.6': 16 };

export const DEFAULT_ETCD_REPOSITORY = 'quay.io/coreos/etcd';

/** The image for `version` from `repository`, or undefined when no release of that number is known. */
export function etcdImageFor(version: string, repository = DEFAULT_ETCD_REPOSITORY): string | undefined {
  const m = /^(\d+)\.(\d+)\.(\d+)$/.exec(version);
  if (!m) return undefined;
  const newest = NEWEST_PATCH[`${m[1]}.${m[2]}`];
  if (newest === undefined || Number(m[3]) > newest) return undefined;
  return `${repository}:v${version}`;
}

/**
 * The image member Pods of `spec` run: `spec.image.ref` as given, `spec.image.repository` with the version's tag, or
 * else the operator's own choice (`defaultFor`). Undefined when the operator knows no release of `spec.version`,
 * whatever the spec names: the version is what upgrades are planned by.
 */
export function memberImage(
  spec: Pick<EtcdClusterSpec, 'version' | 'image'>,
  defaultFor: (version: string) => string | undefined,
): string | undefined {
  const operatorChoice = defaultFor(spec.version);
  if (operatorChoice === undefined) return undefined;
  if (spec.image?.ref) return spec.image.ref;
  if (spec.image?.repository) return `${spec.image.repository}:v${spec.version}`;
  return operatorChoice;
}
