// The current step of an operation in Temporal's own CLI: `temporal workflow describe` prints the operation's memo, in
// which the operation keeps its step line (the Web UI and `temporal workflow metadata` show the same line as current
// details). Read during a real scale-up, and checked against status.currentOperation.step.
import { expectAvailability, PLANNED_GAP_BOUND_MS } from '../support/availability';
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
import { startWriterRunning } from '../support/writer';

let h: Harness;
beforeAll(() => {
  h = connect();
});

/** The step line in an operation's memo, as `temporal workflow describe -o json` prints it. */
function memoStep(workflowId: string): string | undefined {
  const described = JSON.parse(
    temporalCli(h, ['workflow', 'describe', '--workflow-id', workflowId, '-o', 'json']),
  ) as { workflowExecutionInfo?: { memo?: { fields?: Record<string, unknown> } } };
  const field = described.workflowExecutionInfo?.memo?.fields?.step;
  if (field === undefined) return undefined;
  // The CLI prints a payload either decoded or as {metadata, data: base64 JSON}.
  if (typeof field === 'string') return field;
  const data = (field as { data?: string }).data;
  return data === undefined
    ? undefined
    : (JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as string);
}

test('temporal workflow describe shows the step a running scale-up is on, the same step status shows', async () => {
  const ns = await freshNamespace(h, 'describe');
  await createCluster(h, ns, 'ds', { replicas: 1 });
  await waitConverged(h, ns, 'ds', 1);
  const writer = await startWriterRunning({ namespace: ns, name: 'ds', prefix: '/describe-writes' });
  await patchSpec(h, ns, 'ds', { replicas: 3 });

  const seen = await eventually('describe to show a step of the ScaleUp that status shows too', async () => {
    const op = (await getCluster(h, ns, 'ds')).status?.currentOperation;
    if (op?.type !== 'ScaleUp' || !op.workflowId) return undefined;
    const step = memoStep(op.workflowId);
    return step ? { step, workflowId: op.workflowId } : undefined;
  });
  console.log(`temporal workflow describe ${seen.workflowId}: memo step "${seen.step}"`);
  expect(seen.step).toMatch(/^step \d+: \S/);
  // The text form carries it too, for a person reading the CLI.
  const text = temporalCli(h, ['workflow', 'describe', '--workflow-id', seen.workflowId]);
  expect(text).toMatch(/step \d+: \S/);

  const done = await waitConverged(h, ns, 'ds', 3, 300_000);
  await expectAvailability(h, await writer.stop(), { what: 'scale 1 -> 3', boundMs: PLANNED_GAP_BOUND_MS });
  // After the operation, the memo keeps its last step: what it did last, beside its completed status.
  const last = memoStep(done.status?.lastOperation?.workflowId ?? seen.workflowId);
  expect(last).toMatch(/^step \d+: /);
});
