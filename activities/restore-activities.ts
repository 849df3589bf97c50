// The restore's one side effect before the seed Pod exists: read the source (the named EtcdSnapshot) and build the seed's `restore` init container.
//
// Invariant: reads only; the result names Secrets, never their values (of a Secret only key names are looked at).
import type { KubernetesObject } from '@kubernetes/client-node';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { API_VERSION, ETCD_CLUSTER } from '../crds/etcd-cluster';
import type { EtcdSnapshot } from '../crds/etcd-snapshot';
import { ETCD_SNAPSHOT } from '../crds/etcd-snapshot';
import { peerURLFor } from '../crds/tls-names';
import type { KubeObjects } from './kube-objects';
import { clusterToken, DATA_DIR, ETCD_DATA_DIR } from './member-manifests';
import type { RestoreInit } from './restore-manifests';
import { credentialsProblem, resolveRestoreSource, restoreInit } from './restore-manifests';
import type { ClusterRef } from '../contracts/cluster-ref';

export interface RestoreActivityDeps {
  kube: KubeObjects;
  /** The project's image, which runs the agent. */
  agentImage: string;
}

export type RestorePreparation =
  | { state: 'ready'; init: RestoreInit; uri: string }
  | { state: 'waiting'; message: string }
  | { state: 'refused'; message: string };

export function createRestoreActivities(deps: RestoreActivityDeps) {
  return {
    /** The seed member's restore init container for spec.bootstrap.restore, or why there is none yet. */
    async prepareRestore(input: {
      ref: ClusterRef;
      spec: EtcdClusterSpec;
      member: string;
    }): Promise<RestorePreparation> {
      const { ref, member } = input;
      const source = input.spec.bootstrap?.restore?.source;
      if (!source) return { state: 'refused', message: 'spec.bootstrap.restore is not set' };
      const snapshot = source.snapshotRef
        ? await deps.kube.read<EtcdSnapshot & KubernetesObject>({
            apiVersion: API_VERSION,
            kind: ETCD_SNAPSHOT.kind,
            namespace: ref.namespace,
            name: source.snapshotRef.name,
          })
        : undefined;
      const sourceCluster =
        source.continuous && !source.continuous.cluster.uid
          ? await deps.kube.read<KubernetesObject>({
              apiVersion: API_VERSION,
              kind: ETCD_CLUSTER.kind,
              namespace: source.continuous.cluster.namespace ?? ref.namespace,
              name: source.continuous.cluster.name,
            })
          : undefined;
      const pointInTime = input.spec.bootstrap?.restore?.pointInTime;
      const resolved = resolveRestoreSource(ref.namespace, source, snapshot, {
        ...(pointInTime ? { pointInTime } : {}),
        ...(sourceCluster?.metadata?.uid ? { sourceUid: sourceCluster.metadata.uid } : {}),
      });
      if (resolved.state !== 'ready') return resolved;
      if (resolved.source.kind === 's3' || resolved.source.kind === 'continuous') {
        const secretName = resolved.source.secretName;
        const secret = await deps.kube.read<KubernetesObject & { data?: Record<string, string> }>({
          apiVersion: 'v1',
          kind: 'Secret',
          namespace: ref.namespace,
          name: secretName,
        });
        const problem = credentialsProblem(ref.namespace, secretName, secret);
        if (problem) return { state: 'waiting', message: problem };
      }
      return {
        state: 'ready',
        uri: resolved.source.uri,
        init: restoreInit({
          member,
          peerURL: peerURLFor(input.spec, ref, member),
          token: clusterToken(ref),
          dataDir: ETCD_DATA_DIR,
          dataVolume: { name: 'data', mountPath: DATA_DIR },
          image: deps.agentImage,
          source: resolved.source,
        }),
      };
    },
  };
}

export type RestoreActivities = ReturnType<typeof createRestoreActivities>;
