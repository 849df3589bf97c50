// Turns a spec and an observation into the planner's inputs; what the workflow remembers between observations.
import type { ClusterObservation } from '../contracts/observation';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { defragConfigOf } from './defrag-plan';
import type { Desired, Observed } from './plan';
import type { ClusterRef } from '../contracts/cluster-ref';

export function desiredOf(
  ref: Pick<ClusterRef, 'name'>,
  spec: EtcdClusterSpec,
  versionKnown: boolean,
): Desired {
  return {
    cluster: ref.name,
    replicas: spec.replicas,
    medium: spec.storage.medium,
    versionKnown,
    version: spec.version,
    storageSize: String(spec.storage.size),
    ...(spec.auth ? { auth: true } : {}),
    ...(spec.bootstrap?.restore ? { restore: true } : {}),
    defrag: defragConfigOf(spec),
  };
}

/**
 * What to remember after an observation: the cluster id and member names whenever etcd answered (so a
 * later observation in which etcd does not answer can still tell "never created" from "lost"). Whether
 * the cluster is paused is the operation's outcome, not an observation, so it is kept as it was.
 */
export function recordedAfter(
  recorded: Observed['recorded'],
  observation: ClusterObservation,
): Observed['recorded'] {
  if (!observation.etcd) return recorded;
  return {
    ...recorded,
    clusterId: observation.etcd.clusterId,
    members: observation.etcd.members.map((m) => m.name).sort(),
  };
}
