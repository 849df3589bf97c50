// The operator process killed in the middle of a membership change, at the two moments where a requeue-loop
// operator leaves zombies: after MemberAddAsLearner but before the member's Pod exists, and right after
// MemberRemove while the removed member's Pod still runs. Temporal resumes the operation on the restarted
// worker; the cluster must converge with no duplicate, zombie or missing member and with every key intact.
//
// The window between two activities lasts milliseconds, so each test holds it open with a real
// ValidatingAdmissionPolicy that refuses the next step's API call (Pod creation, Pod deletion) until the
// operator has been killed and restarted; the operation's retries of that step are what the kill interrupts.
//
// Each runs under the strict writer and a member-list sampler: nothing acknowledged lost on any member, equal
// hashkv, no write gap of 5 s, never more than one learner, never fewer than 3 voters.
import { Labels } from '../../crds/labels';
import { expectAvailability, FAULT_GAP_BOUND_MS } from '../support/availability';
import type { Harness } from '../support/cluster-harness';
import {
  connect,
  createCluster,
  etcdMemberList,
  eventually,
  expectClusterData,
  freshNamespace,
  getCluster,
  patchSpec,
  waitConverged,
  writeKeys,
} from '../support/cluster-harness';
import { expectMembership, startMembershipSampler } from '../support/membership-sampler';
import { killOperator } from '../support/operator-process';
import { holdPodCreation, holdPods } from '../support/pod-hold';
import { startWriterRunning } from '../support/writer';

let h: Harness;
beforeAll(() => {
  h = connect();
});

const memberOf = (name: string) => (url: string) => url.includes(`//${name}.`);

/** No zombie and no duplicate: etcd, the Pods and the claims agree on exactly `replicas` started voters. */
async function expectExactMembers(ns: string, name: string, replicas: number): Promise<string[]> {
  const members = await etcdMemberList(ns, name);
  expect(members).toHaveLength(replicas);
  expect(members.filter((m) => m.isLearner)).toEqual([]);
  expect(members.filter((m) => m.name === '')).toEqual([]);
  const names = members.map((m) => m.name).sort();
  expect(new Set(names).size).toBe(replicas);
  for (const m of members) expect(m.peerURLs.some(memberOf(m.name))).toBe(true);

  const selector = `${Labels.cluster}=${name}`;
  const pods = await h.core.listNamespacedPod({ namespace: ns, labelSelector: selector });
  expect(pods.items.map((p) => p.metadata?.name).sort()).toEqual(names);
  const claims = await h.core.listNamespacedPersistentVolumeClaim({ namespace: ns, labelSelector: selector });
  expect(claims.items.map((c) => c.metadata?.name).sort()).toEqual(names.map((n) => `data-${n}`));
  return names;
}

describe('the operator killed in the middle of a membership change', () => {
  let ns: string;
  let written: Map<string, string>;
  beforeAll(async () => {
    ns = await freshNamespace(h, 'crash');
    await createCluster(h, ns, 'w', { replicas: 3 });
    await waitConverged(h, ns, 'w', 3);
    written = await writeKeys(ns, 'w', 'crash', 30);
  });

  test("between MemberAddAsLearner and the Pod's creation: the scale-up resumes and adds the member once", async () => {
    const sampler = startMembershipSampler({ namespace: ns, name: 'w' });
    const writer = await startWriterRunning({ namespace: ns, name: 'w', prefix: '/crash-scale-up' });
    const hold = await holdPodCreation(h, ns, 'the worker-crash test');
    try {
      await patchSpec(h, ns, 'w', { replicas: 4 });
      // The window: etcd lists the new member as an unstarted learner, its Pod does not exist, and the
      // operation's current step is the Pod's creation (refused by the hold, so retried).
      const learner = await eventually('w-3 added as learner while its Pod is refused', async () => {
        const c = await getCluster(h, ns, 'w');
        const step = c.status?.currentOperation?.step ?? '';
        const members = await etcdMemberList(ns, 'w');
        const added = members.find((m) => m.peerURLs.some(memberOf('w-3')));
        return added?.isLearner && /added as learner, starting its Pod/.test(step) ? added : undefined;
      });
      const pods = await h.core.listNamespacedPod({ namespace: ns });
      expect(pods.items.map((p) => p.metadata?.name)).not.toContain('w-3');

      await killOperator(h);
      await hold.release();

      await waitConverged(h, ns, 'w', 4, 300_000);
      const names = await expectExactMembers(ns, 'w', 4);
      expect(names).toContain('w-3');
      // The member etcd added before the kill is the one that started: not removed and added again.
      expect((await etcdMemberList(ns, 'w')).find((m) => m.name === 'w-3')?.id).toBe(learner.id);
      await expectClusterData(h, ns, 'w', 'crash', written);
      await expectAvailability(h, await writer.stop(), {
        what: 'operator killed after MemberAddAsLearner (scale-up 3 -> 4)',
        boundMs: FAULT_GAP_BOUND_MS,
      });
      expectMembership(await sampler.stop(), {
        what: 'operator killed during scale-up',
        floor: 3,
        finalVoters: 4,
      });
    } finally {
      await hold.release();
      await writer.stop();
      await sampler.stop();
    }
  });

  test('right after MemberRemove: the scale-down resumes, deletes the removed Pod and claim, and leaves no zombie', async () => {
    const before = await etcdMemberList(ns, 'w');
    const someMember = before[0]?.name ?? 'w-0';
    const hold = await holdPods(h, ns, 'DELETE', 'the worker-crash test', () =>
      h.core.deleteNamespacedPod({ namespace: ns, name: someMember, dryRun: 'All' }),
    );
    let removed: string | undefined;
    const sampler = startMembershipSampler({ namespace: ns, name: 'w' });
    const writer = await startWriterRunning({ namespace: ns, name: 'w', prefix: '/crash-scale-down' });
    try {
      await patchSpec(h, ns, 'w', { replicas: 3 });
      // The window: etcd no longer lists one member, whose Pod still exists (its deletion is refused).
      removed = await eventually('one member removed from etcd while its Pod remains', async () => {
        const now = await etcdMemberList(ns, 'w');
        if (now.length !== 3) return undefined;
        const gone = before.find((b) => !now.some((m) => m.id === b.id));
        if (!gone) return undefined;
        const pod = await h.core.readNamespacedPod({ namespace: ns, name: gone.name });
        return pod.metadata?.deletionTimestamp ? undefined : gone.name;
      });

      await killOperator(h);
      await hold.release();

      await waitConverged(h, ns, 'w', 3, 300_000);
      const names = await expectExactMembers(ns, 'w', 3);
      expect(names).not.toContain(removed);
      await eventually(`the Pod of removed member ${removed} is gone`, async () => {
        const pods = await h.core.listNamespacedPod({ namespace: ns });
        return pods.items.some((p) => p.metadata?.name === removed) ? undefined : true;
      });
      await expectClusterData(h, ns, 'w', 'crash', written);
      await expectAvailability(h, await writer.stop(), {
        what: 'operator killed after MemberRemove (scale-down 4 -> 3)',
        boundMs: FAULT_GAP_BOUND_MS,
      });
      expectMembership(await sampler.stop(), {
        what: 'operator killed during scale-down',
        floor: 3,
        finalVoters: 3,
      });
    } finally {
      await hold.release();
      await writer.stop();
      await sampler.stop();
    }
  });
});
