// spec.auth in the cluster workflow, on the real Temporal dev server with the in-memory fake world: while etcd answers
// its member list but not its auth status, status never says Converged (Progressing=False AuthUnknown), the cluster
// looks again by itself (no signal), and once etcd answers, auth is enabled and only then is the cluster converged.
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { membersChangedSignal } from '../contracts/messages';
import type { FakeCluster } from '../test/support/fake-cluster';
import { createFakeCluster } from '../test/support/fake-cluster';
import { DEV_SERVER_START_TIMEOUT_MS, eventually, startDevServer } from '../test/support/dev-server';
import type { ClusterRun } from '../test/support/cluster-workflow-run';
import { withClusterWorkflow } from '../test/support/cluster-workflow-run';

jest.setTimeout(120_000);

let env: TestWorkflowEnvironment;
let workflowBundle: WorkflowBundleWithSourceMap;

beforeAll(async () => {
  ({ env, workflowBundle } = await startDevServer());
}, DEV_SERVER_START_TIMEOUT_MS);

afterAll(async () => {
  await env?.teardown();
});

const spec: EtcdClusterSpec = {
  replicas: 3,
  version: '3.6.16',
  storage: { size: '1Gi', medium: '' },
  progressDeadlineSeconds: 600,
  auth: { rootSecretRef: { name: 'au-root' } },
};

/** The cluster workflow for `name` on the fake world, with spec.auth; terminated after `body`. */
const withAuthCluster = (name: string, fake: FakeCluster, body: (r: ClusterRun) => Promise<void>) =>
  withClusterWorkflow(
    { env, workflowBundle, queuePrefix: 'cluster-workflow-auth', name, spec, activities: fake.activities },
    body,
  );

test('auth that etcd does not answer about is never reported converged; once it answers, auth is enabled and then the cluster converges', async () => {
  const fake = createFakeCluster();
  fake.faults.authUnanswered();
  const unansweredLooks: number[] = [];
  const observeAuth = fake.activities.observeAuth;
  fake.activities.observeAuth = async (input) => {
    const answer = await observeAuth(input);
    if (answer.etcd.state === 'unknown') unansweredLooks.push(Date.now());
    return answer;
  };
  // Whether etcd had auth on at each status write that called the cluster converged.
  const authAtConverged: boolean[] = [];
  const writeStatus = fake.activities.writeStatus;
  fake.activities.writeStatus = async (input) => {
    if (input.status.conditions?.find((c) => c.type === 'Progressing')?.reason === 'Converged')
      authAtConverged.push(fake.authEnabled());
    return writeStatus(input);
  };
  await withAuthCluster('au', fake, async () => {
    const progressing = () => fake.status?.conditions?.find((c) => c.type === 'Progressing');
    // The Bootstrap started the members together; with auth unread it does not end as done: it waits, and says so.
    const waiting = await eventually(
      'status to say auth is unknown',
      () => (progressing()?.message.includes('AuthUnknown') ? fake.status : undefined),
      60_000,
    );
    expect(waiting.currentOperation).toMatchObject({
      type: 'Bootstrap',
      step: expect.stringContaining('etcd did not say whether auth is on'),
    });
    expect(waiting.conditions?.find((c) => c.type === 'Progressing')).toMatchObject({
      status: 'True',
      reason: 'Bootstrapping',
    });
    expect(fake.authEnabled()).toBe(false);
    // Looked at again by the workflow's own timers: nothing signals it meanwhile.
    const seen = unansweredLooks.length;
    await eventually('another look at auth without a signal', () =>
      unansweredLooks.length > seen ? true : undefined,
    );
    fake.faults.authAnswers();
    const converged = await eventually(
      'the cluster to converge once etcd answers',
      () =>
        progressing()?.reason === 'Converged' && !fake.status?.currentOperation ? fake.status : undefined,
      60_000,
    );
    expect(fake.authEnabled()).toBe(true);
    expect(converged.readyReplicas).toBe(3);
    // No status written while auth was off ever said Converged.
    expect(authAtConverged.length).toBeGreaterThan(0);
    expect(authAtConverged.every(Boolean)).toBe(true);
  });
});

test('a member change while the operation waits is passed on to it: each wakes the operation long before its back-off would', async () => {
  const fake = createFakeCluster();
  fake.faults.authUnanswered();
  const looks: number[] = [];
  const observeAuth = fake.activities.observeAuth;
  fake.activities.observeAuth = async (input) => {
    looks.push(Date.now());
    return observeAuth(input);
  };
  await withAuthCluster('af', fake, async ({ handle }) => {
    // The Bootstrap's wait on unread auth backs off 1, 2, 4, 8 s: once two looks were 4 s apart, every later pause is
    // 8 s or more (a change wakes the wait but does not shorten the next pause).
    const pausedLong = () => looks.length >= 2 && (looks.at(-1) ?? 0) - (looks.at(-2) ?? 0) >= 3500;
    await eventually('pauses of 4 s and more', () => (pausedLong() ? true : undefined), 60_000);
    for (const round of [1, 2, 3]) {
      const before = looks.length;
      const signalledAt = Date.now();
      await handle.signal(membersChangedSignal);
      await eventually(
        `member change ${round} passed on`,
        () => (looks.length > before ? true : undefined),
        10_000,
      );
      // Woken by the change, not by its pause (8 s and more by now).
      expect(looks[before]! - signalledAt).toBeLessThan(3000);
    }
    fake.faults.authAnswers();
    await handle.signal(membersChangedSignal);
    await eventually(
      'the Bootstrap to end once auth is on',
      () =>
        fake.status?.lastOperation?.result === 'Succeeded' && !fake.status.currentOperation
          ? true
          : undefined,
      10_000,
    );
    expect(fake.authEnabled()).toBe(true);
  });
});
