// Halting an operation from outside: `temporal workflow cancel` and the progress deadline, on the real stack.
import { setHeaderOptions, PatchStrategy } from '@kubernetes/client-node';
import { expectAvailability, PLANNED_GAP_BOUND_MS } from '../support/availability';
import type { Harness } from '../support/cluster-harness';
import {
  connect,
  createCluster,
  etcdMemberList,
  eventually,
  freshNamespace,
  getCluster,
  patchSpec,
  temporalCli,
  waitConverged,
} from '../support/cluster-harness';
import { holdPodCreation } from '../support/pod-hold';
import { startWriterRunning } from '../support/writer';

// Connected at load, not in beforeAll: Jest starts concurrent tests before the file's beforeAll hooks run.
const h: Harness = connect();

/**
 * Refuses the joining member's Pod, so the scale-up stays in its AddMember step with a learner added and
 * no Pod to run it (the activity creating the Pod is retried). Freezing the Pod once it ran was racy: an
 * operation that watches for the learner's first answer could promote it before the freeze landed.
 */
const holdJoiningPod = (ns: string) => holdPodCreation(h, ns, 'the halts test');

const temporal = (args: string[]) => temporalCli(h, args);

// The two run side by side: each holds the Pods of its own namespace on a 1-member cluster of its own, and most of
// their time is waiting (a learner that never starts, a 30 s progress deadline), so the file takes as long as the
// longer of the two, not their sum.
describe('halting a stuck operation', () => {
  test.concurrent(
    'temporal workflow cancel stops a stuck scale-up safely and the cluster waits for a retry',
    async () => {
      const ns = await freshNamespace(h, 'cancel');
      await createCluster(h, ns, 'cx', { replicas: 1 });
      await waitConverged(h, ns, 'cx', 1);
      // A learner that never starts does not count toward quorum: the one voter keeps writing throughout.
      const writer = await startWriterRunning({ namespace: ns, name: 'cx', prefix: '/halt-writes' });
      const hold = await holdJoiningPod(ns);
      await patchSpec(h, ns, 'cx', { replicas: 2 });

      const op = await eventually('the scale-up operation is running', async () => {
        const c = await getCluster(h, ns, 'cx');
        return c.status?.currentOperation?.type === 'ScaleUp' ? c.status.currentOperation : undefined;
      });
      expect(op.workflowId).toMatch(new RegExp(`^etcdcluster/${ns}/cx/op/\\d+-scaleup$`));
      // The window is open: etcd lists cx-1 as a learner and its claim exists, while its Pod is refused.
      await eventually('the learner is added and its claim exists', async () => {
        const listed = await etcdMemberList(ns, 'cx');
        const claims = await h.core.listNamespacedPersistentVolumeClaim({ namespace: ns });
        return listed.some((m) => m.isLearner) && claims.items.some((c) => c.metadata?.name === 'data-cx-1')
          ? true
          : undefined;
      });
      temporal(['workflow', 'cancel', '--workflow-id', op.workflowId]);

      const halted = await eventually('status says the operation was cancelled', async () => {
        const c = await getCluster(h, ns, 'cx');
        const progressing = c.status?.conditions?.find((x) => x.type === 'Progressing');
        return progressing?.reason === 'OperationCancelled' && !c.status?.currentOperation ? c : undefined;
      });
      expect(halted.status?.lastOperation).toMatchObject({
        type: 'ScaleUp',
        result: 'Cancelled',
        workflowId: op.workflowId,
      });
      // The learner it added is gone again: etcd lists one member, and its claim was deleted.
      expect(halted.status?.members?.map((m) => m.name)).toEqual(['cx-0']);
      expect((await etcdMemberList(ns, 'cx')).map((m) => m.name)).toEqual(['cx-0']);
      await eventually('the learner claim is gone', async () => {
        const claims = await h.core.listNamespacedPersistentVolumeClaim({ namespace: ns });
        return claims.items.some((c) => c.metadata?.name === 'data-cx-1') ? undefined : true;
      });
      const described = temporal(['workflow', 'describe', '--workflow-id', op.workflowId]);
      expect(described).toMatch(/Canceled|Cancelled/i);

      // The same operation is not restarted on its own...
      await new Promise((r) => setTimeout(r, 5000));
      expect((await getCluster(h, ns, 'cx')).status?.currentOperation).toBeUndefined();
      // ...until the retry annotation is set (and the Pod can be created again).
      await hold.release();
      await h.custom.patchNamespacedCustomObject(
        {
          group: 'etcd.conductor.dev',
          version: 'v1alpha1',
          plural: 'etcdclusters',
          namespace: ns,
          name: 'cx',
          body: { metadata: { annotations: { 'etcd.conductor.dev/retry': '1' } } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      await waitConverged(h, ns, 'cx', 2);
      await expectAvailability(h, await writer.stop(), {
        what: 'a stuck scale-up cancelled, then retried 1 -> 2',
        boundMs: PLANNED_GAP_BOUND_MS,
      });
    },
  );

  test.concurrent(
    'a progress deadline that expires undoes the half-done step and says so in status',
    async () => {
      const ns = await freshNamespace(h, 'deadline');
      await createCluster(h, ns, 'dx', { replicas: 1, progressDeadlineSeconds: 30 });
      await waitConverged(h, ns, 'dx', 1);
      const hold = await holdJoiningPod(ns);
      await patchSpec(h, ns, 'dx', { replicas: 2 });
      const halted = await eventually(
        'status says the deadline passed',
        async () => {
          const c = await getCluster(h, ns, 'dx');
          const progressing = c.status?.conditions?.find((x) => x.type === 'Progressing');
          return progressing?.reason === 'Stalled' ? c : undefined;
        },
        120_000,
      );
      expect(halted.status?.conditions?.find((x) => x.type === 'Progressing')?.status).toBe('False');
      expect(halted.status?.lastOperation).toMatchObject({ type: 'ScaleUp', result: 'DeadlineExceeded' });
      expect(halted.status?.members?.map((m) => m.name)).toEqual(['dx-0']);
      expect(halted.status?.lastOperation?.message).toMatch(/no progress within 30s .*stalled at: /);
      // One Stalled Warning Event, under the name derived from the notice (activities/event-recorder.ts); and no
      // notice written twice (retried activities find their own Event): each reason and message is one Event.
      const events = await eventually('the Stalled Event', async () => {
        const list = await h.core.listNamespacedEvent({ namespace: ns });
        const ours = list.items.filter((e) => e.involvedObject.name === 'dx');
        return ours.some((e) => e.reason === 'Stalled') ? ours : undefined;
      });
      const stalled = events.filter((e) => e.reason === 'Stalled');
      expect(stalled).toHaveLength(1);
      expect(stalled[0]).toMatchObject({ type: 'Warning', count: 1 });
      expect(stalled[0]?.metadata?.name).toMatch(/^dx\.[0-9a-f]{16}$/);
      const byNotice = new Set(events.map((e) => `${e.reason}\0${e.message ?? ''}`));
      expect(byNotice.size).toBe(events.length);
      await hold.release();
    },
  );
});
