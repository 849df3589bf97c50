// Records the histories workflows/replay.test.ts replays: canonical scenarios on the Temporal dev server against the fake world.
//
// The histories already recorded stand for older workflow code and must keep replaying: they are never
// rewritten. Without names this records the scenarios that have no history in the directory yet; with
// --only it records the named ones (after removing just their files). A change that running workflows
// depend on needs patched() instead of a new recording.
//
//   npx tsc -p tsconfig.json --outDir .local/replay-build
//   node .local/replay-build/test/replay/record-histories.js [--only name,name] [outDir, default test/replay/histories]
//   npx prettier --write test/replay/histories
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { Context } from '@temporalio/activity';
import type { EtcdClusterSpec } from '../../crds/etcd-cluster';
import { cacheRoot, toolPaths } from '../../localcluster/tool-cache';
import type { ScheduleSnapshotView } from '../../activities/snapshot-schedule-activities';
import type { EtcdSnapshotScheduleSpec } from '../../crds/etcd-snapshot-schedule';
import type { etcdClusterWorkflow } from '../../workflows/cluster-workflow';
import type { etcdSnapshotWorkflow } from '../../workflows/snapshot-workflow';
import type { etcdSnapshotScheduleWorkflow } from '../../workflows/snapshot-schedule-workflow';
import type { snapshotScheduleRunWorkflow } from '../../workflows/snapshot-schedule-run-workflow';
import type { ClusterChange, ClusterWorkflowInput, ScheduleChange } from '../../contracts/messages';
import {
  clusterChangedSignal,
  membersChangedSignal,
  clusterWorkflowId,
  operationWorkflowId,
  scheduleChangedSignal,
  scheduleWorkflowId,
  SearchAttributes,
  snapshotJobChangedSignal,
  snapshotWorkflowId,
  WorkflowTypes,
} from '../../contracts/messages';
import type { SnapshotJobObservation } from '../../contracts/snapshot';
import type { FakeCluster, FakeClusterOptions } from '../support/fake-cluster';
import { createFakeCluster } from '../support/fake-cluster';
import {
  ARTIFACT,
  fakeScheduleWorld,
  fakeSnapshotWorld,
  SPEC,
  VERIFIED,
} from '../support/fake-snapshot-worlds';

const NAMESPACE = 'default';

function specOf(replicas: number, more: Partial<EtcdClusterSpec> = {}): EtcdClusterSpec {
  return {
    replicas,
    version: '3.6.16',
    storage: { size: '1Gi', medium: '' },
    progressDeadlineSeconds: 600,
    ...more,
  };
}

async function until(what: string, probe: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const finished = (fake: FakeCluster, workflowId: string) =>
  until(
    `${workflowId} to finish`,
    () => fake.status?.lastOperation?.workflowId === workflowId && !fake.status.currentOperation,
  );

interface Run {
  fake: FakeCluster;
  /**
   * Writes the histories of the cluster workflow and its operations as they stand now, while they run: a
   * history stopped mid-way is what an operator upgrade meets. The scenario's files are then these, not the
   * completed ones.
   */
  capture: () => Promise<void>;
  op: (seq: number, type: Parameters<typeof operationWorkflowId>[3]) => string;
  change: (generation: number, spec: EtcdClusterSpec, more?: Partial<ClusterChange>) => Promise<void>;
  /** What the watcher sends when a member Pod or claim changed. */
  membersChanged: () => Promise<void>;
}

type Scenario = (run: Run) => Promise<void>;

/** Each scenario ends with the EtcdCluster deleted, so every recorded history is complete. */

/** A schedule workflow started on the fake world, its Temporal Schedule created and then suspended; `deleted` ends it. */
async function startSuspendedSchedule(
  world: ReturnType<typeof fakeScheduleWorld>,
  taskQueue: string,
  name: string,
) {
  const workflowId = scheduleWorkflowId(NAMESPACE, name);
  const spec: EtcdSnapshotScheduleSpec = {
    clusterRef: { name: 'main' },
    schedule: '@every 1h',
    destination: SPEC.destination,
    suspend: false,
  };
  const schedule = { namespace: NAMESPACE, name, uid: `uid-${name}` };
  const change = (generation: number, more: Partial<ScheduleChange> = {}): ScheduleChange => ({
    uid: schedule.uid,
    generation,
    spec,
    ...more,
  });
  const handle = await env.client.workflow.start<typeof etcdSnapshotScheduleWorkflow>(
    WorkflowTypes.schedule,
    {
      workflowId,
      taskQueue,
      args: [{ schedule, change: change(1) }],
    },
  );
  await until('the schedule created', () => world.statuses.length === 1);
  await handle.signal(scheduleChangedSignal, change(2, { spec: { ...spec, suspend: true } }));
  await until('the schedule paused', () => world.statuses.length === 2);
  return { workflowId, handle, deleted: change(2, { deleted: true }) };
}

/** A cluster scenario; `prepare` sets up the fake world before the cluster workflow starts (objects left by a crash). */
interface ClusterScenario {
  initial: EtcdClusterSpec;
  options?: FakeClusterOptions;
  prepare?: (fake: FakeCluster) => void;
  body: Scenario;
}

/**
 * The cluster workflow's next look, once armed, answers only after the scenario releases it (bounded: 10 s), so that
 * a spec change can arrive while it runs.
 */
const heldLook = { armed: false, held: false, released: false };
const holdClusterLook = (fake: FakeCluster) => {
  const observe = fake.activities.observeCluster;
  fake.activities.observeCluster = async (input) => {
    const own = !Context.current().info.workflowExecution?.workflowId.includes('/op/');
    if (own && heldLook.armed) {
      heldLook.armed = false;
      heldLook.held = true;
      const t0 = Date.now();
      while (!heldLook.released && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 20));
    }
    return observe(input);
  };
};

/** Bootstrap, scale 3 -> 5 -> 3, then delete: recorded once per generation of workflow code worth keeping. */
const threeToFiveToThree: Scenario = async ({ fake, op, change }) => {
  await finished(fake, op(1, 'Bootstrap'));
  await change(2, specOf(5));
  await finished(fake, op(2, 'ScaleUp'));
  await change(3, specOf(3));
  await finished(fake, op(3, 'ScaleDown'));
  await change(3, specOf(3), { deleted: true });
};

const scenarios: Record<string, ClusterScenario> = {
  // Bootstrap 3 with the initial members started together (patch bootstrap-together), scale 3 -> 4, then delete.
  bootstraptogether: {
    initial: specOf(3),
    body: async ({ fake, op, change }) => {
      await finished(fake, op(1, 'Bootstrap'));
      await change(2, specOf(4));
      await finished(fake, op(2, 'ScaleUp'));
      await change(2, specOf(4), { deleted: true });
    },
  },
  // A together bootstrap of 3 interrupted after the first Pod, found with spec.replicas 5: the other two start with
  // the same membership and the cluster grows to 5; then delete.
  bootstraphalf: {
    initial: specOf(5),
    prepare: (fake) =>
      fake.faults.interruptedBootstrap(
        ['bootstraphalf-0', 'bootstraphalf-1', 'bootstraphalf-2'],
        ['bootstraphalf-0'],
        specOf(3),
      ),
    body: async ({ fake, op, change }) => {
      await finished(fake, op(1, 'Bootstrap'));
      await change(1, specOf(5), { deleted: true });
    },
  },
  // Bootstrap 3 together, scale 3 -> 5 -> 3 (each operation started with its status write and Event in one task,
  // its first step from the parent's look, a removed member's objects cleaned up together), then delete.
  scaletogether: { initial: specOf(3), body: threeToFiveToThree },
  // Bootstrap 3, scale 3 -> 5 -> 3, then delete.
  lifecycle: { initial: specOf(3), body: threeToFiveToThree },
  // The same, recorded once the second removal of the 5 -> 3 no longer waits for the first one's clean-up (patch
  // removal-cleanup-deferred).
  scaledeferred: { initial: specOf(3), body: threeToFiveToThree },
  // The same, recorded once status is written from the look each operation ended on, together with its end's Event
  // (patch operation-end-look).
  endlook: { initial: specOf(3), body: threeToFiveToThree },
  // The same, recorded once a scale-down's last removal looks again before its budget follows the new size (patch
  // removal-budget-deferred).
  budgetdeferred: { initial: specOf(3), body: threeToFiveToThree },
  // The same, with every learner's first Pod waiting on its own publish: each is restarted once on its claim
  // (RestartLearner, contracts/learner-restart.ts) before its promotion.
  learnerrestart: {
    initial: specOf(3),
    options: { learnersAwaitOwnPublish: true },
    body: threeToFiveToThree,
  },
  // Scale 5 -> 2: the second and third removals are taken from the first one's look less the members removed
  // (patch scale-down-removals-from-one-look); the operation looks afresh only after the last.
  removalsonelook: {
    initial: specOf(5),
    body: async ({ fake, op, change }) => {
      await finished(fake, op(1, 'Bootstrap'));
      await change(2, specOf(2));
      await finished(fake, op(2, 'ScaleDown'));
      await change(2, specOf(2), { deleted: true });
    },
  },
  // Scale 3 -> 5 -> 3, recorded once each step goes to the cluster workflow with the look it was planned on, status
  // written from it (patches operation-step-look, operation-mirror-step-look), and a scale-down ends on the look its
  // last removal left (patch scale-down-ends-on-look-after-removal).
  steplook: { initial: specOf(3), body: threeToFiveToThree },
  // Scale 3 -> 5 signalled while the cluster workflow's look (started by a member change) runs: planned on that look
  // (patch replicas-change-on-running-look), with no status write or look between.
  replicasonlook: {
    initial: specOf(3),
    prepare: holdClusterLook,
    body: async ({ fake, op, change, membersChanged }) => {
      await finished(fake, op(1, 'Bootstrap'));
      heldLook.armed = true;
      await membersChanged();
      await until('the look held', () => heldLook.held);
      await change(2, specOf(5));
      await new Promise((r) => setTimeout(r, 300));
      heldLook.released = true;
      await finished(fake, op(2, 'ScaleUp'));
      await change(2, specOf(5), { deleted: true });
    },
  },
  // A scale up cancelled while its learner cannot catch up, halted, then retried with a retry token.
  cancelled: {
    initial: specOf(1),
    body: async ({ fake, op, change }) => {
      await finished(fake, op(1, 'Bootstrap'));
      fake.faults.learnerNeverCatchesUp();
      await change(2, specOf(2));
      await until('a learner', () => fake.learnerNames().length > 0 && fake.podNames().length === 2);
      await until('the step in status', () => fake.status?.currentOperation?.workflowId === op(2, 'ScaleUp'));
      await env.client.workflow.getHandle(op(2, 'ScaleUp')).cancel();
      await finished(fake, op(2, 'ScaleUp'));
      fake.faults.learnersCatchUp();
      await change(2, specOf(2), { retryToken: 'retry-1' });
      await finished(fake, op(3, 'ScaleUp'));
      await change(2, specOf(2), { deleted: true, retryToken: 'retry-1' });
    },
  },
  // A scale up whose progress deadline expires, then deletion while a second scale up waits on its learner.
  deadline: {
    initial: specOf(1),
    body: async ({ fake, op, change }) => {
      await finished(fake, op(1, 'Bootstrap'));
      fake.faults.learnerNeverCatchesUp();
      await change(2, specOf(2, { progressDeadlineSeconds: 4 }));
      await finished(fake, op(2, 'ScaleUp'));
      await change(3, specOf(2));
      await until('a learner', () => fake.learnerNames().length > 0);
      fake.faults.deleteClusterObject();
      await change(3, specOf(2), { deleted: true });
    },
  },
  // An options change rolls the 3 members (leader last), then delete.
  rollout: {
    initial: specOf(3),
    body: async ({ fake, op, change }) => {
      await finished(fake, op(1, 'Bootstrap'));
      await change(2, specOf(3, { options: { 'snapshot-count': '5000' } }));
      await finished(fake, op(2, 'Rollout'));
      await change(2, specOf(3, { options: { 'snapshot-count': '5000' } }), { deleted: true });
    },
  },
  // 3.5.35 -> 3.6.16 of 3 members (leader last), then delete.
  upgrade: {
    initial: specOf(3, { version: '3.5.35' }),
    body: async ({ fake, op, change }) => {
      await finished(fake, op(1, 'Bootstrap'));
      await change(2, specOf(3));
      await finished(fake, op(2, 'Upgrade'));
      await change(2, specOf(3), { deleted: true });
    },
  },
  // 3.6.16 -> 3.5.35 through etcd's downgrade API (enable, roll, etcd finishes), then delete.
  downgrade: {
    initial: specOf(3),
    body: async ({ fake, op, change }) => {
      await finished(fake, op(1, 'Bootstrap'));
      await change(2, specOf(3, { version: '3.5.35' }));
      await finished(fake, op(2, 'Downgrade'));
      await change(2, specOf(3, { version: '3.5.35' }), { deleted: true });
    },
  },
  // Two of three members' data wiped for good: PermanentQuorumLoss, a wrong uid refused, the uid approves a Recover
  // from the survivor (with spec.backup: a snapshot of what is left), a ScaleUp back to 3; then delete.
  quorumrecovery: {
    initial: specOf(3, { backup: { destination: SPEC.destination } }),
    body: async ({ fake, op, change }) => {
      await finished(fake, op(1, 'Bootstrap'));
      fake.faults.setRevision('quorumrecovery-0', 120);
      fake.faults.wipeMember('quorumrecovery-1');
      fake.faults.wipeMember('quorumrecovery-2');
      await change(1, specOf(3, { backup: { destination: SPEC.destination } }), {
        recoveryApproval: 'not-the-uid',
      });
      await until('the refusal', () => fake.events.some((e) => e.reason === 'RecoveryRefused'));
      await change(1, specOf(3, { backup: { destination: SPEC.destination } }), {
        recoveryApproval: 'uid-quorumrecovery',
      });
      await until('the Recover to end', () =>
        fake.statusWrites.some((w) => w.lastOperation?.workflowId === op(2, 'Recover')),
      );
      await finished(fake, op(3, 'ScaleUp'));
      await change(1, specOf(3, { backup: { destination: SPEC.destination } }), {
        deleted: true,
        recoveryApproval: 'uid-quorumrecovery',
      });
    },
  },
  // spec.auth added to a running cluster: root user, root role, auth on; then delete.
  auth: {
    initial: specOf(3),
    body: async ({ fake, op, change }) => {
      await finished(fake, op(1, 'Bootstrap'));
      const withAuth = specOf(3, { auth: { rootSecretRef: { name: 'auth-root' } } });
      await change(2, withAuth);
      await finished(fake, op(2, 'EnableAuth'));
      await change(2, withAuth, { deleted: true });
    },
  },
  // spec.auth from the start while etcd does not answer about auth: the Bootstrap waits (AuthUnknown) instead of ending
  // with auth off, and member changes are passed on to it without waiting for their delivery; once etcd answers, auth
  // is enabled inside it, and the cluster converges; then delete.
  authunknown: {
    initial: specOf(3, { auth: { rootSecretRef: { name: 'authunknown-root' } } }),
    prepare: (fake) => fake.faults.authUnanswered(),
    body: async ({ fake, op, change, membersChanged }) => {
      await until('the Bootstrap waiting on auth', () =>
        /AuthUnknown/.test(fake.status?.currentOperation?.step ?? ''),
      );
      for (let i = 0; i < 3; i++) {
        await membersChanged();
        await new Promise((r) => setTimeout(r, 300));
      }
      fake.faults.authAnswers();
      await membersChanged();
      await finished(fake, op(1, 'Bootstrap'));
      await until('auth on', () => fake.authEnabled());
      await change(1, specOf(3, { auth: { rootSecretRef: { name: 'authunknown-root' } } }), {
        deleted: true,
      });
    },
  },
  // Databases over the fragmentation threshold: every member defragmented, the leader last; then delete.
  defrag: {
    initial: specOf(3),
    body: async ({ fake, op, change }) => {
      await finished(fake, op(1, 'Bootstrap'));
      for (const m of fake.voterNames()) fake.setDbSize(m, 64 * MIB, 8 * MIB);
      const withDefrag = specOf(3, { maintenance: { defrag: { thresholdPercent: 30, minDbSize: '1Mi' } } });
      await change(2, withDefrag);
      await finished(fake, op(2, 'Defrag'));
      await change(2, withDefrag, { deleted: true });
    },
  },
  // Scale 3 -> 5 stopped mid-way: the first learner added and catching up (it never does while recorded).
  scalemidway: {
    initial: specOf(3),
    body: async ({ fake, op, change, capture }) => {
      await finished(fake, op(1, 'Bootstrap'));
      fake.faults.learnerNeverCatchesUp();
      await change(2, specOf(5));
      await until('a learner', () => fake.learnerNames().length > 0 && fake.podNames().length === 4);
      await until('its wait in status', () =>
        /catching up|wait/.test(fake.status?.currentOperation?.step ?? ''),
      );
      await new Promise((r) => setTimeout(r, 3000));
      await capture();
      fake.faults.learnersCatchUp();
      await finished(fake, op(2, 'ScaleUp'));
      await change(2, specOf(5), { deleted: true });
    },
  },
  // 3.5.35 -> 3.6.16 stopped mid-way: the first member restarted on 3.6.16 and not answering yet.
  upgrademidway: {
    initial: specOf(3, { version: '3.5.35' }),
    body: async ({ fake, op, change, capture }) => {
      await finished(fake, op(1, 'Bootstrap'));
      await change(2, specOf(3));
      await until('a member upgraded', () => fake.calls.some((c) => c.name === 'deleteMemberPodForUpgrade'));
      const first = fake.calls.find((c) => c.name === 'deleteMemberPodForUpgrade')?.input as {
        member: string;
      };
      fake.faults.makeUnreachable(first.member);
      await new Promise((r) => setTimeout(r, 3000));
      await capture();
      fake.faults.makeReachable(first.member);
      await finished(fake, op(2, 'Upgrade'));
      await change(2, specOf(3), { deleted: true });
    },
  },
};

const MIB = 1024 * 1024;

/**
 * The snapshot workflows' scenarios: each starts its workflow on the worker's task queue and sees it end. It
 * returns the workflows whose completed histories to write; a scenario stopped mid-way writes them itself
 * with `capture` while they run, and returns none.
 */
const snapshotScenarios: Record<
  string,
  (taskQueue: string, capture: (ids: string[]) => Promise<void>) => Promise<string[]>
> = {
  // One EtcdSnapshot: its Job runs, the watcher signals its change, the agent's result is recorded.
  snapshot: async (taskQueue) => {
    const world = fakeSnapshotWorld([[{ state: 'running' }, finishedJob]]);
    return withSnapshotWorker(world.activities, taskQueue, async () => {
      const workflowId = snapshotWorkflowId(NAMESPACE, 'snapshot');
      const handle = await env.client.workflow.start<typeof etcdSnapshotWorkflow>(WorkflowTypes.snapshot, {
        workflowId,
        taskQueue,
        args: [{ snapshot: { namespace: NAMESPACE, name: 'snapshot', uid: 'uid-snapshot' }, spec: SPEC }],
      });
      await until('a Job', () => world.created.length === 1);
      await handle.signal(snapshotJobChangedSignal);
      await handle.result();
      return [workflowId];
    });
  },
  // One EtcdSnapshot stored and then checked (patched 'verify-snapshot'): source hashkv, verification Job, Verified.
  snapshotverified: async (taskQueue) => {
    const world = fakeSnapshotWorld([[finishedJob]], undefined, [{ state: 'running' }, VERIFIED]);
    return withSnapshotWorker(world.activities, taskQueue, async () => {
      const workflowId = snapshotWorkflowId(NAMESPACE, 'snapshotverified');
      const handle = await env.client.workflow.start<typeof etcdSnapshotWorkflow>(WorkflowTypes.snapshot, {
        workflowId,
        taskQueue,
        args: [
          {
            snapshot: { namespace: NAMESPACE, name: 'snapshotverified', uid: 'uid-snapshotverified' },
            spec: SPEC,
          },
        ],
      });
      await until('a verification Job', () => world.verifyCreated.length === 1);
      await until('Verified Unknown', () =>
        world.statuses.some((st) => st.conditions?.some((c) => c.type === 'Verified')),
      );
      await handle.signal(snapshotJobChangedSignal);
      await handle.result();
      return [workflowId];
    });
  },
  // One EtcdSnapshotSchedule: its Temporal Schedule created, suspended, then the object deleted.
  schedule: async (taskQueue) => {
    const world = fakeScheduleWorld();
    return withSnapshotWorker(world.activities, taskQueue, async () => {
      const { workflowId, handle, deleted } = await startSuspendedSchedule(world, taskQueue, 'schedule');
      await handle.signal(scheduleChangedSignal, deleted);
      await handle.result();
      return [workflowId];
    });
  },
  // One run of a schedule: this run's snapshot created and waited for, the oldest beyond keepLast pruned.
  schedulerun: async (taskQueue) => {
    const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000).toISOString();
    const old = (name: string, minutesAgo: number): ScheduleSnapshotView => ({
      name,
      phase: 'Succeeded',
      createdAt: at(minutesAgo),
      takenAt: at(minutesAgo),
      uri: `s3://backups/main/${name}.db`,
    });
    const world = fakeScheduleWorld([
      old('schedulerun-a', 30),
      old('schedulerun-b', 20),
      old('schedulerun-c', 10),
    ]);
    return withSnapshotWorker(world.activities, taskQueue, async () => {
      const workflowId = `${scheduleWorkflowId(NAMESPACE, 'schedulerun')}/run-1`;
      await env.client.workflow.execute<typeof snapshotScheduleRunWorkflow>(WorkflowTypes.scheduleRun, {
        workflowId,
        taskQueue,
        args: [{ schedule: { namespace: NAMESPACE, name: 'schedulerun', uid: 'uid-schedulerun' } }],
      });
      return [workflowId];
    });
  },
};

/** The snapshot and schedule workflows stopped mid-way, as an operator upgrade meets them. */
Object.assign(snapshotScenarios, {
  // Attempt 1's Job failed on a transient reason, the retry pause passed, attempt 2's Job still streams.
  snapshotmidway: async (taskQueue: string, capture: (ids: string[]) => Promise<void>) => {
    const failedJob: SnapshotJobObservation = {
      state: 'finished',
      succeeded: false,
      result: { ok: false, reason: 'EtcdUnavailable', message: 'the member went away mid-stream' },
      jobMessage: '',
    };
    const world = fakeSnapshotWorld([[{ state: 'running' }, failedJob], [{ state: 'running' }]]);
    return withSnapshotWorker(world.activities, taskQueue, async () => {
      const workflowId = snapshotWorkflowId(NAMESPACE, 'snapshotmidway');
      const handle = await env.client.workflow.start<typeof etcdSnapshotWorkflow>(WorkflowTypes.snapshot, {
        workflowId,
        taskQueue,
        args: [
          {
            snapshot: { namespace: NAMESPACE, name: 'snapshotmidway', uid: 'uid-snapshotmidway' },
            spec: SPEC,
          },
        ],
      });
      await until('the first Job', () => world.created.length === 1);
      await handle.signal(snapshotJobChangedSignal);
      await until('the second Job', () => world.created.length === 2, 60_000);
      await new Promise((r) => setTimeout(r, 3000));
      await capture([workflowId]);
      // Ends as a deleted EtcdSnapshot does: cancelled, its Job deleted.
      await handle.cancel();
      await handle.result().catch(() => undefined);
      return [];
    });
  },
  // A schedule created, then suspended: the workflow waits for the next change.
  schedulemidway: async (taskQueue: string, capture: (ids: string[]) => Promise<void>) => {
    const world = fakeScheduleWorld();
    return withSnapshotWorker(world.activities, taskQueue, async () => {
      const { workflowId, handle, deleted } = await startSuspendedSchedule(
        world,
        taskQueue,
        'schedulemidway',
      );
      await new Promise((r) => setTimeout(r, 2000));
      await capture([workflowId]);
      await handle.signal(scheduleChangedSignal, deleted);
      await handle.result();
      return [];
    });
  },
  // One run of a schedule waiting for its snapshot, which is still Running.
  schedulerunmidway: async (taskQueue: string, capture: (ids: string[]) => Promise<void>) => {
    const world = fakeScheduleWorld();
    let running = true;
    let looks = 0;
    const activities = {
      ...world.activities,
      readSnapshotPhase: async (input: Parameters<typeof world.activities.readSnapshotPhase>[0]) => {
        looks += 1;
        return running ? ('Running' as const) : world.activities.readSnapshotPhase(input);
      },
    };
    return withSnapshotWorker(activities, taskQueue, async () => {
      const workflowId = `${scheduleWorkflowId(NAMESPACE, 'schedulerunmidway')}/run-1`;
      const handle = await env.client.workflow.start<typeof snapshotScheduleRunWorkflow>(
        WorkflowTypes.scheduleRun,
        {
          workflowId,
          taskQueue,
          args: [
            { schedule: { namespace: NAMESPACE, name: 'schedulerunmidway', uid: 'uid-schedulerunmidway' } },
          ],
        },
      );
      await until('two looks at the Running snapshot', () => looks >= 2, 30_000);
      await capture([workflowId]);
      running = false;
      await handle.result();
      return [];
    });
  },
});

const finishedJob: SnapshotJobObservation = {
  state: 'finished',
  succeeded: true,
  result: { ok: true, artifact: ARTIFACT },
  jobMessage: '',
};

let snapshotBundle: WorkflowBundleWithSourceMap;

async function withSnapshotWorker(
  activities: object,
  taskQueue: string,
  body: () => Promise<string[]>,
): Promise<string[]> {
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: snapshotBundle,
    activities,
  });
  return worker.runUntil(body());
}

let env: TestWorkflowEnvironment;

const { History } = temporal.api.history.v1;

// Not historyToJSON: with two copies of protobufjs 8 installed (under @temporalio/common and
// @temporalio/proto) its protojson rejects the History type ("type must be a Type"). protobufjs' own
// object form round-trips through History.fromObject, which is what workflows/replay.test.ts uses.
function historyToObject(history: temporal.api.history.v1.IHistory): object {
  return History.toObject(History.fromObject(history), { longs: String, enums: String, bytes: String });
}

async function record(
  name: string,
  scenario: ClusterScenario,
  workflowBundle: WorkflowBundleWithSourceMap,
  outDir: string,
): Promise<void> {
  const fake = createFakeCluster(scenario.options);
  scenario.prepare?.(fake);
  const taskQueue = `record-${name}`;
  const uid = `uid-${name}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle,
    activities: fake.activities,
  });
  let captured = false;
  const writeHistories = async (ids: string[]) => {
    for (const id of [...ids].sort()) {
      const history = await env.client.workflow.getHandle(id).fetchHistory();
      const file = join(outDir, `${id.replaceAll('/', '_')}.json`);
      writeFileSync(file, `${JSON.stringify(historyToObject(history), null, 2)}\n`);
      console.log(`recorded ${file}`);
    }
  };
  /** Every workflow the cluster workflow started so far: itself and each operation status has named. */
  const workflowIds = (clusterId: string) => {
    const ids = new Set([clusterId]);
    for (const s of fake.statusWrites) {
      if (s.currentOperation) ids.add(s.currentOperation.workflowId);
      if (s.lastOperation) ids.add(s.lastOperation.workflowId);
    }
    return [...ids];
  };
  await worker.runUntil(async () => {
    const input: ClusterWorkflowInput = {
      ref: { namespace: NAMESPACE, name, uid },
      change: { uid, generation: 1, spec: scenario.initial },
    };
    const handle: WorkflowHandle<typeof etcdClusterWorkflow> = await env.client.workflow.start<
      typeof etcdClusterWorkflow
    >(WorkflowTypes.cluster, { workflowId: clusterWorkflowId(NAMESPACE, name), taskQueue, args: [input] });
    await scenario.body({
      fake,
      capture: async () => {
        captured = true;
        await writeHistories(workflowIds(handle.workflowId));
      },
      op: (seq, type) => operationWorkflowId(NAMESPACE, name, seq, type),
      change: (generation, spec, more = {}) =>
        handle.signal(clusterChangedSignal, { uid, generation, spec, ...more }),
      membersChanged: () => handle.signal(membersChangedSignal),
    });
    await handle.result();
    // Every operation the cluster workflow started appears in status, as currentOperation first.
    if (!captured) await writeHistories(workflowIds(handle.workflowId));
  });
}

/** A scenario's files: `etcdcluster_default_<name>.json` and its operations', or its snapshot workflow's. */
const filesOf = (outDir: string, name: string) =>
  readdirSync(outDir).filter((f) =>
    name in snapshotScenarios
      ? [`etcdsnapshot_default_${name}`, `etcdsnapshotschedule_default_${name}`].some(
          (prefix) => f === `${prefix}.json` || f.startsWith(`${prefix}_`),
        )
      : f === `etcdcluster_default_${name}.json` || f.startsWith(`etcdcluster_default_${name}_op_`),
  );

const allScenarios = () => [...Object.keys(scenarios), ...Object.keys(snapshotScenarios)];

/** The scenarios to record: those --only names, else those without a history in outDir. */
function chosen(args: string[], outDir: string): string[] {
  const i = args.indexOf('--only');
  if (i < 0) return allScenarios().filter((name) => filesOf(outDir, name).length === 0);
  const names = (args[i + 1] ?? '').split(',').filter(Boolean);
  const unknown = names.filter((n) => !allScenarios().includes(n));
  if (names.length === 0 || unknown.length > 0)
    throw new Error(
      `--only takes scenario names from ${allScenarios().join(', ')}; unknown: ${unknown.join(', ')}`,
    );
  return names;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const positional = args.filter((a, i) => a !== '--only' && args[i - 1] !== '--only');
  const outDir = resolve(positional[0] ?? 'test/replay/histories');
  mkdirSync(outDir, { recursive: true });
  const names = chosen(args, outDir);
  console.log(names.length > 0 ? `recording ${names.join(', ')}` : 'every scenario has its histories');
  for (const name of names) for (const f of filesOf(outDir, name)) rmSync(join(outDir, f));
  if (names.length === 0) return;
  Runtime.install({ logger: new DefaultLogger('WARN') });
  env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: {
        type: 'existing-path',
        path: process.env.TEMPORAL_CLI_PATH ?? toolPaths(cacheRoot()).temporal,
      },
      searchAttributes: Object.values(SearchAttributes),
    },
  });
  try {
    const workflowBundle = await bundleWorkflowCode({
      workflowsPath: require.resolve('../../workflows/index'),
      logger: new DefaultLogger('WARN'),
    });
    snapshotBundle = workflowBundle;
    for (const name of names) {
      const scenario = scenarios[name];
      if (scenario) await record(name, scenario, workflowBundle, outDir);
      const snapshotScenario = snapshotScenarios[name];
      if (snapshotScenario) {
        const write = async (ids: string[]) => {
          for (const id of ids) {
            const history = await env.client.workflow.getHandle(id).fetchHistory();
            const file = join(outDir, `${id.replaceAll('/', '_')}.json`);
            writeFileSync(file, `${JSON.stringify(historyToObject(history), null, 2)}\n`);
            console.log(`recorded ${file}`);
          }
        };
        await write(await snapshotScenario(`record-${name}`, write));
      }
    }
  } finally {
    await env.teardown();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
