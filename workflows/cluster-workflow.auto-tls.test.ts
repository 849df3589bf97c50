// spec.tls.mode Auto in the cluster workflow, on the real Temporal dev server with the in-memory fake world: the certificates are issued before the Bootstrap, status names the client Secret, and a workflow timer (no signal, no drift check) wakes the cluster at the renewal time.
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { Worker } from '@temporalio/worker';
import type { AutoTLSResult } from '../activities/auto-tls';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import type { ClusterWorkflowInput } from '../contracts/messages';
import { clusterWorkflowId, operationWorkflowId } from '../contracts/messages';
import { createFakeCluster } from '../test/support/fake-cluster';
import { DEV_SERVER_START_TIMEOUT_MS, eventually, startDevServer } from '../test/support/dev-server';
import { etcdClusterWorkflow } from './cluster-workflow';

jest.setTimeout(120_000);

let env: TestWorkflowEnvironment;
let workflowBundle: WorkflowBundleWithSourceMap;

beforeAll(async () => {
  ({ env, workflowBundle } = await startDevServer());
}, DEV_SERVER_START_TIMEOUT_MS);

afterAll(async () => {
  await env?.teardown();
});

const DUE_MS = 20_000;

const spec: EtcdClusterSpec = {
  replicas: 3,
  version: '3.6.16',
  storage: { size: '1Gi', medium: '' },
  progressDeadlineSeconds: 600,
  tls: { mode: 'Auto' },
};

test('certificates are issued before the Bootstrap, status names the client Secret, and the renewal time wakes the cluster by itself', async () => {
  const fake = createFakeCluster();
  const calls: number[] = [];
  const order: string[] = [];
  const createPod = fake.activities.createMemberPod;
  fake.activities.createMemberPod = async (input) => {
    order.push('createMemberPod');
    return createPod(input);
  };
  // The first answer says a renewal is due in 20 s (after the Bootstrap, when the cluster idles on its 10-minute
  // drift check); the renewal then pushes the next one an hour away.
  fake.activities.issueAutoTLS = async (): Promise<AutoTLSResult> => {
    calls.push(Date.now());
    order.push('issueAutoTLS');
    const first = calls.length === 1;
    const renewing = calls.length > 1 && Date.now() >= (calls[0] ?? 0) + DUE_MS;
    return {
      caNotAfter: '2031-01-01T00:00:00.000Z',
      certificatesNotAfter: new Date(Date.now() + (first ? 30_000 : 3_600_000)).toISOString(),
      renewalTime: new Date(Date.now() + (first ? DUE_MS : 3_600_000)).toISOString(),
      changes: first
        ? ['created the CA default/at-ca']
        : renewing
          ? ['renewed the peer certificate default/at-peer-tls']
          : [],
      caRenewed: false,
    };
  };
  const taskQueue = 'cluster-workflow-auto-tls';
  const uid = 'uid-at';
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle,
    activities: fake.activities,
  });
  await worker.runUntil(async () => {
    const input: ClusterWorkflowInput = {
      ref: { namespace: 'default', name: 'at', uid },
      change: { uid, generation: 1, spec },
    };
    const handle = await env.client.workflow.start(etcdClusterWorkflow, {
      workflowId: clusterWorkflowId('default', 'at'),
      taskQueue,
      args: [input],
    });
    try {
      const bootstrap = operationWorkflowId('default', 'at', 1, 'Bootstrap');
      const status = await eventually('the Bootstrap to finish', () => {
        const s = fake.status;
        return s?.lastOperation?.workflowId === bootstrap && !s.currentOperation ? s : undefined;
      });
      expect(order[0]).toBe('issueAutoTLS');
      // Idle before the renewal is due: only the timer can wake it in time.
      expect(Date.now()).toBeLessThan((calls[0] ?? 0) + DUE_MS - 2000);
      expect(status.tls).toMatchObject({
        clientSecretName: 'at-client-tls',
        caNotAfter: '2031-01-01T00:00:00.000Z',
      });
      expect(fake.events).toContainEqual({
        type: 'Normal',
        reason: 'AutoTLSIssued',
        message: 'created the CA default/at-ca',
      });
      // Nothing signals the workflow now: only its timer at renewalTime can make it ask again (the drift check is 10 min).
      const renewal = await eventually(
        'the renewal at its time',
        () => fake.events.find((e) => e.reason === 'AutoTLSRenewed'),
        40_000,
      );
      expect(renewal.message).toBe('renewed the peer certificate default/at-peer-tls');
      const renewedAt = calls.find((t) => t >= (calls[0] ?? 0) + DUE_MS) ?? 0;
      expect(renewedAt - (calls[0] ?? 0)).toBeLessThan(DUE_MS + 5000);
      // Asked no more than needed: once per look before the renewal, then once at it; the next is an hour away.
      const settled = calls.length;
      await new Promise((r) => setTimeout(r, 3000));
      expect(calls.length).toBe(settled);
      await eventually('status to carry the next renewal time', () =>
        Date.parse(fake.status?.tls?.renewalTime ?? '') > Date.now() + 3_000_000 ? true : undefined,
      );
    } finally {
      const description = await handle.describe();
      if (description.status.name === 'RUNNING') await handle.terminate('test over');
    }
  });
});
