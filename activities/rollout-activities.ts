// The Rollout operation's side effects: restart a member whose Pod is out of date, patch Pod metadata in place, grow a claim.
//
// Each looks before it acts, so a retry after the effect finds it done: a Pod already carrying the wanted
// template hash is not deleted again, metadata already applied is not patched, a claim already asking
// for the size is not patched.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { quantityLess } from '../crds/quantity';
import { claimName } from '../crds/names';
import type { KubeObjects } from './kube-objects';
import { deleteMemberPodUnlessDone, SERVICE_DRAIN_MS } from './member-pod-restart';
import { memberLabels } from './member-manifests';
import type { ClaimLike } from './rollout-observation';
import { claimStorageOf, readStorageClasses } from './rollout-observation';
import { podMetadataRecord, RolloutAnnotations } from './rollout-template';
import { podUserMetadata } from './additional-metadata';
import { syncAdditionalMetadata } from './additional-metadata-sync';
import type { ClusterRef } from '../contracts/cluster-ref';

export interface RolloutActivityDeps {
  kube: KubeObjects;
}

interface PodLike extends KubernetesObject {
  metadata?: KubernetesObject['metadata'] & { deletionTimestamp?: unknown };
}

/** The user labels/annotations a Pod had applied, from its record annotation (nothing when it has none). */
function appliedMetadata(pod: PodLike): {
  labels: Record<string, string>;
  annotations: Record<string, string>;
} {
  try {
    const parsed = JSON.parse(pod.metadata?.annotations?.[RolloutAnnotations.podMetadata] ?? '{}') as {
      labels?: Record<string, string>;
      annotations?: Record<string, string>;
    };
    return { labels: parsed.labels ?? {}, annotations: parsed.annotations ?? {} };
  } catch {
    return { labels: {}, annotations: {} };
  }
}

/**
 * The merge patch that makes a Pod's metadata carry the spec's user metadata (additionalMetadata with podLabels and
 * podAnnotations on top): keys the spec dropped are removed (null), the operator's own keys are never set or removed
 * from here.
 */
export function metadataPatch(
  pod: PodLike,
  spec: EtcdClusterSpec,
  operatorLabels: ReadonlySet<string>,
): { labels: Record<string, string | null>; annotations: Record<string, string | null> } {
  const before = appliedMetadata(pod);
  const wanted = podUserMetadata(spec);
  const ownAnnotation = (k: string) => Object.values<string>(RolloutAnnotations).includes(k);
  const diff = (
    old: Record<string, string>,
    wanted: Record<string, string>,
    owned: (k: string) => boolean,
  ) => {
    const patch: Record<string, string | null> = {};
    for (const k of Object.keys(old)) if (!(k in wanted) && !owned(k)) patch[k] = null;
    for (const [k, v] of Object.entries(wanted)) if (!owned(k)) patch[k] = v;
    return patch;
  };
  return {
    labels: diff(before.labels, wanted.labels, (k) => operatorLabels.has(k)),
    annotations: {
      ...diff(before.annotations, wanted.annotations, ownAnnotation),
      [RolloutAnnotations.podMetadata]: podMetadataRecord(spec),
    },
  };
}

export function createRolloutActivities(deps: RolloutActivityDeps) {
  const { kube } = deps;
  const podRef = (ref: ClusterRef, member: string) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    namespace: ref.namespace,
    name: member,
  });
  const claimRef = (ref: ClusterRef, member: string) => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    namespace: ref.namespace,
    name: claimName(member),
  });

  return {
    /**
     * Deletes the member's Pod so that RecreatePod starts it again on the spec's template (same claim, same
     * member id), unless the Pod already carries that template's hash: a retry never restarts a rolled member.
     */
    async deleteMemberPodForRollout(input: {
      ref: ClusterRef;
      member: string;
      hash: string;
    }): Promise<'deleted' | 'absent' | 'already-rolled'> {
      const result = await deleteMemberPodUnlessDone(
        kube,
        input.ref,
        input.member,
        (pod) => pod.metadata?.annotations?.[RolloutAnnotations.podTemplateHash] === input.hash,
        SERVICE_DRAIN_MS,
      );
      return result === 'done' ? 'already-rolled' : result;
    },

    /**
     * Patches the user metadata (additionalMetadata, podLabels/podAnnotations on top) onto the running Pod:
     * metadata needs no restart. The cluster's other objects are brought to the spec's additionalMetadata first.
     */
    async patchMemberPodMetadata(input: {
      ref: ClusterRef;
      spec: EtcdClusterSpec;
      member: string;
    }): Promise<'patched' | 'current' | 'absent'> {
      const { ref, spec, member } = input;
      await syncAdditionalMetadata(kube, ref, spec);
      const pod = await kube.read<PodLike>(podRef(ref, member));
      if (!pod || pod.metadata?.deletionTimestamp) return 'absent';
      if (pod.metadata?.annotations?.[RolloutAnnotations.podMetadata] === podMetadataRecord(spec))
        return 'current';
      const { podLabels: _l, additionalMetadata: _m, ...withoutLabels } = spec;
      const operatorLabels = new Set(
        Object.keys(memberLabels({ ref, spec: withoutLabels, member, role: 'voter' })),
      );
      await kube.mergePatch(podRef(ref, member), { metadata: metadataPatch(pod, spec, operatorLabels) });
      return 'patched';
    },

    /**
     * Asks for a bigger volume: patches the claim's storage request to `size`. Refused (nothing touched)
     * when the claim's StorageClass does not allow expansion; the planner says so before it gets here, this
     * is the check at the moment of the patch.
     */
    async expandMemberClaim(input: {
      ref: ClusterRef;
      member: string;
      size: string;
    }): Promise<{ result: 'expanded' | 'already' | 'absent' } | { result: 'refused'; message: string }> {
      const claim = await kube.read<ClaimLike>(claimRef(input.ref, input.member));
      if (!claim) return { result: 'absent' };
      const storage = claimStorageOf(claim, await readStorageClasses(kube, [claim]));
      if (!quantityLess(storage.requested, input.size)) return { result: 'already' };
      if (storage.expansion !== 'Allowed') {
        return {
          result: 'refused',
          message: `claim ${claimName(input.member)} cannot grow: ${storage.expansion}`,
        };
      }
      await kube.mergePatch(claimRef(input.ref, input.member), {
        spec: { resources: { requests: { storage: input.size } } },
      });
      return { result: 'expanded' };
    },
  };
}

export type RolloutActivities = ReturnType<typeof createRolloutActivities>;
