// The restart rule shared by upgrades and rollouts: delete a member's Pod only while it is not done yet.
import type { KubeObjects, ObjectRef } from './kube-objects';
import type { MemberPod } from './member-pod-restart';
import { deleteMemberPodUnlessDone } from './member-pod-restart';

const ref = { namespace: 'ns', name: 'main', uid: 'uid-main' };

function kubeWith(pod: MemberPod | undefined, steps: string[] = []) {
  const deletes: { ref: ObjectRef; uid?: string }[] = [];
  const unused = () => Promise.reject(new Error('not used by this activity'));
  const kube: KubeObjects = {
    createIfAbsent: unused,
    list: unused,
    async mergePatch(r, patch) {
      steps.push(`patch ${r.kind}/${r.name} ${JSON.stringify(patch)}`);
    },
    async read<T>(r: ObjectRef) {
      return r.kind === 'Pod' && r.name === pod?.metadata?.name ? (pod as T) : undefined;
    },
    async deleteIfPresent(r, options = {}) {
      deletes.push({ ref: r, ...(options.uid ? { uid: options.uid } : {}) });
      steps.push(`delete ${r.kind}/${r.name}`);
      return 'deleted';
    },
  };
  return { kube, deletes };
}

const pod = (extra: Partial<NonNullable<MemberPod['metadata']>> = {}): MemberPod => ({
  metadata: { name: 'main-1', uid: 'pod-uid-1', annotations: { hash: 'new' }, ...extra },
});
const onNewHash = (p: MemberPod) => p.metadata?.annotations?.hash === 'new';

describe('deleteMemberPodUnlessDone', () => {
  it.each([
    [
      'a Pod that is not done is deleted, preconditioned on its uid',
      pod({ annotations: { hash: 'old' } }),
      'deleted',
      1,
    ],
    ['a Pod that is done is left alone (a retry after the restart)', pod(), 'done', 0],
    ['a missing Pod is absent', undefined, 'absent', 0],
    [
      'a Pod already being deleted counts as deleted without a second delete',
      pod({ annotations: { hash: 'old' }, deletionTimestamp: new Date('2026-01-01T00:00:00Z') }),
      'deleted',
      0,
    ],
  ] as const)('%s', async (_name, current, result, deleteCalls) => {
    const { kube, deletes } = kubeWith(current);
    await expect(deleteMemberPodUnlessDone(kube, ref, 'main-1', onNewHash)).resolves.toBe(result);
    expect(deletes).toHaveLength(deleteCalls);
    if (deleteCalls > 0)
      expect(deletes[0]).toEqual({
        ref: { apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'main-1' },
        uid: 'pod-uid-1',
      });
  });
});

describe('deleteMemberPodUnlessDone with a drain', () => {
  const role = 'etcd.conductor.dev/role';
  const drained = `patch Pod/main-1 ${JSON.stringify({ metadata: { uid: 'pod-uid-1', labels: { [role]: 'draining' } } })}`;
  it.each([
    [
      'a serving voter leaves the client Service (role draining, uid as precondition), waits, then is deleted',
      pod({ annotations: { hash: 'old' }, labels: { [role]: 'voter' } }),
      [drained, 'sleep 500', 'delete Pod/main-1'],
    ],
    [
      'a Pod already draining (a retry) is deleted without waiting again',
      pod({ annotations: { hash: 'old' }, labels: { [role]: 'draining' } }),
      ['delete Pod/main-1'],
    ],
    [
      'a learner serves no clients: deleted at once',
      pod({ annotations: { hash: 'old' }, labels: { [role]: 'learner' } }),
      ['delete Pod/main-1'],
    ],
    ['a Pod that is done is not touched', pod({ labels: { [role]: 'voter' } }), []],
  ] as const)('%s', async (_name, current, want) => {
    const steps: string[] = [];
    const { kube } = kubeWith(current, steps);
    const sleep = async (ms: number) => void steps.push(`sleep ${ms}`);
    await deleteMemberPodUnlessDone(kube, ref, 'main-1', onNewHash, 500, sleep);
    expect(steps).toEqual(want);
  });
});
