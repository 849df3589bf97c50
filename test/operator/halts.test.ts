// Halting an operation from outside: `temporal workflow cancel` and the progress deadline, on the real stack.
import { setHeaderOptions, PatchStrategy } from '@kubernetes/client-node';
import { FaultClient } from '../../localcluster/fault-client';
import type { Harness } from '../support/cluster-harness';
import {
  connect,
  createCluster,
  eventually,
  freshNamespace,
  getCluster,
  patchSpec,
  temporalCli,
  waitConverged,
} from '../support/cluster-harness';

let h: Harness;
let faults: FaultClient;
beforeAll(() => {
  h = connect();
  if (!h.stack.faultControlUrl) throw new Error('the local stack has no fault-control endpoint');
  faults = new FaultClient(h.stack.faultControlUrl);
});

/** Freezes the joining member's process as soon as its Pod runs, so the learner can never catch up. */
async function freezeWhenRunning(ns: string, pod: string): Promise<void> {
  await eventually(`${pod} running`, async () => {
    const p = await h.core.readNamespacedPod({ namespace: ns, name: pod });
    return p.status?.phase === 'Running' ? p : undefined;
  });
  await faults.freezeContainer(ns, pod, 'etcd');
}

const temporal = (args: string[]) => temporalCli(h, args);

describe('halting a stuck operation', () => {
  test('temporal workflow cancel stops a stuck scale-up safely and the cluster waits for a retry', async () => {
    const ns = await freshNamespace(h, 'cancel');
    await createCluster(h, ns, 'cx', { replicas: 1 });
    await waitConverged(h, ns, 'cx', 1);
    await patchSpec(h, ns, 'cx', { replicas: 2 });
    await freezeWhenRunning(ns, 'cx-1');

    const op = await eventually('the scale-up operation is running', async () => {
      const c = await getCluster(h, ns, 'cx');
      return c.status?.currentOperation?.type === 'ScaleUp' ? c.status.currentOperation : undefined;
    });
    expect(op.workflowId).toMatch(new RegExp(`^etcdcluster/${ns}/cx/op/\\d+-scaleup$`));
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
    // The learner it added is gone again: etcd lists one member, and its Pod and claim were deleted.
    expect(halted.status?.members?.map((m) => m.name)).toEqual(['cx-0']);
    await eventually('the learner Pod is gone', async () => {
      const pods = await h.core.listNamespacedPod({ namespace: ns });
      return pods.items.some((p) => p.metadata?.name === 'cx-1') ? undefined : true;
    });
    const described = temporal(['workflow', 'describe', '--workflow-id', op.workflowId]);
    expect(described).toMatch(/Canceled|Cancelled/i);

    // The same operation is not restarted on its own...
    await new Promise((r) => setTimeout(r, 5000));
    expect((await getCluster(h, ns, 'cx')).status?.currentOperation).toBeUndefined();
    // ...until the retry annotation is set.
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
  });

  test('a progress deadline that expires undoes the half-done step and says so in status', async () => {
    const ns = await freshNamespace(h, 'deadline');
    await createCluster(h, ns, 'dx', { replicas: 1, progressDeadlineSeconds: 30 });
    await waitConverged(h, ns, 'dx', 1);
    await patchSpec(h, ns, 'dx', { replicas: 2 });
    await freezeWhenRunning(ns, 'dx-1');
    const halted = await eventually(
      'status says the deadline passed',
      async () => {
        const c = await getCluster(h, ns, 'dx');
        const progressing = c.status?.conditions?.find((x) => x.type === 'Progressing');
        return progressing?.reason === 'ProgressDeadlineExceeded' ? c : undefined;
      },
      120_000,
    );
    expect(halted.status?.conditions?.find((x) => x.type === 'Progressing')?.status).toBe('False');
    expect(halted.status?.lastOperation).toMatchObject({ type: 'ScaleUp', result: 'DeadlineExceeded' });
    expect(halted.status?.members?.map((m) => m.name)).toEqual(['dx-0']);
  });
});
