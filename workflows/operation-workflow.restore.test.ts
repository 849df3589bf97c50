// The Bootstrap of a restored cluster on the real Temporal dev server: waiting for the snapshot, the seed's init container, and a refused restore, on the fake world.
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { Worker } from '@temporalio/worker';
import type { ClusterActivities } from '../activities/cluster-activities';
import type { KubeMemberObservation } from '../contracts/observation';
import type { RestoreActivities, RestorePreparation } from '../activities/restore-activities';
import type { RestoreInit } from '../activities/restore-manifests';
import type { EtcdClusterSpec, EtcdClusterStatus } from '../crds/etcd-cluster';
import { etcdClusterWorkflow } from './cluster-workflow';
import { clusterWorkflowId, operationWorkflowId } from '../contracts/messages';
import { createFakeCluster } from '../test/support/fake-cluster';
import { DEV_SERVER_START_TIMEOUT_MS, eventually, startDevServer } from '../test/support/dev-server';

jest.setTimeout(120_000);

let env: TestWorkflowEnvironment;
let workflowBundle: WorkflowBundleWithSourceMap;
let queue = 0;

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
  bootstrap: { restore: { source: { snapshotRef: { name: 'snap' } } } },
};

const INIT = {
  container: { name: 'restore', args: ['restore', '--sha256', 'ab'.repeat(32)] },
  volumes: [],
} as unknown as RestoreInit;

const condition = (status: EtcdClusterStatus | undefined, type: string) =>
  status?.conditions?.find((c) => c.type === type);

/**
 * The fake world plus restore: `preparations` is what prepareRestore answers in turn (the last repeats);
 * with `failure`, a seed started with a restore init container never starts etcd and reports that failure; with
 * `reached`, the seed's Pod reports what its restore reached for its first `reachedLooks` observations, then no more
 * (as a seed Pod started again, whose restore finds its data and reports nothing).
 */
function restoringWorld(
  preparations: RestorePreparation[],
  failure?: NonNullable<KubeMemberObservation['pod']>['restoreFailure'],
  reached?: { point: NonNullable<KubeMemberObservation['pod']>['restored']; reachedLooks: number },
) {
  const fake = createFakeCluster();
  const prepared: RestorePreparation[] = [];
  let failedSeed: string | undefined;
  /** prepareRestore answers and claim/Pod creations, in the order they happened. */
  const order: string[] = [];
  const activities: ClusterActivities & RestoreActivities = {
    ...fake.activities,
    async prepareRestore() {
      const next = preparations[Math.min(prepared.length, preparations.length - 1)];
      if (!next) throw new Error('no preparation scripted');
      prepared.push(next);
      order.push(`prepare:${next.state}`);
      return next;
    },
    async createMemberClaim(input) {
      order.push(`claim:${input.member}`);
      return fake.activities.createMemberClaim(input);
    },
    async createMemberPod(input) {
      order.push(`pod:${input.member}`);
      if (failure && input.mode === 'seed' && input.restore) {
        failedSeed = input.member;
        return 'created';
      }
      return fake.activities.createMemberPod(input);
    },
    async observeCluster(input) {
      const seen = await fake.activities.observeCluster(input);
      if (reached && reached.reachedLooks > 0) {
        const seed = seen.kube.find((k) => k.name.endsWith('-0') && k.pod);
        if (seed?.pod) {
          reached.reachedLooks--;
          seed.pod = { ...seed.pod, restored: reached.point };
        }
      }
      if (!failedSeed || !failure) return seen;
      const kube = seen.kube.map((k) =>
        k.name === failedSeed
          ? {
              ...k,
              pod: {
                phase: 'Pending' as const,
                ready: false,
                terminating: false,
                uid: 'seed-uid',
                restartCount: 0,
                restoreFailure: failure,
              },
            }
          : k,
      );
      return { ...seen, kube };
    },
  };
  return {
    fake,
    activities,
    prepared,
    order,
    seedPods: () => [...fake.podNames(), ...(failedSeed ? [failedSeed] : [])],
  };
}

async function run(
  name: string,
  world: ReturnType<typeof restoringWorld>,
  body: (opId: string, handle: WorkflowHandle<typeof etcdClusterWorkflow>) => Promise<void>,
) {
  const taskQueue = `restore-workflow-test-${++queue}`;
  const uid = `uid-${name}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle,
    activities: world.activities,
  });
  await worker.runUntil(async () => {
    const handle = await env.client.workflow.start(etcdClusterWorkflow, {
      workflowId: clusterWorkflowId('default', name),
      taskQueue,
      args: [{ ref: { namespace: 'default', name, uid }, change: { uid, generation: 1, spec } }],
    });
    try {
      await body(operationWorkflowId('default', name, 1, 'Bootstrap'), handle);
    } finally {
      if ((await handle.describe()).status.name === 'RUNNING') await handle.terminate('test over');
    }
  });
}

const finished = (world: ReturnType<typeof restoringWorld>, opId: string) =>
  eventually(`${opId} to finish`, () => {
    const s = world.fake.status;
    return s?.lastOperation?.workflowId === opId && !s.currentOperation ? s : undefined;
  });

describe('bootstrap from a snapshot', () => {
  it('waits (creating nothing) until the EtcdSnapshot has succeeded, then starts only the seed with the restore init container and joins the others as usual', async () => {
    const world = restoringWorld([
      {
        state: 'waiting',
        message: 'EtcdSnapshot default/snap is Running; the restore starts once it has Succeeded',
      },
      {
        state: 'waiting',
        message: 'EtcdSnapshot default/snap is Running; the restore starts once it has Succeeded',
      },
      { state: 'ready', init: INIT, uri: 's3://b/snap.db' },
    ]);
    await run('waits', world, async (opId) => {
      const status = await finished(world, opId);
      expect(status.lastOperation).toMatchObject({ type: 'Bootstrap', result: 'Succeeded' });
      expect(world.fake.voterNames()).toEqual(['waits-0', 'waits-1', 'waits-2']);
      expect(world.prepared.map((p) => p.state)).toEqual(['waiting', 'waiting', 'ready']);
      const pods = world.fake
        .callsOf('createMemberPod')
        .map((c) => c.input as { member: string; mode: string; restore?: unknown });
      expect(pods.map((p) => [p.member, p.mode, p.restore !== undefined])).toEqual([
        ['waits-0', 'seed', true],
        ['waits-1', 'join', false],
        ['waits-2', 'join', false],
      ]);
      expect(pods[0]?.restore).toEqual(INIT);
      // While it waited, status said why, and nothing was created before the source was ready.
      const waitingWrite = world.fake.statusWrites.find((s) =>
        s.currentOperation?.step?.startsWith(
          'waiting for the restore source: EtcdSnapshot default/snap is Running',
        ),
      );
      expect(waitingWrite).toBeDefined();
      expect(world.order.slice(0, 5)).toEqual([
        'prepare:waiting',
        'prepare:waiting',
        'prepare:ready',
        'claim:waits-0',
        'pod:waits-0',
      ]);
      expect(condition(status, 'Available')).toMatchObject({ status: 'True' });
    });
  });

  it('status.restore says the point the seed reached, written once and kept after the seed stops reporting it', async () => {
    const point = { revision: 1200, time: '2026-11-25T10:32:00.123Z' };
    const world = restoringWorld([{ state: 'ready', init: INIT, uri: 's3://b/snap.db' }], undefined, {
      point,
      reachedLooks: 2,
    });
    await run('reached', world, async (opId) => {
      const status = await finished(world, opId);
      expect(status.lastOperation).toMatchObject({ type: 'Bootstrap', result: 'Succeeded' });
      expect(status.restore).toEqual(point);
      // Every write from the first one that had it on carries it, though the seed reported it only twice.
      const first = world.fake.statusWrites.findIndex((s) => s.restore !== undefined);
      expect(first).toBeGreaterThanOrEqual(0);
      expect(world.fake.statusWrites.slice(first).every((s) => s.restore?.revision === 1200)).toBe(true);
      expect(world.fake.statusWrites.slice(0, first).every((s) => s.restore === undefined)).toBe(true);
    });
  });

  it('a restore the agent refuses (ChecksumMismatch) fails the Bootstrap: Degraded RestoreFailed with the message, an Event, and no other member', async () => {
    const world = restoringWorld([{ state: 'ready', init: INIT, uri: 's3://b/snap.db' }], {
      reason: 'ChecksumMismatch',
      message: 'sha256 of the downloaded snapshot is 00…, expected ab…',
      permanent: true,
    });
    await run('refused', world, async (opId) => {
      const status = await finished(world, opId);
      expect(status.lastOperation).toMatchObject({ type: 'Bootstrap', result: 'Failed' });
      expect(status.lastOperation?.message).toContain('ChecksumMismatch');
      const degraded = await eventually('Degraded RestoreFailed', () => {
        const d = condition(world.fake.status, 'Degraded');
        return d?.reason === 'RestoreFailed' ? d : undefined;
      });
      expect(degraded).toMatchObject({ status: 'True' });
      expect(degraded.message).toContain('restore of refused-0 failed: ChecksumMismatch');
      expect(condition(world.fake.status, 'Progressing')?.reason).toBe('OperationFailed');
      expect(world.fake.events.filter((e) => e.reason === 'RestoreFailed')).toHaveLength(1);
      expect(world.fake.callsOf('addLearner')).toEqual([]);
      expect(world.seedPods()).toEqual(['refused-0']);
      expect(world.fake.claimNames()).toEqual(['refused-0']);
    });
  });

  it('an EtcdSnapshot that Failed ends the Bootstrap Failed before any claim or Pod exists', async () => {
    const world = restoringWorld([
      { state: 'refused', message: 'EtcdSnapshot default/snap Failed (InvalidCredentials: 403)' },
    ]);
    await run('badsnap', world, async (opId) => {
      const status = await finished(world, opId);
      expect(status.lastOperation).toMatchObject({ type: 'Bootstrap', result: 'Failed' });
      expect(status.lastOperation?.message).toContain('EtcdSnapshot default/snap Failed');
      expect(world.fake.events.map((e) => e.reason)).toContain('RestoreFailed');
      expect(world.fake.podNames()).toEqual([]);
      expect(world.fake.claimNames()).toEqual([]);
    });
  });
});
