// The cluster's Kubernetes side: references to its objects, its member Pods, and the activities that touch only Kubernetes (Services, claims, Pods deleted, status, Events).
import { ApplicationFailure } from '@temporalio/common';
import type { KubernetesObject } from '@kubernetes/client-node';
import { FailureTypes, Reasons } from '../crds/conditions';
import type { EtcdClusterSpec, EtcdClusterStatus } from '../crds/etcd-cluster';
import { API_VERSION, ETCD_CLUSTER } from '../crds/etcd-cluster';
import { Labels } from '../crds/labels';
import { claimName } from '../crds/names';
import type { KubeObjects } from './kube-objects';
import { clientService, disruptionBudget, memberClaim, peerService } from './member-manifests';
import type { EventRecorder } from './event-recorder';
import { recordOrDrop } from './event-recorder';
import type { restoreFailureOf } from './restore-manifests';
import { stageIssuedTLS } from './issued-tls';
import type { AutoTLSResult } from './auto-tls';
import { issueAutoTLS } from './auto-tls';
import type { IssuedTLSStage } from '../contracts/issued-tls';
import type { ClusterRef } from '../contracts/cluster-ref';
import type { EventReason } from '../contracts/event-reasons';

export interface PodLike extends KubernetesObject {
  metadata?: KubernetesObject['metadata'] & { deletionTimestamp?: Date | string };
  spec?: {
    containers?: { name?: string; image?: string }[];
    initContainers?: { name?: string; image?: string }[];
  };
  status?: {
    phase?: string;
    /** The Pod's address, once it has one (observation dials members there: member-addresses.ts). */
    podIP?: string;
    conditions?: {
      type: string;
      status: string;
      reason?: string;
      message?: string;
      lastTransitionTime?: Date | string;
    }[];
    containerStatuses?: {
      name?: string;
      state?: { waiting?: { reason?: string; message?: string }; terminated?: { message?: string } };
      lastState?: { terminated?: { message?: string; exitCode?: number } };
      restartCount?: number;
    }[];
    initContainerStatuses?: (NonNullable<Parameters<typeof restoreFailureOf>[0]> & {
      name: string;
      state?: { waiting?: { reason?: string; message?: string } };
    })[];
  };
}

export const podRef = (ref: ClusterRef, name: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  namespace: ref.namespace,
  name,
});
export const claimRef = (ref: ClusterRef, member: string) => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  namespace: ref.namespace,
  name: claimName(member),
});
export const clusterObjectRef = (ref: ClusterRef) => ({
  apiVersion: API_VERSION,
  kind: ETCD_CLUSTER.kind,
  namespace: ref.namespace,
  name: ref.name,
  plural: ETCD_CLUSTER.plural,
});

/** A timestamp from the API (a Date from the client, a string from a raw read) as RFC 3339. */
export const isoOf = (t: Date | string | undefined): string | undefined =>
  t === undefined ? undefined : new Date(t).toISOString();

/**
 * An object a former EtcdCluster of the same name owns (deleted, then created again): the garbage collector
 * removes it, so it counts as being deleted, never as one of this cluster's members.
 */
export const ownedByAnother = (ref: ClusterRef, o: KubernetesObject) => {
  const owners = (o.metadata?.ownerReferences ?? []).filter((r) => r.kind === ETCD_CLUSTER.kind);
  return owners.length > 0 && !owners.some((r) => r.uid === ref.uid);
};

export async function memberPods(kube: KubeObjects, ref: ClusterRef): Promise<PodLike[]> {
  return kube.list<PodLike>('v1', 'Pod', ref.namespace, `${Labels.cluster}=${ref.name}`);
}

/** The deps' objects, except that a refusal to adopt a foreign object is also told as an Event on the cluster. */
export function eventTellingKube(deps: { kube: KubeObjects; events: EventRecorder }): KubeObjects {
  const kube: KubeObjects = {
    ...deps.kube,
    async createIfAbsent(obj) {
      try {
        return await deps.kube.createIfAbsent(obj);
      } catch (err) {
        const owner = obj.metadata?.ownerReferences?.find((r) => r.kind === ETCD_CLUSTER.kind);
        if (err instanceof ApplicationFailure && err.type === FailureTypes.ObjectNotOwned && owner) {
          const ref = { namespace: obj.metadata?.namespace ?? '', name: owner.name, uid: owner.uid };
          const message = err.message;
          await recordOrDrop(() =>
            deps.events.record({ ref, type: 'Warning', reason: Reasons.ObjectNotOwned, message }),
          );
        }
        throw err;
      }
    },
  };
  return kube;
}

/** The activities that touch only Kubernetes objects: cluster Services, claims, Pods deleted, status, Events. */
export function createClusterKubeActivities(deps: {
  kube: KubeObjects;
  events: EventRecorder;
  /** Metrics hook: the status on the apiserver before a write and the status written (worker/operator-metrics.ts). */
  onStatusWritten?: (before: EtcdClusterStatus | undefined, after: EtcdClusterStatus) => void;
}) {
  const { kube } = deps;
  return {
    /**
     * The headless peer Service, the voters-only client Service and the PodDisruptionBudget, created with the spec's
     * additionalMetadata (kept in step later by syncAdditionalMetadata).
     */
    async ensureClusterObjects(input: {
      ref: ClusterRef;
      voters: number;
      additionalMetadata?: EtcdClusterSpec['additionalMetadata'];
    }): Promise<void> {
      const { ref, voters } = input;
      const spec = { additionalMetadata: input.additionalMetadata };
      const pdb = disruptionBudget(ref, voters, spec);
      // Three objects that do not depend on each other: asked together, one round trip instead of three or four on
      // every scale step. Every one is tried even if another fails; the first failure is the activity's.
      const settled = await Promise.allSettled([
        kube.createIfAbsent(peerService(ref, spec)),
        kube.createIfAbsent(clientService(ref, spec)),
        (async () => {
          if ((await kube.createIfAbsent(pdb)) === 'exists') {
            await kube.mergePatch(
              {
                apiVersion: 'policy/v1',
                kind: 'PodDisruptionBudget',
                namespace: ref.namespace,
                name: ref.name,
              },
              { spec: { minAvailable: pdb.spec.minAvailable } },
            );
          }
        })(),
      ]);
      const failed = settled.find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
    },

    /** `initialMembers`: the claim of one of a brand-new cluster's initial members starting together (their names). */
    async createMemberClaim(input: {
      ref: ClusterRef;
      spec: EtcdClusterSpec;
      member: string;
      initialMembers?: string[];
    }): Promise<void> {
      if (input.spec.storage.medium === 'Memory') return;
      await kube.createIfAbsent(memberClaim(input));
    },

    async deleteMemberPod(input: { ref: ClusterRef; member: string }): Promise<'deleted' | 'absent'> {
      return kube.deleteIfPresent(podRef(input.ref, input.member));
    },

    async deleteMemberClaim(input: { ref: ClusterRef; member: string }): Promise<'deleted' | 'absent'> {
      return kube.deleteIfPresent(claimRef(input.ref, input.member));
    },

    /**
     * Whether the EtcdCluster this workflow serves is going away: gone, being deleted, or replaced by a new
     * object of the same name. Compensation that needs members skips itself then (the members go with it).
     */
    async clusterGoingAway(input: { ref: ClusterRef }): Promise<boolean> {
      const current = await kube.read<KubernetesObject>(clusterObjectRef(input.ref));
      return (
        !current || current.metadata?.uid !== input.ref.uid || Boolean(current.metadata?.deletionTimestamp)
      );
    },

    /** Writes status through the status subresource; the workflow calls it only when status changed. */
    async writeStatus(input: {
      ref: ClusterRef;
      status: EtcdClusterStatus;
    }): Promise<'written' | 'cluster-gone'> {
      const current = await kube.read<KubernetesObject>(clusterObjectRef(input.ref));
      if (!current || current.metadata?.uid !== input.ref.uid) return 'cluster-gone';
      // A merge patch keeps fields it does not mention: a finished operation, and status.backup of a backup turned
      // off, must be cleared explicitly.
      const patch = { currentOperation: null, lastOperation: null, backup: null, ...input.status };
      await kube.mergePatch(clusterObjectRef(input.ref), { status: patch }, 'status');
      deps.onStatusWritten?.((current as { status?: EtcdClusterStatus }).status, input.status);
      return 'written';
    },

    /**
     * Takes one stage of moving cert-manager's TLS changes into the operator's copies (workflows/issued-tls-plan.ts),
     * judged again on the Secrets as they are now; returns the copies it changed (none: already done).
     */
    async stageIssuedTLS(input: {
      ref: ClusterRef;
      spec: EtcdClusterSpec;
      stage: IssuedTLSStage;
    }): Promise<string[]> {
      return stageIssuedTLS(kube, input.ref, input.spec, input.stage);
    },

    /**
     * spec.tls.mode Auto: makes the CA and certificates that are missing and renews those due (activities/auto-tls.ts);
     * returns their dates, when to look again, and what it changed, never a key or certificate.
     */
    async issueAutoTLS(input: {
      ref: ClusterRef;
      spec: EtcdClusterSpec;
    }): Promise<AutoTLSResult | undefined> {
      return issueAutoTLS(kube, input.ref, input.spec);
    },

    /** A Kubernetes Event on the EtcdCluster, so `kubectl describe` tells what the operator did. */
    async recordEvent(input: {
      ref: ClusterRef;
      type: 'Normal' | 'Warning';
      reason: EventReason;
      message: string;
    }) {
      return recordOrDrop(() => deps.events.record(input));
    },
  };
}
