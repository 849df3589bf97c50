// Deletes a member's Pod so that it restarts on the current spec, unless it is done already: the one restart rule of upgrades and rollouts.
//
// Idempotent: a retry after the new Pod was created finds it done and leaves it alone; a Pod already being
// deleted counts as deleted; the delete is preconditioned on the Pod's uid, so it can never hit a Pod created
// after the read. The claim and the etcd member stay.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { KubeObjects } from './kube-objects';
import type { ClusterRef } from '../contracts/cluster-ref';

export interface MemberPod extends KubernetesObject {
  spec?: { containers?: { name?: string; image?: string }[] };
  metadata?: KubernetesObject['metadata'] & { deletionTimestamp?: unknown };
}

export async function deleteMemberPodUnlessDone(
  kube: KubeObjects,
  ref: ClusterRef,
  member: string,
  done: (pod: MemberPod) => boolean,
): Promise<'deleted' | 'absent' | 'done'> {
  const podRef = { apiVersion: 'v1', kind: 'Pod', namespace: ref.namespace, name: member };
  const pod = await kube.read<MemberPod>(podRef);
  if (!pod) return 'absent';
  if (done(pod)) return 'done';
  if (pod.metadata?.deletionTimestamp) return 'deleted';
  return kube.deleteIfPresent(podRef, { ...(pod.metadata?.uid ? { uid: pod.metadata.uid } : {}) });
}
