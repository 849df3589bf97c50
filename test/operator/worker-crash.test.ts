// The operator process killed in the middle of a membership change, at the two moments where a requeue-loop
// operator leaves zombies: after MemberAddAsLearner but before the member's Pod exists, and right after
// MemberRemove while the removed member's Pod still runs; and in the middle of a brand-new cluster starting its
// initial members together, with one of their Pods created and the others not (and, without a kill, that bootstrap
// cancelled there and retried, so the next one plans from the objects alone). Temporal resumes the operation on the restarted
// worker; the cluster must converge with no duplicate, zombie or missing member and with every key intact.
//
// The window between two activities lasts milliseconds, so each test holds it open with a real
// ValidatingAdmissionPolicy that refuses the next step's API call (Pod creation, Pod deletion) until the
// operator has been killed and restarted; the operation's retries of that step are what the kill interrupts.
//
// Each runs under the strict writer and a member-list sampler: nothing acknowledged lost on any member, equal
// hashkv, no write gap of 5 s, never more than one learner, never fewer than 3 voters.
import { setHeaderOptions, PatchStrategy } from '@kubernetes/client-node';
import { Annotations, Labels } from '../../crds/labels';
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
  memberClusterIds,
  patchSpec,
  temporalCli,
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

  // A removed member's Pod and claim the operator deleted may still be terminating (on real nodes the kubelet takes a
  // moment to stop etcd, and the claim waits for its Pod): they are not the cluster's; the callers wait for them to go.
  const live = <T extends { metadata?: { name?: string; deletionTimestamp?: Date } }>(items: T[]) =>
    items.filter((x) => !x.metadata?.deletionTimestamp).map((x) => x.metadata?.name);
  const selector = `${Labels.cluster}=${name}`;
  const pods = await h.core.listNamespacedPod({ namespace: ns, labelSelector: selector });
  expect(live(pods.items).sort()).toEqual(names);
  const claims = await h.core.listNamespacedPersistentVolumeClaim({ namespace: ns, labelSelector: selector });
  expect(live(claims.items).sort()).toEqual(names.map((n) => `data-${n}`));
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
      await eventually(`the Pod and claim of removed member ${removed} are gone`, async () => {
        const pods = await h.core.listNamespacedPod({ namespace: ns });
        const claims = await h.core.listNamespacedPersistentVolumeClaim({ namespace: ns });
        return pods.items.some((p) => p.metadata?.name === removed) ||
          claims.items.some((c) => c.metadata?.name === `data-${removed}`)
          ? undefined
          : true;
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

/** Every Pod started with the one membership, and the members form one cluster: the id status recorded. */
async function expectOneInitialMembership(ns: string, name: string, initial: string[]): Promise<void> {
  const c = await getCluster(h, ns, name);
  const started = await h.core.listNamespacedPod({ namespace: ns });
  const flags = started.items.map((p) => {
    const args = p.spec?.containers.find((x) => x.name === 'etcd')?.args ?? [];
    return [
      p.metadata?.annotations?.[Annotations.initialMembers],
      args.find((a) => a.startsWith('--initial-cluster=')),
      args.find((a) => a.startsWith('--initial-cluster-state=')),
    ];
  });
  const initialCluster = flags[0]?.[1] ?? '';
  for (const n of initial) expect(initialCluster).toContain(`${n}=`);
  expect(flags).toEqual(
    initial.map(() => [initial.join(','), initialCluster, '--initial-cluster-state=new']),
  );
  const ids = memberClusterIds(h, ns, name, initial);
  expect(new Set(ids.values())).toEqual(new Set([c.status?.clusterId]));
}

/** The window of a together bootstrap whose Pods but `allowed` are refused: every claim made, `allowed` created. */
async function waitForHalfStartedBootstrap(ns: string, name: string, initial: string[]): Promise<void> {
  await eventually(
    `${name}-0 created and the other Pods refused while the initial members start`,
    async () => {
      const c = await getCluster(h, ns, name);
      const step = c.status?.currentOperation?.step ?? '';
      const claims = await h.core.listNamespacedPersistentVolumeClaim({ namespace: ns });
      const pods = await h.core.listNamespacedPod({ namespace: ns });
      return /initial members together/.test(step) &&
        claims.items.length === initial.length &&
        pods.items.some((p) => p.metadata?.name === `${name}-0`)
        ? true
        : undefined;
    },
  );
  const claims = await h.core.listNamespacedPersistentVolumeClaim({ namespace: ns });
  for (const c of claims.items)
    expect(c.metadata?.annotations?.[Annotations.initialMembers]).toBe(initial.join(','));
  const pods = await h.core.listNamespacedPod({ namespace: ns });
  expect(pods.items.map((p) => p.metadata?.name)).toEqual([`${name}-0`]);
}

describe('the operator killed while a brand-new cluster starts its initial members together', () => {
  test('with one initial Pod created and the others refused: the rest start with the same membership, one cluster', async () => {
    const ns = await freshNamespace(h, 'crash-boot');
    const initial = ['b-0', 'b-1', 'b-2'];
    const hold = await holdPodCreation(h, ns, 'the worker-crash bootstrap test', ['b-0']);
    try {
      await createCluster(h, ns, 'b', { replicas: 3 });
      // The window: every claim carries the membership, b-0's Pod exists (its etcd waits for a quorum of its
      // peers), and the creation of the other two Pods is refused, so the operation retries it.
      await waitForHalfStartedBootstrap(ns, 'b', initial);

      await killOperator(h);
      await hold.release();

      // From the first answer on: the same three voters throughout (never a learner, never a second seed), and
      // writes go on while the last member joins.
      const first = await eventually(
        'the initial members answer',
        () => etcdMemberList(ns, 'b').catch(() => undefined),
        180_000,
      );
      expect(first.map((m) => m.name).filter((n) => n !== '').length).toBeGreaterThanOrEqual(2);
      const sampler = startMembershipSampler({ namespace: ns, name: 'b' });
      const writer = await startWriterRunning({ namespace: ns, name: 'b', prefix: '/crash-boot' });
      try {
        const converged = await waitConverged(h, ns, 'b', 3, 300_000);
        expect(await expectExactMembers(ns, 'b', 3)).toEqual(initial);
        expect(converged.status?.lastOperation).toMatchObject({ type: 'Bootstrap', result: 'Succeeded' });
        await expectOneInitialMembership(ns, 'b', initial);
        const written = await writeKeys(ns, 'b', 'boot', 20);
        await expectClusterData(h, ns, 'b', 'boot', written);
        await expectAvailability(h, await writer.stop(), {
          what: 'operator killed while the initial members started together (bootstrap of 3)',
          boundMs: FAULT_GAP_BOUND_MS,
        });
        expectMembership(await sampler.stop(), {
          what: 'operator killed during a bootstrap',
          floor: 3,
          voterIds: first.map((m) => m.id),
        });
      } finally {
        await writer.stop();
        await sampler.stop();
      }
    } finally {
      await hold.release();
    }
  });

  test('cancelled half-way and retried: a new Bootstrap plans the missing members with the same membership', async () => {
    const ns = await freshNamespace(h, 'halt-boot');
    const initial = ['c-0', 'c-1', 'c-2'];
    const hold = await holdPodCreation(h, ns, 'the worker-crash bootstrap test', ['c-0']);
    try {
      await createCluster(h, ns, 'c', { replicas: 3 });
      await waitForHalfStartedBootstrap(ns, 'c', initial);
      const first = (await getCluster(h, ns, 'c')).status?.currentOperation?.workflowId ?? '';
      expect(first).toMatch(/-bootstrap$/);
      // The operation ends; what it started stays: the next one must plan from the objects alone.
      temporalCli(h, ['workflow', 'cancel', '--workflow-id', first]);
      await eventually('status says the bootstrap was cancelled', async () => {
        const c = await getCluster(h, ns, 'c');
        const progressing = c.status?.conditions?.find((x) => x.type === 'Progressing');
        return progressing?.reason === 'OperationCancelled' && !c.status?.currentOperation ? c : undefined;
      });
      await hold.release();
      const pods = await h.core.listNamespacedPod({ namespace: ns });
      expect(pods.items.map((p) => p.metadata?.name)).toEqual(['c-0']);

      await h.custom.patchNamespacedCustomObject(
        {
          group: 'etcd.conductor.dev',
          version: 'v1alpha1',
          plural: 'etcdclusters',
          namespace: ns,
          name: 'c',
          body: { metadata: { annotations: { [Annotations.retry]: '1' } } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      const converged = await waitConverged(h, ns, 'c', 3, 300_000);
      expect(converged.status?.lastOperation).toMatchObject({ type: 'Bootstrap', result: 'Succeeded' });
      expect(converged.status?.lastOperation?.workflowId).not.toBe(first);
      expect(await expectExactMembers(ns, 'c', 3)).toEqual(initial);
      await expectOneInitialMembership(ns, 'c', initial);
      const written = await writeKeys(ns, 'c', 'halt-boot', 20);
      await expectClusterData(h, ns, 'c', 'halt-boot', written);
    } finally {
      await hold.release();
    }
  });
});
