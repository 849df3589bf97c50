// The bench's floor: a member's Pod, claim and peer Service exactly as the operator builds them (activities/member-manifests.ts, so image, volume and probes cannot drift), minus what ties them to an operator: no owner reference, no operator label.
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { memberClaim, memberPod, peerService } from '../activities/member-manifests';

/** The only label of floor objects: the operator's watcher selects managed-by=etcd-conductor and never sees them. */
export const FLOOR_LABEL = 'bench.etcd.conductor.dev/floor';

export interface FloorMemberInput {
  namespace: string;
  /** Plays the EtcdCluster's name: members are reached at `<member>.<cluster>-peer.<namespace>.svc` as real ones are. */
  cluster: string;
  /** The spec of the operator's cluster in the same run, as the apiserver defaulted it. */
  spec: EtcdClusterSpec;
  image: string;
  member: string;
  initialClusterState: 'new' | 'existing';
  initialCluster: string;
}

// Nothing owns floor objects: an owner reference to an absent uid would have the garbage collector delete them.
const ref = (namespace: string, cluster: string) => ({ namespace, name: cluster, uid: 'bench-floor' });

export function floorPod(input: FloorMemberInput) {
  const pod = memberPod({ ...input, ref: ref(input.namespace, input.cluster), role: 'voter' });
  const labels = { [FLOOR_LABEL]: input.cluster };
  return {
    ...pod,
    metadata: { name: pod.metadata.name, namespace: pod.metadata.namespace, labels },
    spec: {
      ...pod.spec,
      // The operator's default spreading, on the floor label.
      affinity: {
        podAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            {
              weight: 100,
              podAffinityTerm: {
                topologyKey: 'kubernetes.io/hostname',
                labelSelector: { matchLabels: labels },
              },
            },
          ],
        },
      },
    },
  };
}

export function floorClaim(input: Pick<FloorMemberInput, 'namespace' | 'cluster' | 'spec' | 'member'>) {
  const claim = memberClaim({ ...input, ref: ref(input.namespace, input.cluster) });
  return {
    ...claim,
    metadata: {
      name: claim.metadata.name,
      namespace: claim.metadata.namespace,
      labels: { [FLOOR_LABEL]: input.cluster },
    },
  };
}

export function floorPeerService(namespace: string, cluster: string) {
  const svc = peerService(ref(namespace, cluster));
  const labels = { [FLOOR_LABEL]: cluster };
  return {
    ...svc,
    metadata: { name: svc.metadata.name, namespace: svc.metadata.namespace, labels },
    spec: { ...svc.spec, selector: labels },
  };
}
