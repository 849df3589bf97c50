// What waiting costs, in workflow history and status writes, over hours of an unchanging world: on Temporal's time-skipping test server.
//
// Issue 15's budget: after its first five minutes a workflow waiting on a world that does not change adds at
// most 120 history events an hour, never nears 10,000, and writes status only when it changed (here: never).
import type { WorkflowHandle } from '@temporalio/client';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import type { ClusterActivities } from '../activities/cluster-activities';
import type { ClusterObservation, KubeMemberObservation } from '../contracts/observation';
import type { EtcdClusterSpec, EtcdClusterStatus } from '../crds/etcd-cluster';
import { etcdClusterWorkflow } from './cluster-workflow';
import { clusterOperationWorkflow } from './operation-workflow';
import type { TimeSkippingServer } from '../test/support/time-skipping-server';
import { startTimeSkippingServer } from '../test/support/time-skipping-server';

jest.setTimeout(300_000);

/** The history budget for one hour of waiting after the first five minutes (issue 15). */
const EVENTS_PER_HOUR = 120;

let server: TimeSkippingServer;
let workflowBundle: WorkflowBundleWithSourceMap;
let queue = 0;

beforeAll(async () => {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  server = await startTimeSkippingServer();
  workflowBundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('./index'),
    logger: new DefaultLogger('WARN'),
  });
}, 240_000);

afterAll(async () => {
  await server?.stop();
});

const spec = (version: string): EtcdClusterSpec => ({
  replicas: 1,
  version,
  storage: { size: '1Gi', medium: '' },
  progressDeadlineSeconds: 86_400,
});

/** A seed whose image the kubelet cannot pull: its Pod waits, etcd never answers, nothing changes. */
const stuckSeed: KubeMemberObservation = {
  name: 'main-0',
  pod: { phase: 'Pending', ready: false, terminating: false, uid: 'p0', restartCount: 0, version: '3.6.16' },
  claim: { terminating: false, dataLost: false },
  problem: {
    reason: 'ImagePullFailed',
    message: 'Pod main-0 cannot pull image "quay.io/coreos/etcd:v3.6.16": not found',
  },
};

/** The same world on every look, and a record of what the workflows did to it. */
function unchangingWorld(observation: ClusterObservation) {
  const statusWrites: EtcdClusterStatus[] = [];
  const events: string[] = [];
  const observations = { count: 0 };
  const activities: Pick<
    ClusterActivities,
    'observeCluster' | 'writeStatus' | 'recordEvent' | 'awaitAnswerChange'
  > = {
    async observeCluster() {
      observations.count += 1;
      return structuredClone(observation);
    },
    async writeStatus(input) {
      statusWrites.push(input.status);
      return 'written';
    },
    async recordEvent(input) {
      events.push(`${input.reason}: ${input.message}`);
      return 'recorded';
    },
    async awaitAnswerChange() {
      return 'unchanged';
    },
  };
  return { activities, statusWrites, events, observations };
}

async function historyLength(handle: WorkflowHandle): Promise<number> {
  return (await handle.fetchHistory()).events?.length ?? 0;
}

/**
 * Runs `start` on a worker serving `activities`, lets five minutes of workflow time pass, then `hours` more
 * hours, and returns the history lengths at each mark.
 */
async function growth(
  activities: object,
  start: (taskQueue: string) => Promise<WorkflowHandle>,
  hours: number,
): Promise<number[]> {
  const { env } = server;
  const taskQueue = `waiting-cost-${++queue}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle,
    activities,
  });
  return worker.runUntil(async () => {
    const handle = await start(taskQueue);
    try {
      await env.sleep('5m');
      const lengths = [await historyLength(handle)];
      for (let h = 0; h < hours; h++) {
        await env.sleep('1h');
        lengths.push(await historyLength(handle));
      }
      return lengths;
    } finally {
      await handle.terminate('test over').catch(() => undefined);
    }
  });
}

const perHour = (lengths: number[]) => lengths.slice(1).map((l, i) => l - (lengths[i] ?? 0));

describe('waiting on an unchanging world', () => {
  it('an operation waiting on a Pod that cannot pull its image stays within 120 history events an hour', async () => {
    const world = unchangingWorld({ kube: [stuckSeed], versionKnown: true });
    const lengths = await growth(
      world.activities,
      (taskQueue) =>
        server.env.client.workflow.start(clusterOperationWorkflow, {
          workflowId: `waiting-cost-op-${queue}`,
          taskQueue,
          args: [
            {
              ref: { namespace: 'default', name: 'main', uid: 'u-op' },
              spec: spec('3.6.16'),
              generation: 1,
              type: 'Bootstrap',
              summary: 'bootstrap default/main with 1 member',
              versionKnown: true,
              recorded: { members: [], paused: false },
            },
          ],
        }),
      3,
    );
    console.log(
      `operation history: ${lengths.join(' -> ')} events (5 min, then hourly); per hour ${perHour(lengths).join(', ')}`,
    );
    for (const grown of perHour(lengths)) expect(grown).toBeLessThanOrEqual(EVENTS_PER_HOUR);
    expect(Math.max(...lengths)).toBeLessThan(10_000);
    // Still waiting, and looking: a wait that never looked again could not notice a fix.
    expect(world.observations.count).toBeGreaterThan(10);
  });

  it('the cluster workflow waiting on a seed that cannot pull its image stays within budget, tells it once and writes status once', async () => {
    const world = unchangingWorld({ kube: [stuckSeed], versionKnown: true });
    const lengths = await growth(
      world.activities,
      (taskQueue) =>
        server.env.client.workflow.start(etcdClusterWorkflow, {
          workflowId: `waiting-cost-cluster-${queue}`,
          taskQueue,
          args: [
            {
              ref: { namespace: 'default', name: 'main', uid: 'u1' },
              change: { uid: 'u1', generation: 1, spec: spec('3.6.16') },
            },
          ],
        }),
      3,
    );
    console.log(
      `cluster workflow history (stuck seed): ${lengths.join(' -> ')}; per hour ${perHour(lengths).join(', ')}; status writes ${world.statusWrites.length}; events ${world.events.length}`,
    );
    for (const grown of perHour(lengths)) expect(grown).toBeLessThanOrEqual(EVENTS_PER_HOUR);
    expect(world.statusWrites).toHaveLength(1);
    expect(world.statusWrites[0]?.conditions?.find((c) => c.type === 'Degraded')?.reason).toBe(
      'ImagePullFailed',
    );
    expect(world.events).toEqual([`ImagePullFailed: ${stuckSeed.problem?.message}`]);
  });

  it('an unsupported version costs the cluster workflow what an idle cluster does, told once', async () => {
    const world = unchangingWorld({ kube: [], versionKnown: false });
    const lengths = await growth(
      world.activities,
      (taskQueue) =>
        server.env.client.workflow.start(etcdClusterWorkflow, {
          workflowId: `waiting-cost-unsupported-${queue}`,
          taskQueue,
          args: [
            {
              ref: { namespace: 'default', name: 'main', uid: 'u2' },
              change: { uid: 'u2', generation: 1, spec: spec('3.6.99') },
            },
          ],
        }),
      2,
    );
    console.log(
      `cluster workflow history (3.6.99): ${lengths.join(' -> ')}; per hour ${perHour(lengths).join(', ')}; status writes ${world.statusWrites.length}`,
    );
    for (const grown of perHour(lengths)) expect(grown).toBeLessThanOrEqual(EVENTS_PER_HOUR);
    expect(world.statusWrites).toHaveLength(1);
    expect(world.events).toHaveLength(1);
    expect(world.events[0]).toMatch(/^UnsupportedVersion: spec.version 3.6.99 names no etcd release/);
  });
});
