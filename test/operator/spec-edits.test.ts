// A spec edited while an operation runs: the running operation finishes what it started (no membership change is
// abandoned halfway), and the edit is applied by the next operation, in order, on the real stack.
import { expectAvailability, PLANNED_GAP_BOUND_MS } from '../support/availability';
import type { Harness } from '../support/cluster-harness';
import {
  connect,
  createCluster,
  eventually,
  expectClusterData,
  freshNamespace,
  getCluster,
  listWorkflows,
  patchSpec,
  waitConverged,
  writeKeys,
} from '../support/cluster-harness';
import { startWriterRunning } from '../support/writer';

let h: Harness;
beforeAll(() => {
  h = connect();
});

test('replicas edited from 3 to 4 during a 1 -> 3 scale-up is applied after it, by a second scale-up', async () => {
  const ns = await freshNamespace(h, 'edit');
  await createCluster(h, ns, 'ed', { replicas: 1 });
  await waitConverged(h, ns, 'ed', 1);
  const written = await writeKeys(ns, 'ed', 'edit', 20);
  const writer = await startWriterRunning({ namespace: ns, name: 'ed', prefix: '/edit-writes' });

  await patchSpec(h, ns, 'ed', { replicas: 3 });
  const first = await eventually('the 1 -> 3 scale-up is running', async () => {
    const c = await getCluster(h, ns, 'ed');
    return c.status?.currentOperation?.type === 'ScaleUp' ? c.status.currentOperation : undefined;
  });
  await patchSpec(h, ns, 'ed', { replicas: 4 });
  const edited = await getCluster(h, ns, 'ed');
  // The edit does not interrupt the running operation.
  expect(edited.status?.currentOperation?.workflowId).toBe(first.workflowId);

  const done = await waitConverged(h, ns, 'ed', 4, 300_000);
  await expectAvailability(h, await writer.stop(), {
    what: 'scale 1 -> 3 edited to 4',
    boundMs: PLANNED_GAP_BOUND_MS,
  });
  expect(done.status?.observedGeneration).toBe(edited.metadata.generation);
  expect(done.status?.lastOperation).toMatchObject({
    type: 'ScaleUp',
    result: 'Succeeded',
    observedGeneration: edited.metadata.generation,
  });
  expect(done.status?.lastOperation?.workflowId).not.toBe(first.workflowId);

  // In Temporal: two scale-ups, both completed, the second started only after the first closed.
  const ops = listWorkflows(h, `EtcdClusterNamespace='${ns}' AND EtcdOperationType='ScaleUp'`);
  expect(ops.map((o) => o.execution.workflowId)).toEqual([
    first.workflowId,
    done.status?.lastOperation?.workflowId,
  ]);
  expect(ops.map((o) => o.status)).toEqual([
    'WORKFLOW_EXECUTION_STATUS_COMPLETED',
    'WORKFLOW_EXECUTION_STATUS_COMPLETED',
  ]);
  expect((ops[1]?.startTime ?? '') >= (ops[0]?.closeTime ?? '~')).toBe(true);
  await expectClusterData(h, ns, 'ed', 'edit', written);
});
