// The Upgrade operation's own side effects: restart one member by deleting its Pod (only while it still runs the old image), and the pre-upgrade EtcdSnapshot.
//
// Each is idempotent: a retried delete never touches a Pod already on the target image, and the snapshot's
// name is derived from the operation, so a retry finds the EtcdSnapshot it created.
import type { KubernetesObject } from '@kubernetes/client-node';
import { SnapshotReasons } from '../crds/conditions';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { API_VERSION, ETCD_CLUSTER } from '../crds/etcd-cluster';
import type { EtcdSnapshot } from '../crds/etcd-snapshot';
import { ETCD_SNAPSHOT } from '../crds/etcd-snapshot';
import { Labels } from '../crds/labels';
import type { KubeObjects } from './kube-objects';
import { deleteMemberPodUnlessDone, SERVICE_DRAIN_MS } from './member-pod-restart';
import { etcdVersionOfImage } from './upgrade-images';
import type { ClusterRef } from '../contracts/cluster-ref';

export interface UpgradeActivityDeps {
  kube: KubeObjects;
}

/** What the upgrade needs of its snapshot: still working, stored (with its URI), or failed (with why). */
export type PreUpgradeSnapshotState =
  | { phase: 'Running'; message: string }
  | { phase: 'Succeeded'; uri: string }
  | { phase: 'Failed'; reason: string; message: string };

/** `main-pre-upgrade-7`: the 7 is the operation's sequence number, so a retried upgrade takes a new snapshot. */
export function preUpgradeSnapshotName(cluster: string, operationSeq: number): string {
  return `${cluster}-pre-upgrade-${operationSeq}`;
}

export function preUpgradeSnapshot(input: {
  ref: ClusterRef;
  spec: EtcdClusterSpec;
  name: string;
}): EtcdSnapshot & { metadata: { ownerReferences: object[] } } {
  const { ref, spec, name } = input;
  if (!spec.backup)
    throw new Error('spec.backup is not set: there is nowhere to store a pre-upgrade snapshot');
  return {
    apiVersion: API_VERSION,
    kind: ETCD_SNAPSHOT.kind,
    metadata: {
      name,
      namespace: ref.namespace,
      labels: { [Labels.cluster]: ref.name },
      // Owned by the cluster: deleting the EtcdCluster deletes the object (the stored artifact stays).
      ownerReferences: [
        {
          apiVersion: API_VERSION,
          kind: ETCD_CLUSTER.kind,
          name: ref.name,
          uid: ref.uid,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: { clusterRef: { name: ref.name }, destination: spec.backup.destination },
  };
}

export function createUpgradeActivities(deps: UpgradeActivityDeps) {
  const { kube } = deps;
  const snapshotRef = (ref: ClusterRef, name: string) => ({
    apiVersion: API_VERSION,
    kind: ETCD_SNAPSHOT.kind,
    namespace: ref.namespace,
    name,
    plural: ETCD_SNAPSHOT.plural,
  });

  return {
    /**
     * Deletes the member's Pod so that it restarts on `version`, unless the Pod already runs that image (a
     * retry after the new Pod was created must not restart it again). The claim and the etcd member stay.
     */
    async deleteMemberPodForUpgrade(input: {
      ref: ClusterRef;
      member: string;
      version: string;
    }): Promise<'deleted' | 'absent' | 'already-upgraded'> {
      const result = await deleteMemberPodUnlessDone(
        kube,
        input.ref,
        input.member,
        (pod) =>
          etcdVersionOfImage(pod.spec?.containers?.find((c) => c.name === 'etcd')?.image) === input.version,
        SERVICE_DRAIN_MS,
      );
      return result === 'done' ? 'already-upgraded' : result;
    },

    /** Creates the pre-upgrade EtcdSnapshot (the watcher starts its workflow); an existing one of that name is kept. */
    async createPreUpgradeSnapshot(input: {
      ref: ClusterRef;
      spec: EtcdClusterSpec;
      name: string;
    }): Promise<'created' | 'exists'> {
      return kube.createIfAbsent(preUpgradeSnapshot(input) as KubernetesObject);
    },

    /** Reads the pre-upgrade snapshot's phase; a missing object counts as failed (someone deleted it). */
    async readPreUpgradeSnapshot(input: { ref: ClusterRef; name: string }): Promise<PreUpgradeSnapshotState> {
      const snap = await kube.read<KubernetesObject & Pick<EtcdSnapshot, 'status'>>(
        snapshotRef(input.ref, input.name),
      );
      if (!snap) {
        return {
          phase: 'Failed',
          reason: 'SnapshotDeleted',
          message: `EtcdSnapshot ${input.name} was deleted`,
        };
      }
      const ready = snap.status?.conditions?.find((c) => c.type === 'Ready');
      if (snap.status?.phase === 'Succeeded' && snap.status.artifact) {
        return { phase: 'Succeeded', uri: snap.status.artifact.uri };
      }
      if (snap.status?.phase === 'Failed') {
        return {
          phase: 'Failed',
          reason: ready?.reason ?? SnapshotReasons.JobFailed,
          message: ready?.message ?? 'the snapshot failed',
        };
      }
      return { phase: 'Running', message: ready?.message ?? 'waiting for the snapshot workflow to start' };
    },
  };
}

export type UpgradeActivities = ReturnType<typeof createUpgradeActivities>;
