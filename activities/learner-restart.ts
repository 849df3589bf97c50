// Stops the Pod of a learner that etcd keeps waiting on its own publish (contracts/learner-restart.ts), so that the
// step after it starts the learner again on its claim: the claim first records the learner's member id (a learner is
// restarted once), then the Pod the look saw (by uid) is deleted with the restart rule of upgrades and rollouts
// (member-pod-restart.ts), and the activity returns once that Pod is gone, so the new Pod of the same name can be
// created at once.
//
// Idempotent: a retry finds the record made and the Pod gone or going; a Pod created after the look (another uid) is
// never deleted. The claim, and with it the learner's data and member id, stays.
import type { ClusterRef } from '../contracts/cluster-ref';
import { Annotations } from '../crds/labels';
import { claimRef, podRef } from './cluster-kube';
import { deleteMemberPodUnlessDone } from './member-pod-restart';
import { delay } from './etcd-membership';
import { heartbeat } from './heartbeat';
import type { KubeObjects } from './kube-objects';

/** How often the Pod is read while it goes: its deletion ends when the kubelet has stopped etcd. */
const GONE_POLL_MS = 100;
/** The longest the activity waits for the Pod to go (inside its 30 s start-to-close); past it, it fails and is retried. */
const GONE_WAIT_MS = 25_000;

export function createLearnerRestartActivities(deps: { kube: KubeObjects }) {
  const { kube } = deps;
  return {
    async stopLearnerPod(input: {
      ref: ClusterRef;
      member: string;
      id: string;
      podUid: string;
    }): Promise<'stopped' | 'gone'> {
      const { ref, member, id, podUid } = input;
      await kube.mergePatch(claimRef(ref, member), {
        metadata: { annotations: { [Annotations.restartedLearner]: id } },
      });
      // The Pod the look saw, by uid: one created since (a retry after the restart) counts as done and stays.
      const deleted = await deleteMemberPodUnlessDone(kube, ref, member, (p) => p.metadata?.uid !== podUid);
      const pod = podRef(ref, member);
      const until = Date.now() + GONE_WAIT_MS;
      for (;;) {
        const current = await kube.read(pod);
        if (current?.metadata?.uid !== podUid) return deleted === 'deleted' ? 'stopped' : 'gone';
        if (Date.now() > until) {
          throw new Error(
            `the Pod of learner ${member} (uid ${podUid}) is still there ${GONE_WAIT_MS} ms after its deletion`,
          );
        }
        heartbeat();
        await delay(GONE_POLL_MS);
      }
    },
  };
}
