// The snapshot, schedule and schedule-run workflows on the real Temporal dev server, acting on fakes typed from the real activities.
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { Worker } from '@temporalio/worker';
import type { AgentResult } from '../contracts/agent-result';
import type { ScheduleSnapshotView } from '../activities/snapshot-schedule-activities';
import type { EtcdSnapshotScheduleSpec } from '../crds/etcd-snapshot-schedule';
import { FailureTypes } from '../crds/conditions';
import type { ScheduleChange } from '../contracts/messages';
import {
  scheduleChangedSignal,
  scheduleWorkflowId,
  snapshotJobChangedSignal,
  snapshotWorkflowId,
} from '../contracts/messages';
import { etcdSnapshotScheduleWorkflow } from './snapshot-schedule-workflow';
import { scheduledSnapshotName, snapshotScheduleRunWorkflow } from './snapshot-schedule-run-workflow';
import { etcdSnapshotWorkflow, MAX_SNAPSHOT_ATTEMPTS } from './snapshot-workflow';
import { etcdSnapshotVerifyWorkflow } from './snapshot-verify-workflow';
import { DEV_SERVER_START_TIMEOUT_MS, eventually, startDevServer } from '../test/support/dev-server';
import {
  ARTIFACT,
  fakeScheduleWorld,
  fakeSnapshotWorld,
  SPEC,
  VERIFIED,
} from '../test/support/fake-snapshot-worlds';
import type { SnapshotJobObservation } from '../contracts/snapshot';

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

const finished = (result: AgentResult): SnapshotJobObservation => ({
  state: 'finished',
  succeeded: result.ok,
  result,
  jobMessage: '',
});

async function runSnapshot(
  world: ReturnType<typeof fakeSnapshotWorld>,
  body?: (
    handle: Awaited<ReturnType<typeof env.client.workflow.start<typeof etcdSnapshotWorkflow>>>,
  ) => Promise<void>,
) {
  const taskQueue = `snapshot-test-${++queue}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle,
    activities: world.activities,
  });
  return worker.runUntil(async () => {
    const handle = await env.client.workflow.start(etcdSnapshotWorkflow, {
      workflowId: snapshotWorkflowId('ns', `snap-${queue}`),
      taskQueue,
      args: [{ snapshot: { namespace: 'ns', name: `snap-${queue}`, uid: 'snap-uid' }, spec: SPEC }],
    });
    if (body) await body(handle);
    return handle.result().then(
      (outcome) => ({ outcome, error: undefined }),
      (error: unknown) => ({ outcome: undefined, error }),
    );
  });
}

describe('etcdSnapshotWorkflow', () => {
  it('records the artifact the agent reported and ends Succeeded with Ready True', async () => {
    const world = fakeSnapshotWorld([[{ state: 'running' }, finished({ ok: true, artifact: ARTIFACT })]]);
    const { outcome } = await runSnapshot(world, async (handle) => {
      await eventually('a Job', () => world.created.length === 1);
      await handle.signal(snapshotJobChangedSignal);
    });
    expect(outcome).toMatchObject({ phase: 'Succeeded', reason: 'SnapshotSucceeded', artifact: ARTIFACT });
    expect(world.last()).toMatchObject({
      phase: 'Succeeded',
      artifact: ARTIFACT,
      attempts: 1,
      jobName: 'snap-1',
    });
    expect(world.last()?.conditions).toEqual([
      expect.objectContaining({ type: 'Ready', status: 'True', reason: 'SnapshotSucceeded' }),
      expect.objectContaining({ type: 'Verified', status: 'True', reason: 'SnapshotVerified' }),
    ]);
    expect(world.statuses[0]).toMatchObject({
      phase: 'Running',
      workflowId: expect.stringMatching(/^etcdsnapshot\/ns\//),
    });
    expect(world.created).toEqual([{ attempt: 1, endpoint: 'http://main-1.main-peer.ns.svc:2379' }]);
    expect(world.events).toEqual(['SnapshotStarted', 'SnapshotSucceeded', 'SnapshotVerified']);
  });

  it('checks the stored snapshot after upload: Unknown while its Job runs, then True with the figures', async () => {
    const world = fakeSnapshotWorld([[finished({ ok: true, artifact: ARTIFACT })]], undefined, [
      { state: 'running' },
      VERIFIED,
    ]);
    const { outcome } = await runSnapshot(world, async (handle) => {
      await eventually('Verified Unknown', () =>
        world.statuses.some((s) => s.conditions?.some((c) => c.type === 'Verified')),
      );
      await handle.signal(snapshotJobChangedSignal);
    });
    expect(outcome).toMatchObject({ phase: 'Succeeded' });
    expect(world.verifyCreated).toEqual([1]);
    const running = world.statuses.find((s) =>
      s.conditions?.some((c) => c.type === 'Verified' && c.status === 'Unknown'),
    );
    expect(running).toMatchObject({
      phase: 'Succeeded',
      verification: { jobName: 'snap-verify-1', run: 1, sourceHash: 1234, sourceCompactRevision: 0 },
    });
    expect(world.last()).toMatchObject({
      phase: 'Succeeded',
      artifact: ARTIFACT,
      verification: {
        jobName: 'snap-verify-1',
        run: 1,
        revision: 42,
        keys: 7,
        hashRevision: 42,
        hash: 1234,
        sourceHash: 1234,
        verifiedAt: expect.any(String),
      },
    });
  });

  it('a failed check leaves the snapshot Succeeded and Ready, says Verified=False with the reason and a Warning', async () => {
    const altered: SnapshotJobObservation = finished({
      ok: false,
      reason: 'ChecksumMismatch',
      message: 's3://backups/main/snap.db now has sha256 bbbb',
    });
    const world = fakeSnapshotWorld([[finished({ ok: true, artifact: ARTIFACT })]], undefined, [altered]);
    const { outcome, error } = await runSnapshot(world);
    expect(error).toBeUndefined();
    expect(outcome).toMatchObject({ phase: 'Succeeded', artifact: ARTIFACT });
    expect(world.last()?.phase).toBe('Succeeded');
    expect(world.last()?.conditions).toEqual([
      expect.objectContaining({ type: 'Ready', status: 'True' }),
      expect.objectContaining({
        type: 'Verified',
        status: 'False',
        reason: 'ObjectAltered',
        message: expect.stringContaining('now has sha256 bbbb'),
      }),
    ]);
    expect(world.events).toEqual(['SnapshotStarted', 'SnapshotSucceeded', 'SnapshotVerificationFailed']);
  });

  it('compares with the source hash only when it has one, and says so', async () => {
    const world = fakeSnapshotWorld([[finished({ ok: true, artifact: ARTIFACT })]], undefined, [VERIFIED], {
      why: 'hashkv of member main-1 at revision 42 failed: deadline',
    });
    await runSnapshot(world);
    expect(world.last()?.conditions?.find((c) => c.type === 'Verified')).toMatchObject({
      status: 'True',
      message: expect.stringContaining('not compared'),
    });
    expect(world.last()?.verification?.sourceHash).toBeUndefined();
  });

  it('cancelled while checking: deletes the verification Job, keeps the snapshot Succeeded', async () => {
    const world = fakeSnapshotWorld([[finished({ ok: true, artifact: ARTIFACT })]], undefined, [
      { state: 'running' },
    ]);
    const { error } = await runSnapshot(world, async (handle) => {
      await eventually('a verification Job', () => world.verifyCreated.length === 1);
      await handle.cancel();
    });
    expect(error).toBeInstanceOf(WorkflowFailedError);
    expect(world.verifyDeleted).toEqual([1]);
    expect(world.deleted).toEqual([]);
    expect(world.last()).toMatchObject({ phase: 'Succeeded', artifact: ARTIFACT });
    expect(world.last()?.conditions?.find((c) => c.type === 'Verified')).toMatchObject({
      status: 'False',
      reason: 'VerificationCancelled',
    });
  });

  it('fails with ClusterNotAvailable and runs no Job when the checks refuse', async () => {
    const world = fakeSnapshotWorld([], () => {
      throw ApplicationFailure.nonRetryable(
        'EtcdCluster ns/main is not Available (QuorumLost: 1 of 3)',
        FailureTypes.ClusterNotAvailable,
      );
    });
    const { outcome } = await runSnapshot(world);
    expect(outcome).toMatchObject({ phase: 'Failed', reason: 'ClusterNotAvailable' });
    expect(world.last()?.conditions?.[0]).toMatchObject({
      status: 'False',
      reason: 'ClusterNotAvailable',
      message: expect.stringContaining('QuorumLost'),
    });
    expect(world.created).toEqual([]);
    expect(world.events).toEqual(['SnapshotStarted', 'SnapshotFailed']);
  });

  it('fails at once on InvalidCredentials: one Job, no retry', async () => {
    const world = fakeSnapshotWorld([
      [finished({ ok: false, reason: 'InvalidCredentials', message: 'S3 said InvalidAccessKeyId' })],
    ]);
    const { outcome } = await runSnapshot(world);
    expect(outcome).toMatchObject({
      phase: 'Failed',
      reason: 'InvalidCredentials',
      message: 'S3 said InvalidAccessKeyId',
    });
    expect(world.created).toHaveLength(1);
    expect(world.last()).toMatchObject({ phase: 'Failed', attempts: 1 });
    expect(world.events).not.toContain('SnapshotRetrying');
  });

  it('retries a Job that died without a result with a new Job after a pause, and succeeds', async () => {
    const world = fakeSnapshotWorld([
      [
        {
          state: 'finished',
          succeeded: false,
          jobMessage: 'BackoffLimitExceeded: Job has reached the specified backoff limit',
        },
      ],
      [finished({ ok: true, artifact: ARTIFACT })],
    ]);
    const { outcome } = await runSnapshot(world);
    expect(outcome).toMatchObject({ phase: 'Succeeded' });
    expect(world.created.map((c) => c.attempt)).toEqual([1, 2]);
    expect(world.last()).toMatchObject({ attempts: 2, jobName: 'snap-2' });
    expect(world.events).toEqual([
      'SnapshotStarted',
      'SnapshotRetrying',
      'SnapshotSucceeded',
      'SnapshotVerified',
    ]);
  });

  it(`gives up after ${MAX_SNAPSHOT_ATTEMPTS} attempts of a transient failure, with the agent's reason`, async () => {
    const unavailable = [finished({ ok: false, reason: 'EtcdUnavailable', message: 'member went away' })];
    const world = fakeSnapshotWorld([unavailable, unavailable, unavailable, unavailable]);
    const { outcome } = await runSnapshot(world);
    expect(outcome).toMatchObject({
      phase: 'Failed',
      reason: 'EtcdUnavailable',
      message: expect.stringContaining(`after ${MAX_SNAPSHOT_ATTEMPTS} attempt(s)`),
    });
    expect(world.created).toHaveLength(MAX_SNAPSHOT_ATTEMPTS);
  }, 90_000);

  it('deletes its running Job when cancelled and says so in status', async () => {
    const world = fakeSnapshotWorld([[{ state: 'running' }]]);
    const { error } = await runSnapshot(world, async (handle) => {
      await eventually('a Job', () => world.created.length === 1);
      await handle.cancel();
    });
    expect(error).toBeInstanceOf(WorkflowFailedError);
    expect(world.deleted).toEqual([1]);
    expect(world.last()).toMatchObject({
      phase: 'Failed',
      conditions: [expect.objectContaining({ reason: 'SnapshotCancelled' })],
    });
  });
});

async function withWorker<T>(activities: object, body: (taskQueue: string) => Promise<T>): Promise<T> {
  const taskQueue = `schedule-test-${++queue}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle,
    activities,
  });
  return worker.runUntil(body(taskQueue));
}

const ref = { namespace: 'ns', name: 'daily', uid: 'sched-uid' };

describe('etcdSnapshotVerifyWorkflow', () => {
  const stored = {
    phase: 'Succeeded' as const,
    artifact: ARTIFACT,
    conditions: [
      {
        type: 'Ready',
        status: 'True' as const,
        reason: 'SnapshotSucceeded',
        message: 'stored',
        lastTransitionTime: '2026-03-01T12:00:00Z',
      },
    ],
    verification: {
      jobName: 'snap-verify-1',
      run: 1,
      sourceHash: 1234,
      sourceCompactRevision: 0,
      hash: 1234,
    },
  };
  async function reverify(world: ReturnType<typeof fakeSnapshotWorld>, status: typeof stored | object) {
    const taskQueue = `snapshot-verify-test-${++queue}`;
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle,
      activities: world.activities,
    });
    return worker.runUntil(
      env.client.workflow.execute(etcdSnapshotVerifyWorkflow, {
        workflowId: `etcdsnapshot/ns/snap-${queue}/verify/r1`,
        taskQueue,
        args: [
          {
            snapshot: { namespace: 'ns', name: `snap-${queue}`, uid: 'snap-uid' },
            spec: SPEC,
            status: status as never,
            request: 'r1',
          },
        ],
      }),
    );
  }

  it('runs the next check against the recorded source hash and names the request it answers', async () => {
    const world = fakeSnapshotWorld([], undefined, [
      finished({ ok: false, reason: 'ChecksumMismatch', message: 'now has sha256 bbbb' }),
    ]);
    const verdict = await reverify(world, stored);
    expect(verdict).toMatchObject({ status: 'False', reason: 'ObjectAltered' });
    expect(world.verifyCreated).toEqual([2]);
    expect(world.last()).toMatchObject({
      phase: 'Succeeded',
      artifact: ARTIFACT,
      verification: { jobName: 'snap-verify-2', run: 2, request: 'r1', sourceHash: 1234 },
    });
    expect(world.last()?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True' });
    expect(world.events).toEqual(['SnapshotVerificationFailed']);
  });

  it('checks nothing for a snapshot that has nothing stored', async () => {
    const world = fakeSnapshotWorld([]);
    const verdict = await reverify(world, { phase: 'Failed' });
    expect(verdict).toMatchObject({ skipped: expect.stringContaining('nothing stored') });
    expect(world.verifyCreated).toEqual([]);
    expect(world.statuses).toEqual([]);
  });
});

describe('etcdSnapshotScheduleWorkflow', () => {
  it('creates the Temporal Schedule, pauses it on suspend, and deletes it with the object', async () => {
    const world = fakeScheduleWorld();
    await withWorker(world.activities, async (taskQueue) => {
      const spec: EtcdSnapshotScheduleSpec = {
        clusterRef: { name: 'main' },
        schedule: '@every 1h',
        destination: SPEC.destination,
        suspend: false,
      };
      const change = (
        generation: number,
        more: Partial<ScheduleChange> & { spec?: EtcdSnapshotScheduleSpec } = {},
      ): ScheduleChange => ({
        uid: ref.uid,
        generation,
        spec,
        ...more,
      });
      const handle = await env.client.workflow.start(etcdSnapshotScheduleWorkflow, {
        workflowId: scheduleWorkflowId('ns', `daily-${queue}`),
        taskQueue,
        args: [{ schedule: ref, change: change(1) }],
      });
      await eventually('the schedule created and status written', () => world.statuses.length === 1);
      expect(world.statuses[0]?.conditions?.[0]).toMatchObject({
        type: 'Ready',
        status: 'True',
        reason: 'ScheduleActive',
      });

      await handle.signal(scheduleChangedSignal, change(2, { spec: { ...spec, suspend: true } }));
      await eventually('the schedule paused and status written', () => world.statuses.length === 2);
      expect(world.temporal.applied[1]).toEqual({ cron: '@every 1h', paused: true });
      await eventually(
        'status says suspended',
        () => world.statuses[1]?.conditions?.[0]?.reason === 'ScheduleSuspended',
      );

      // An older generation arriving late changes nothing.
      await handle.signal(scheduleChangedSignal, change(1));
      await handle.signal(scheduleChangedSignal, change(3, { spec: { ...spec, schedule: 'not a cron' } }));
      await eventually(
        'status says invalid',
        () => world.statuses.at(-1)?.conditions?.[0]?.reason === 'InvalidSchedule',
      );
      await eventually('a Warning event', () => world.events.length > 0);
      expect(world.events).toEqual(['InvalidSchedule']);

      await handle.signal(scheduleChangedSignal, change(3, { deleted: true }));
      await handle.result();
      expect(world.temporal.deleted).toBe(true);
    });
  });
});

describe('snapshotScheduleRunWorkflow', () => {
  const old = (name: string, minutesAgo: number): ScheduleSnapshotView => {
    const at = new Date(Date.now() - minutesAgo * 60_000).toISOString();
    return { name, phase: 'Succeeded', createdAt: at, takenAt: at, uri: `s3://backups/main/${name}.db` };
  };

  it('creates this run’s snapshot, waits for it, and prunes the oldest beyond keepLast, objects with their CRs', async () => {
    const world = fakeScheduleWorld([old('daily-a', 30), old('daily-b', 20), old('daily-c', 10)]);
    const summary = await withWorker(world.activities, (taskQueue) =>
      env.client.workflow.execute(snapshotScheduleRunWorkflow, {
        workflowId: `${scheduleWorkflowId('ns', 'daily')}/run-${queue}`,
        taskQueue,
        args: [{ schedule: ref }],
      }),
    );
    const created = world.snapshots
      .map((s) => s.name)
      .find((n) => !n.startsWith('daily-a') && !['daily-b', 'daily-c'].includes(n));
    expect(created).toMatch(/^daily-\d{14}$/);
    expect(world.pruned).toEqual([
      { name: 'daily-b', uri: 's3://backups/main/daily-b.db' },
      { name: 'daily-a', uri: 's3://backups/main/daily-a.db' },
    ]);
    expect(world.snapshots.map((s) => s.name).sort()).toEqual([created, 'daily-c'].sort());
    expect(world.statuses).toContainEqual(expect.objectContaining({ lastSnapshot: created }));
    expect(world.statuses.at(-1)).toEqual({ lastSuccessfulSnapshot: created });
    expect(summary).toContain('pruned 2, kept 2');
  });

  it('ends, writing and pruning nothing, when its schedule was deleted between its read and its create', async () => {
    const world = fakeScheduleWorld([old('daily-a', 30), old('daily-b', 20), old('daily-c', 10)]);
    const summary = await withWorker(
      { ...world.activities, createScheduledSnapshot: () => Promise.resolve('schedule-gone' as const) },
      (taskQueue) =>
        env.client.workflow.execute(snapshotScheduleRunWorkflow, {
          workflowId: `${scheduleWorkflowId('ns', 'daily')}/run-${queue}`,
          taskQueue,
          args: [{ schedule: ref }],
        }),
    );
    expect(summary).toBe('the EtcdSnapshotSchedule is gone; nothing to do');
    expect(world.statuses).toEqual([]);
    expect(world.pruned).toEqual([]);
  });

  it('names snapshots after the schedule and the run time in UTC', () => {
    expect(scheduledSnapshotName('daily', new Date('2026-03-01T04:05:06.789Z'))).toBe('daily-20260301040506');
  });
});
