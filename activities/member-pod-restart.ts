// Deletes a member's Pod so that it restarts on the current spec, unless it is done already: the one restart rule of upgrades and rollouts.
//
// A serving member leaves the client Service before it is stopped: its role label becomes `draining` (the client
// Service and the PodDisruptionBudget select voters), and the Pod is deleted only SERVICE_DRAIN_MS later, while its
// etcd still answers. Deleted at once, the Pod's address goes away while Service routing still sends new
// connections to it (kube-proxy rewrites its rules at most once a second, after the EndpointSlice has changed), and a
// connection to an address nobody holds is not refused: it hangs until the client gives up. Clients the stopping
// member drops reconnect at exactly that moment.
//
// Idempotent: a retry after the new Pod was created finds it done and leaves it alone; a Pod already being
// deleted counts as deleted; the delete is preconditioned on the Pod's uid, so it can never hit a Pod created
// after the read. The claim and the etcd member stay.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { KubeObjects } from './kube-objects';
import type { ClusterRef } from '../contracts/cluster-ref';
import { Labels } from '../crds/labels';
import { delay } from './etcd-membership';

/** The role label of a member Pod that has left the client Service because it is about to be stopped. */
export const DRAINING_ROLE = 'draining';
/**
 * How long a draining member keeps serving before it is stopped: the EndpointSlice follows the label at once, and
 * kube-proxy's default minimum sync period is 1 s.
 */
export const SERVICE_DRAIN_MS = 1500;

export interface MemberPod extends KubernetesObject {
  spec?: { containers?: { name?: string; image?: string }[] };
  metadata?: KubernetesObject['metadata'] & { deletionTimestamp?: unknown };
}

export async function deleteMemberPodUnlessDone(
  kube: KubeObjects,
  ref: ClusterRef,
  member: string,
  done: (pod: MemberPod) => boolean,
  /** Take a serving member out of the client Service first, waiting this long (0: delete at once). */
  drainMs = 0,
  sleep: (ms: number) => Promise<void> = delay,
): Promise<'deleted' | 'absent' | 'done'> {
  const podRef = { apiVersion: 'v1', kind: 'Pod', namespace: ref.namespace, name: member };
  const pod = await kube.read<MemberPod>(podRef);
  if (!pod) return 'absent';
  if (done(pod)) return 'done';
  if (pod.metadata?.deletionTimestamp) return 'deleted';
  if (drainMs > 0 && pod.metadata?.labels?.[Labels.role] === 'voter') {
    // The uid in the patch is a precondition: a Pod created after the read under the same name is refused, not relabelled.
    await kube.mergePatch(podRef, {
      metadata: {
        ...(pod.metadata.uid ? { uid: pod.metadata.uid } : {}),
        labels: { [Labels.role]: DRAINING_ROLE },
      },
    });
    await sleep(drainMs);
  }
  return kube.deleteIfPresent(podRef, { ...(pod.metadata?.uid ? { uid: pod.metadata.uid } : {}) });
}
