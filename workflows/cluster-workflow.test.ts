// The cluster and operation workflows on the real Temporal dev server, acting on the in-memory fake world.
import { CancelledFailure } from '@temporalio/common';
import type { WorkflowHandle } from '@temporalio/client';
import { WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { Worker } from '@temporalio/worker';
import { Context } from '@temporalio/activity';
import type { EtcdClusterSpec, EtcdClusterStatus } from '../crds/etcd-cluster';
import type { CarriedState } from './cluster-workflow';
import { etcdClusterWorkflow } from './cluster-workflow';
import { defragDueWorkflow } from './defrag-due-workflow';
import type { ClusterChange, ClusterWorkflowInput } from '../contracts/messages';
import {
  clusterChangedSignal,
  clusterWorkflowId,
  defragDueSignal,
  membersChangedSignal,
  operationWorkflowId,
  progressQuery,
  SearchAttributes,
} from '../contracts/messages';
import type { FakeCluster } from '../test/support/fake-cluster';
import { createFakeCluster } from '../test/support/fake-cluster';
import { DEV_SERVER_START_TIMEOUT_MS, eventually, startDevServer } from '../test/support/dev-server';

jest.setTimeout(120_000);

const NAMESPACE = 'default';

let env: TestWorkflowEnvironment;
let workflowBundle: WorkflowBundleWithSourceMap;
let queue = 0;

beforeAll(async () => {
  ({ env, workflowBundle } = await startDevServer());
}, DEV_SERVER_START_TIMEOUT_MS);

afterAll(async () => {
  await env?.teardown();
});

function specOf(replicas: number, more: Partial<EtcdClusterSpec> = {}): EtcdClusterSpec {
  return {
    replicas,
    version: '3.6.16',
    storage: { size: '1Gi', medium: '' },
    progressDeadlineSeconds: 600,
    ...more,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const condition = (status: EtcdClusterStatus | undefined, type: string) =>
  status?.conditions?.find((c) => c.type === type);

/** Waits until status shows `workflowId` finished (no operation running) and returns that status. */
function finished(fake: FakeCluster, workflowId: string, timeoutMs?: number) {
  return eventually(
    `${workflowId} to finish`,
    () => {
      const s = fake.status;
      return s?.lastOperation?.workflowId === workflowId && !s.currentOperation ? s : undefined;
    },
    timeoutMs,
  );
}

/** Holds a fake activity until `done` says so or 5 s passed (a workflow that never lets it still finishes); whether it did. */
async function heldUntil(done: () => boolean): Promise<boolean> {
  const t0 = Date.now();
  while (!done() && Date.now() - t0 < 5000) await sleep(20);
  return done();
}

/** Every activity the workflow scheduled completed before it ended: none was left running behind it. */
async function expectNothingLeftRunning(workflowId: string): Promise<void> {
  const events = (await env.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const scheduled = events
    .filter((e) => e.activityTaskScheduledEventAttributes)
    .map((e) => String(e.eventId));
  const completed = events.flatMap((e) =>
    e.activityTaskCompletedEventAttributes
      ? [String(e.activityTaskCompletedEventAttributes.scheduledEventId)]
      : [],
  );
  expect(completed.sort()).toEqual(scheduled.sort());
}

interface Scenario {
  name: string;
  fake: FakeCluster;
  handle: WorkflowHandle<typeof etcdClusterWorkflow>;
  uid: string;
  opId: (seq: number, type: Parameters<typeof operationWorkflowId>[3]) => string;
  change: (generation: number, spec: EtcdClusterSpec, more?: Partial<ClusterChange>) => Promise<void>;
}

/** Runs one cluster workflow on a worker of its own task queue for the length of `body`. */
async function withCluster(
  name: string,
  spec: EtcdClusterSpec,
  fake: FakeCluster,
  body: (s: Scenario) => Promise<void>,
): Promise<void> {
  const taskQueue = `cluster-workflow-test-${++queue}`;
  const uid = `uid-${name}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle,
    activities: fake.activities,
  });
  await worker.runUntil(async () => {
    const input: ClusterWorkflowInput = {
      ref: { namespace: NAMESPACE, name, uid },
      change: { uid, generation: 1, spec },
    };
    const handle = await env.client.workflow.start(etcdClusterWorkflow, {
      workflowId: clusterWorkflowId(NAMESPACE, name),
      taskQueue,
      args: [input],
    });
    try {
      await body({
        name,
        fake,
        handle,
        uid,
        opId: (seq, type) => operationWorkflowId(NAMESPACE, name, seq, type),
        change: (generation, s, more = {}) =>
          handle.signal(clusterChangedSignal, { uid, generation, spec: s, ...more }),
      });
    } finally {
      const description = await handle.describe();
      if (description.status.name === 'RUNNING') await handle.terminate('test over');
    }
  });
}

describe('etcdClusterWorkflow on the Temporal dev server', () => {
  it('bootstraps 3 members to 3 voters, Available, with lastOperation Succeeded and the expected conditions', async () => {
    const fake = createFakeCluster();
    await withCluster('boot', specOf(3), fake, async ({ opId, handle }) => {
      const status = await finished(fake, opId(1, 'Bootstrap'));

      expect(fake.voterNames()).toEqual(['boot-0', 'boot-1', 'boot-2']);
      expect(fake.learnerNames()).toEqual([]);
      expect(fake.podNames()).toEqual(['boot-0', 'boot-1', 'boot-2']);
      expect(fake.claimNames()).toEqual(['boot-0', 'boot-1', 'boot-2']);
      expect(fake.clusterObjects).toEqual({ peerService: true, clientService: true, pdbMinAvailable: 2 });

      expect(status.lastOperation).toMatchObject({
        type: 'Bootstrap',
        result: 'Succeeded',
        workflowId: 'etcdcluster/default/boot/op/1-bootstrap',
        observedGeneration: 1,
      });
      expect(status).toMatchObject({ observedGeneration: 1, replicas: 3, readyReplicas: 3 });
      expect(status.members?.map((m) => [m.name, m.role, m.ready])).toEqual([
        ['boot-0', 'voter', true],
        ['boot-1', 'voter', true],
        ['boot-2', 'voter', true],
      ]);
      expect(status.members?.filter((m) => m.leader).map((m) => m.name)).toEqual(['boot-0']);
      expect(condition(status, 'Available')).toMatchObject({ status: 'True', reason: 'ClusterAvailable' });
      expect(condition(status, 'Progressing')).toMatchObject({ status: 'False', reason: 'Converged' });
      expect(condition(status, 'Degraded')).toMatchObject({ status: 'False', reason: 'MembersHealthy' });

      // While the bootstrap ran, status said so.
      expect(
        fake.statusWrites.some(
          (s) =>
            s.currentOperation?.workflowId === opId(1, 'Bootstrap') &&
            condition(s, 'Progressing')?.reason === 'Bootstrapping',
        ),
      ).toBe(true);
      // The end's Event and the status write go out in one workflow task, either may be answered first.
      await eventually('the end Event', () => fake.events.length >= 2);
      expect(fake.events.map((e) => e.reason)).toEqual(['BootstrapStarted', 'OperationSucceeded']);

      const child = await env.client.workflow.getHandle(opId(1, 'Bootstrap')).describe();
      expect(await child.staticSummary()).toBe('bootstrap default/boot with 3 members');
      expect(child.parentExecution?.workflowId).toBe(handle.workflowId);
    });
  });

  it('starts the initial members of a brand-new cluster together: every claim, then every Pod, no learner', async () => {
    const fake = createFakeCluster();
    await withCluster('tog', specOf(3), fake, async ({ opId }) => {
      const status = await finished(fake, opId(1, 'Bootstrap'));
      expect(status.lastOperation).toMatchObject({ type: 'Bootstrap', result: 'Succeeded' });
      expect(fake.voterNames()).toEqual(['tog-0', 'tog-1', 'tog-2']);
      const initialMembers = ['tog-0', 'tog-1', 'tog-2'];
      const made = fake.calls
        .filter((c) => c.name === 'createMemberClaim' || c.name === 'createMemberPod')
        .map((c) => {
          const input = c.input as { member: string; mode?: string; initialMembers?: string[] };
          return [c.name, input.member, input.mode, input.initialMembers];
        });
      // Each kind runs at once for all three (in any order), and every claim is made before any Pod.
      const byMember = (a: unknown[], b: unknown[]) => String(a[1]).localeCompare(String(b[1]));
      expect(made.slice(0, 3).sort(byMember)).toEqual(
        initialMembers.map((m) => ['createMemberClaim', m, undefined, initialMembers]),
      );
      expect(made.slice(3).sort(byMember)).toEqual(
        initialMembers.map((m) => ['createMemberPod', m, 'seed', initialMembers]),
      );
      expect(fake.callsOf('addLearner')).toEqual([]);
      expect(fake.callsOf('promoteLearner')).toEqual([]);
    });
  });

  it('an operator killed after the first initial Pod converges: the rest start with the same membership', async () => {
    const fake = createFakeCluster();
    const initialMembers = ['half-0', 'half-1', 'half-2'];
    fake.faults.interruptedBootstrap(initialMembers, ['half-0'], specOf(3));
    const ids = fake.members().map((m) => m.id);
    await withCluster('half', specOf(3), fake, async ({ opId }) => {
      await finished(fake, opId(1, 'Bootstrap'));
      expect(fake.voterNames()).toEqual(initialMembers);
      // The same three members etcd derived from the membership, never a seed of another one.
      expect(fake.members().map((m) => m.id)).toEqual(ids);
      const pods = fake.callsOf('createMemberPod').map((c) => c.input as { member: string; mode: string });
      expect(pods.every((p) => p.mode === 'seed')).toBe(true);
      expect(fake.callsOf('createMemberPod').map((c) => c.input)).toEqual(
        expect.arrayContaining([expect.objectContaining({ member: 'half-1', initialMembers })]),
      );
      expect(fake.memberAdds()).toBe(0);
    });
  });

  it('a membership started together before spec.replicas changed is kept, and the cluster grows from it', async () => {
    const fake = createFakeCluster();
    const initialMembers = ['more-0', 'more-1', 'more-2'];
    fake.faults.interruptedBootstrap(initialMembers, ['more-0'], specOf(3));
    const ids = fake.members().map((m) => m.id);
    await withCluster('more', specOf(5), fake, async ({ opId }) => {
      await finished(fake, opId(1, 'Bootstrap'));
      expect(fake.voterNames()).toEqual([...initialMembers, 'more-3', 'more-4']);
      expect(
        fake
          .members()
          .map((m) => m.id)
          .slice(0, 3),
      ).toEqual(ids);
      const asked = fake.callsOf('addLearner').map((c) => (c.input as { member: string }).member);
      expect(asked).toEqual(['more-3', 'more-4']);
    });
  });

  it('waits while etcd refuses a new member after a promotion, then adds each member exactly once', async () => {
    const fake = createFakeCluster({ refusedAddsAfterPromotion: 2 });
    await withCluster('wait', specOf(1), fake, async ({ opId, change }) => {
      await finished(fake, opId(1, 'Bootstrap'));
      await change(2, specOf(3));
      const status = await finished(fake, opId(2, 'ScaleUp'));
      expect(status.lastOperation).toMatchObject({ type: 'ScaleUp', result: 'Succeeded' });
      expect(fake.voterNames()).toEqual(['wait-0', 'wait-1', 'wait-2']);
      // wait-1 joined at once (no promotion before it); wait-2 was refused twice, then added once.
      const asked = fake.callsOf('addLearner').map((c) => (c.input as { member: string }).member);
      expect(asked).toEqual(['wait-1', 'wait-2', 'wait-2', 'wait-2']);
      expect(fake.memberAdds()).toBe(2);
      expect(fake.podNames()).toEqual(['wait-0', 'wait-1', 'wait-2']);
      expect(fake.callsOf('deleteMemberClaim')).toEqual([]);
    });
  });

  it('scales 3 -> 5 as a child workflow op/<n>-scaleup with the static summary "scale ns/name 3 -> 5"', async () => {
    const fake = createFakeCluster();
    await withCluster('grow', specOf(3), fake, async ({ opId, change, handle }) => {
      await finished(fake, opId(1, 'Bootstrap'));
      await change(2, specOf(5));
      const childId = 'etcdcluster/default/grow/op/2-scaleup';
      expect(opId(2, 'ScaleUp')).toBe(childId);
      const status = await finished(fake, childId);

      expect(status.lastOperation).toMatchObject({
        type: 'ScaleUp',
        result: 'Succeeded',
        observedGeneration: 2,
      });
      expect(status).toMatchObject({ observedGeneration: 2, replicas: 5, readyReplicas: 5 });
      expect(fake.voterNames()).toEqual(['grow-0', 'grow-1', 'grow-2', 'grow-3', 'grow-4']);
      expect(fake.clusterObjects.pdbMinAvailable).toBe(3);

      // One learner at a time: grow-3 is promoted before grow-4 is added.
      const order = fake.calls
        .filter((c) => c.name === 'addLearner' || c.name === 'promoteLearner')
        .map((c) => `${c.name} ${(c.input as { member: string }).member}`)
        .filter((line) => /grow-[34]$/.test(line));
      expect(order.indexOf('addLearner grow-4')).toBeGreaterThan(order.lastIndexOf('promoteLearner grow-3'));

      // Its first step goes from the cluster workflow's look that chose it: the child does not look again first.
      const history = await env.client.workflow.getHandle(childId).fetchHistory();
      const activities = (history.events ?? []).flatMap((e) => {
        const name = e.activityTaskScheduledEventAttributes?.activityType?.name;
        return name ? [name] : [];
      });
      expect(activities.slice(0, 2)).toEqual(['ensureClusterObjects', 'createMemberClaim']);
      expect(activities).toContain('observeCluster');

      const child = await env.client.workflow.getHandle(childId).describe();
      expect(await child.staticSummary()).toBe('scale default/grow 3 -> 5');
      expect(child.parentExecution?.workflowId).toBe(handle.workflowId);
      expect(child.typedSearchAttributes.get(SearchAttributes.operationType)).toBe('ScaleUp');
      expect(child.typedSearchAttributes.get(SearchAttributes.clusterName)).toBe('grow');
      expect(child.typedSearchAttributes.get(SearchAttributes.clusterNamespace)).toBe('default');
      await expect(env.client.workflow.getHandle(childId).result()).resolves.toMatchObject({
        result: 'Succeeded',
      });
    });
  });

  it('restarts each learner that waits on its own publish once, on its claim, and promotes it once it answers', async () => {
    const fake = createFakeCluster({ learnersAwaitOwnPublish: true });
    await withCluster('publish', specOf(3), fake, async ({ opId, change }) => {
      await finished(fake, opId(1, 'Bootstrap'));
      await change(2, specOf(5));
      const status = await finished(fake, opId(2, 'ScaleUp'));
      expect(status.lastOperation).toMatchObject({ type: 'ScaleUp', result: 'Succeeded' });
      expect(fake.voterNames()).toEqual(['publish-0', 'publish-1', 'publish-2', 'publish-3', 'publish-4']);
      // Each learner's first Pod stopped once (by its uid), then started again on its claim before its promotion.
      const steps = fake.calls
        .filter((c) => ['stopLearnerPod', 'createMemberPod', 'promoteLearner'].includes(c.name))
        .map((c) => {
          const input = c.input as { member: string; mode?: string };
          return `${c.name} ${input.member}${input.mode ? ` ${input.mode}` : ''}`;
        })
        .filter((line) => /publish-[34]/.test(line));
      expect(steps).toEqual([
        'createMemberPod publish-3 join',
        'stopLearnerPod publish-3',
        'createMemberPod publish-3 restart',
        'promoteLearner publish-3',
        'createMemberPod publish-4 join',
        'stopLearnerPod publish-4',
        'createMemberPod publish-4 restart',
        'promoteLearner publish-4',
      ]);
      const reasons = fake.events.map((e) => e.reason);
      expect(reasons.filter((r) => r === 'LearnerRestarted')).toHaveLength(2);
      expect(fake.claimNames()).toEqual(['publish-0', 'publish-1', 'publish-2', 'publish-3', 'publish-4']);
    });
  });

  it('restarts a learner that waits on its own publish only once: a restart that does not help is waited out', async () => {
    const fake = createFakeCluster({ learnersAwaitOwnPublish: 'always' });
    await withCluster('once', specOf(3), fake, async ({ opId, change }) => {
      await finished(fake, opId(1, 'Bootstrap'));
      await change(2, specOf(4));
      await eventually('the learner restarted once and waiting', () => {
        const step = fake.status?.currentOperation?.step ?? '';
        return fake.callsOf('stopLearnerPod').length === 1 && /learner once-3 does not answer/.test(step);
      });
      // Looks go on (the fake's wait for an answer returns at once), and none restarts it again.
      const looks = fake.callsOf('observeCluster').length;
      await eventually('five more looks', () => fake.callsOf('observeCluster').length >= looks + 5);
      expect(fake.callsOf('stopLearnerPod')).toHaveLength(1);
      expect(
        fake.callsOf('createMemberPod').filter((c) => (c.input as { mode: string }).mode === 'restart'),
      ).toHaveLength(1);
    });
  });

  it("scales 5 -> 3 removing one member at a time; each removed member's Pod, claim and budget go out together", async () => {
    const fake = createFakeCluster();
    await withCluster('shrink', specOf(5), fake, async ({ opId, change, handle }) => {
      await finished(fake, opId(1, 'Bootstrap'));
      await change(2, specOf(3));
      const status = await finished(fake, opId(2, 'ScaleDown'));
      expect(status).toMatchObject({ observedGeneration: 2, replicas: 3, readyReplicas: 3 });
      expect(fake.voterNames()).toHaveLength(3);
      expect(fake.clusterObjects.pdbMinAvailable).toBe(2);

      const history = await env.client.workflow.getHandle(opId(2, 'ScaleDown')).fetchHistory();
      const scheduled = (history.events ?? []).flatMap((e) => {
        const a = e.activityTaskScheduledEventAttributes;
        const name = a?.activityType?.name;
        const data = a?.input?.payloads?.[0]?.data;
        const input = data ? (JSON.parse(Buffer.from(data).toString()) as { member?: string }) : {};
        return a && name
          ? [{ name, member: input.member, task: String(a.workflowTaskCompletedEventId) }]
          : [];
      });
      expect(scheduled.filter((x) => x.name === 'removeMember')).toHaveLength(2);
      // Each removed member's Pod and claim go out in one workflow task (the first's once the second is removed,
      // REMOVALS_FROM_ONE_LOOK_PATCH), and the budget for the new size with the last of them: none waited for another.
      const removed = ['shrink-4', 'shrink-3'];
      for (const member of removed) {
        const own = scheduled.filter((x) => x.member === member && x.name !== 'removeMember');
        expect(own.map((x) => x.name)).toEqual(['deleteMemberPod', 'deleteMemberClaim']);
        expect(new Set(own.map((x) => x.task)).size).toBe(1);
      }
      const budget = scheduled.filter((x) => x.name === 'ensureClusterObjects');
      expect(budget).toHaveLength(1);
      expect(budget[0]?.task).toBe(
        scheduled.find((x) => x.member === 'shrink-3' && x.name === 'deleteMemberPod')?.task,
      );

      // The cluster workflow started the operation in the same workflow task as its status write and Started Event.
      const parent = (await handle.fetchHistory()).events ?? [];
      const start = parent.find(
        (e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId === opId(2, 'ScaleDown'),
      )?.startChildWorkflowExecutionInitiatedEventAttributes;
      expect(start).toBeDefined();
      const sameTask = parent.flatMap((e) => {
        const a = e.activityTaskScheduledEventAttributes;
        return a && String(a.workflowTaskCompletedEventId) === String(start?.workflowTaskCompletedEventId)
          ? [a.activityType?.name]
          : [];
      });
      expect(sameTask).toEqual(['writeStatus', 'recordEvent']);
    });
  });

  it("scales 5 -> 3 removing the second member without waiting for the first one's Pod to go, and ends only once every clean-up is done", async () => {
    const fake = createFakeCluster();
    const deletePod = fake.activities.deleteMemberPod;
    const removals = () => fake.calls.filter((c) => c.name === 'removeMember').length;
    let secondRemovalWentFirst: boolean | undefined;
    // The first removed member's Pod deletion answers only once the second removal went out, or after 5 s: a workflow
    // that waits for that clean-up still finishes, and the assertion below names what it did.
    fake.activities.deleteMemberPod = async (input) => {
      if (removals() >= 1 && secondRemovalWentFirst === undefined) {
        secondRemovalWentFirst = await heldUntil(() => removals() >= 2);
      }
      return deletePod(input);
    };
    await withCluster('shrink-deferred', specOf(5), fake, async ({ opId, change }) => {
      await finished(fake, opId(1, 'Bootstrap'));
      await change(2, specOf(3));
      const status = await finished(fake, opId(2, 'ScaleDown'));
      expect(status).toMatchObject({ observedGeneration: 2, replicas: 3, readyReplicas: 3 });
      expect(secondRemovalWentFirst).toBe(true);
      expect(fake.voterNames()).toHaveLength(3);
      expect(fake.podNames()).toEqual(fake.voterNames().sort());
      expect(fake.clusterObjects.pdbMinAvailable).toBe(2);
      // Every activity the operation started answered before it ended: none was left behind when it completed.
      await expectNothingLeftRunning(opId(2, 'ScaleDown'));
    });
  });

  /** What each removeMember call named as removed before it (undefined: nothing). */
  const removedBefore = (fake: FakeCluster) =>
    fake.callsOf('removeMember').map((c) => (c.input as { removed?: string[] }).removed);

  /** The operation's own looks, moves and removals in the order they went out (the cluster workflow's looks left out). */
  function opSequence(fake: FakeCluster): string[] {
    const seq: string[] = [];
    const { observeCluster, removeMember, moveLeader } = fake.activities;
    fake.activities.observeCluster = async (input) => {
      if (Context.current().info.workflowExecution?.workflowId.includes('/op/')) seq.push('look');
      return observeCluster(input);
    };
    fake.activities.removeMember = async (input) => {
      seq.push(`remove ${fake.members().find((m) => m.id === input.id)?.name ?? input.id}`);
      return removeMember(input);
    };
    fake.activities.moveLeader = async (input) => {
      seq.push(`move leader to ${fake.members().find((m) => m.id === input.toId)?.name ?? input.toId}`);
      return moveLeader(input);
    };
    return seq;
  }

  type HistoryEvent = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>[number];

  /** The activities a workflow scheduled between two of its history events (by predicate), in order. */
  async function scheduledBetween(
    workflowId: string,
    from: (e: HistoryEvent) => boolean,
    to: (e: HistoryEvent) => boolean,
  ): Promise<string[]> {
    const events = (await env.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    const start = events.findIndex(from);
    const end = events.findIndex(to);
    expect(start).toBeGreaterThanOrEqual(0);
    expect(end).toBeGreaterThan(start);
    return events
      .slice(start, end)
      .flatMap((e) =>
        e.activityTaskScheduledEventAttributes
          ? [e.activityTaskScheduledEventAttributes.activityType?.name ?? '']
          : [],
      );
  }

  it("scales 5 -> 3 taking the second removal from the first one's look and ending on the look the last left", async () => {
    const fake = createFakeCluster();
    const seq = opSequence(fake);
    await withCluster('shrink-one-look', specOf(5), fake, async ({ opId, change, handle }) => {
      await finished(fake, opId(1, 'Bootstrap'));
      seq.length = 0;
      await change(2, specOf(3));
      const status = await finished(fake, opId(2, 'ScaleDown'));
      expect(status).toMatchObject({ observedGeneration: 2, replicas: 3, readyReplicas: 3 });
      // The cluster workflow's look starts the operation; the operation reads the cluster no more after it.
      expect(seq).toEqual(['remove shrink-one-look-4', 'remove shrink-one-look-3']);
      // The second removal is not sent through the first removed member, whose Pod is still there.
      expect(removedBefore(fake)).toEqual([undefined, ['shrink-one-look-4']]);
      expect(fake.podNames()).toEqual(fake.voterNames().sort());
      expect(fake.claimNames()).toEqual(fake.voterNames().sort());
      expect(fake.clusterObjects.pdbMinAvailable).toBe(2);
      await expectNothingLeftRunning(opId(2, 'ScaleDown'));
      // While the operation ran, the cluster workflow wrote each step's status from the look the operation sent with
      // it: no look of its own between the child's start and its end.
      const opWorkflowId = opId(2, 'ScaleDown');
      const during = await scheduledBetween(
        handle.workflowId,
        (e) => e.childWorkflowExecutionStartedEventAttributes?.workflowExecution?.workflowId === opWorkflowId,
        (e) =>
          e.childWorkflowExecutionCompletedEventAttributes?.workflowExecution?.workflowId === opWorkflowId,
      );
      expect(during).toContain('writeStatus');
      expect(during).not.toContain('observeCluster');
      // Both steps' lines reached status on the way.
      const lines = fake.statusWrites.flatMap((w) =>
        w.currentOperation?.step ? [w.currentOperation.step] : [],
      );
      expect(lines.some((l) => l.includes('shrink-one-look-4'))).toBe(true);
      expect(lines.some((l) => l.includes('shrink-one-look-3'))).toBe(true);
    });
  });

  it('plans a change of replicas alone that came while a look ran on that look: no status write or look between', async () => {
    const fake = createFakeCluster();
    const observe = fake.activities.observeCluster;
    let hold: (() => boolean) | undefined;
    // The cluster workflow's look, once armed, answers only when `hold` says so (bounded: 5 s).
    fake.activities.observeCluster = async (input) => {
      const own = !Context.current().info.workflowExecution?.workflowId.includes('/op/');
      const until = hold;
      if (own && until) {
        hold = undefined;
        await heldUntil(until);
      }
      return observe(input);
    };
    await withCluster('replicas-on-look', specOf(3), fake, async ({ opId, change, handle }) => {
      await finished(fake, opId(1, 'Bootstrap'));
      let changed = false;
      hold = () => changed;
      // A member change starts a look; the spec change comes while it runs.
      await handle.signal(membersChangedSignal);
      await eventually('the look held', () => hold === undefined);
      await change(2, specOf(5));
      await sleep(300);
      changed = true;
      await finished(fake, opId(2, 'ScaleUp'));
      const opWorkflowId = opId(2, 'ScaleUp');
      const between = await scheduledBetween(
        handle.workflowId,
        (e) => e.workflowExecutionSignaledEventAttributes?.signalName === clusterChangedSignal.name,
        (e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId === opWorkflowId,
      );
      // The held look was scheduled before the signal; after it, the only calls are the start's own write and Event.
      expect(between).toEqual(['writeStatus', 'recordEvent']);
      expect(fake.voterNames()).toHaveLength(5);
    });
  });

  it('scales 5 -> 2 from one look: no later removal is sent through a member removed before it', async () => {
    const fake = createFakeCluster();
    const seq = opSequence(fake);
    await withCluster('shrink-two', specOf(5), fake, async ({ opId, change }) => {
      await finished(fake, opId(1, 'Bootstrap'));
      seq.length = 0;
      await change(2, specOf(2));
      await finished(fake, opId(2, 'ScaleDown'));
      expect(seq).toEqual(['remove shrink-two-4', 'remove shrink-two-3', 'remove shrink-two-2']);
      expect(removedBefore(fake)).toEqual([undefined, ['shrink-two-4'], ['shrink-two-4', 'shrink-two-3']]);
      expect(fake.podNames()).toEqual(['shrink-two-0', 'shrink-two-1']);
      expect(fake.claimNames()).toEqual(['shrink-two-0', 'shrink-two-1']);
    });
  });

  it('keeps the leader from the look a removal left: the next removal takes a follower, with no look between', async () => {
    const fake = createFakeCluster();
    const seq = opSequence(fake);
    await withCluster('shrink-leader', specOf(5), fake, async ({ opId, change }) => {
      await finished(fake, opId(1, 'Bootstrap'));
      // The newest member but one leads: the plan's second choice by age, so the derived look must still know it.
      const leader = fake.members().find((m) => m.name === 'shrink-leader-3');
      await fake.activities.moveLeader({
        ref: { namespace: NAMESPACE, name: 'shrink-leader', uid: 'uid-shrink-leader' },
        from: 'shrink-leader-0',
        toId: leader?.id ?? '',
      });
      seq.length = 0;
      await change(2, specOf(3));
      await finished(fake, opId(2, 'ScaleDown'));
      expect(seq).toEqual(['remove shrink-leader-4', 'remove shrink-leader-2']);
      expect(fake.voterNames().sort()).toEqual(['shrink-leader-0', 'shrink-leader-1', 'shrink-leader-3']);
    });
  });

  it("a scale-down ending on its last removal's look ends only once that member's clean-up and the budget are done", async () => {
    const fake = createFakeCluster();
    const ensure = fake.activities.ensureClusterObjects;
    const removals = () => fake.calls.filter((c) => c.name === 'removeMember').length;
    let runningWhileHeld: boolean | undefined;
    // The budget after the last removal answers 300 ms late: the operation must still be running at that moment.
    fake.activities.ensureClusterObjects = async (input) => {
      if (removals() === 2 && runningWhileHeld === undefined) {
        await sleep(300);
        const op = env.client.workflow.getHandle(
          operationWorkflowId(NAMESPACE, 'shrink-budget', 2, 'ScaleDown'),
        );
        runningWhileHeld = (await op.describe()).status.name === 'RUNNING';
      }
      return ensure(input);
    };
    await withCluster('shrink-budget', specOf(5), fake, async ({ opId, change }) => {
      await finished(fake, opId(1, 'Bootstrap'));
      await change(2, specOf(3));
      const status = await finished(fake, opId(2, 'ScaleDown'));
      expect(status).toMatchObject({ observedGeneration: 2, replicas: 3, readyReplicas: 3 });
      expect(runningWhileHeld).toBe(true);
      expect(fake.podNames()).toEqual(fake.voterNames().sort());
      expect(fake.clusterObjects.pdbMinAvailable).toBe(2);
      await expectNothingLeftRunning(opId(2, 'ScaleDown'));
    });
  });

  it("writes the finished operation's status from the look it ended on, with its end's Event, then looks again", async () => {
    const fake = createFakeCluster();
    await withCluster('end-look', specOf(5), fake, async ({ opId, change, handle }) => {
      await finished(fake, opId(1, 'Bootstrap'));
      await change(2, specOf(3));
      await finished(fake, opId(2, 'ScaleDown'));
      // The operation hands back its last look: etcd's three members, the last removal's look less the member it removed.
      const opHistory =
        (await env.client.workflow.getHandle(opId(2, 'ScaleDown')).fetchHistory()).events ?? [];
      const returned = opHistory.find((e) => e.workflowExecutionCompletedEventAttributes)
        ?.workflowExecutionCompletedEventAttributes?.result?.payloads?.[0]?.data;
      const outcome = JSON.parse(Buffer.from(returned ?? new Uint8Array()).toString()) as {
        endLook?: { etcd?: { members: unknown[] } };
      };
      expect(outcome.endLook?.etcd?.members).toHaveLength(3);

      // In the cluster workflow, the first task after the child completed schedules the status write and the Event
      // together, before any look of its own; a look follows.
      const scheduledAfterEnd = async () => {
        const parent = (await handle.fetchHistory()).events ?? [];
        const ended = parent.findIndex(
          (e) =>
            e.childWorkflowExecutionCompletedEventAttributes?.workflowExecution?.workflowId ===
            opId(2, 'ScaleDown'),
        );
        const scheduled = parent.slice(Math.max(ended, 0)).flatMap((e) => {
          const a = e.activityTaskScheduledEventAttributes;
          return a ? [{ name: a.activityType?.name, task: String(a.workflowTaskCompletedEventId) }] : [];
        });
        return ended > 0 ? scheduled : [];
      };
      let after = await scheduledAfterEnd();
      for (let i = 0; i < 100 && !after.some((x) => x.name === 'observeCluster'); i++) {
        await sleep(100);
        after = await scheduledAfterEnd();
      }
      expect(after.slice(0, 2).map((x) => x.name)).toEqual(['recordEvent', 'writeStatus']);
      expect(after[0]?.task).toBe(after[1]?.task);
      expect(after[2]?.name).toBe('observeCluster');
      // That write is the finished status: three members, no operation, the scale-down Succeeded.
      const written = fake.statusWrites.find((w) => w.lastOperation?.workflowId === opId(2, 'ScaleDown'));
      expect(written).toMatchObject({
        replicas: 3,
        readyReplicas: 3,
        lastOperation: { result: 'Succeeded' },
      });
      expect(written?.currentOperation).toBeUndefined();
      expect(written?.members).toHaveLength(3);
    });
  });

  it('applies a spec changed while an operation runs after that operation', async () => {
    // Learners take a few observations to catch up, so the scale-up is still running when the change arrives.
    const fake = createFakeCluster({ catchUpAfterObservations: 3 });
    await withCluster('edit', specOf(1), fake, async ({ opId, change }) => {
      await finished(fake, opId(1, 'Bootstrap'));
      await change(2, specOf(3));
      await eventually('a learner during the scale-up', () => fake.learnerNames().length > 0);
      expect(fake.status?.currentOperation?.workflowId).toBe(opId(2, 'ScaleUp'));
      await change(3, specOf(4));

      const status = await finished(fake, opId(3, 'ScaleUp'));
      expect(status.lastOperation).toMatchObject({ result: 'Succeeded', observedGeneration: 3 });
      expect(status.observedGeneration).toBe(3);
      expect(fake.voterNames()).toEqual(['edit-0', 'edit-1', 'edit-2', 'edit-3']);
      // The first scale-up finished what it was started for (3) and the second did the rest.
      await expect(env.client.workflow.getHandle(opId(2, 'ScaleUp')).result()).resolves.toMatchObject({
        result: 'Succeeded',
      });
      await eventually('the last end Event', () => fake.events.length >= 6);
      expect(fake.events.map((e) => e.reason)).toEqual([
        'BootstrapStarted',
        'OperationSucceeded',
        'ScaleUpStarted',
        'OperationSucceeded',
        'ScaleUpStarted',
        'OperationSucceeded',
      ]);
      const scaleUp = fake.calls.filter(
        (c) => c.name === 'addLearner' && (c.input as { member: string }).member === 'edit-3',
      );
      expect(scaleUp.length).toBeGreaterThan(0);
    });
  });

  it('cancelling the operation while its learner cannot catch up removes that learner and halts until a retry token arrives', async () => {
    const fake = createFakeCluster();
    await withCluster('cancel', specOf(3), fake, async ({ opId, change, handle }) => {
      await finished(fake, opId(1, 'Bootstrap'));
      fake.faults.learnerNeverCatchesUp();
      await change(2, specOf(4));
      const childId = opId(2, 'ScaleUp');
      await eventually('the learner cancel-3 with its Pod', () => {
        return fake.learnerNames().includes('cancel-3') && fake.podNames().includes('cancel-3');
      });
      await eventually(
        'status to show the running scale up',
        () => fake.status?.currentOperation?.workflowId === childId,
      );

      await env.client.workflow.getHandle(childId).cancel();

      const status = await finished(fake, childId);
      expect(status.lastOperation).toMatchObject({
        type: 'ScaleUp',
        result: 'Cancelled',
        observedGeneration: 2,
      });
      expect(condition(status, 'Progressing')).toMatchObject({
        status: 'False',
        reason: 'OperationCancelled',
      });
      expect(fake.members().map((m) => m.name)).toEqual(['cancel-0', 'cancel-1', 'cancel-2']);
      expect(fake.podNames()).toEqual(['cancel-0', 'cancel-1', 'cancel-2']);
      expect(fake.claimNames()).toEqual(['cancel-0', 'cancel-1', 'cancel-2']);
      const childResult = await env.client.workflow
        .getHandle(childId)
        .result()
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      expect(childResult).toBeInstanceOf(WorkflowFailedError);
      expect((childResult as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
      expect(fake.events.map((e) => e.reason)).toContain('OperationCancelled');

      // Halted: more member changes start nothing for generation 2.
      expect(await handle.query(progressQuery)).toMatchObject({
        halted: { generation: 2, reason: 'Cancelled' },
      });
      const learnersAdded = fake.callsOf('addLearner').length;
      const observed = fake.callsOf('observeCluster').length;
      await handle.signal(membersChangedSignal);
      await handle.signal(membersChangedSignal);
      await eventually(
        'the signals to be observed',
        () => fake.callsOf('observeCluster').length >= observed + 1,
      );
      await sleep(2000);
      expect(fake.callsOf('addLearner').length).toBe(learnersAdded);
      expect(fake.status?.lastOperation?.workflowId).toBe(childId);
      expect(fake.status?.currentOperation).toBeUndefined();

      // A new retry token for the same generation runs it again as a new operation.
      fake.faults.learnersCatchUp();
      await change(2, specOf(4), { retryToken: 'retry-1' });
      const retried = await finished(fake, opId(3, 'ScaleUp'));
      expect(retried.lastOperation).toMatchObject({ result: 'Succeeded', observedGeneration: 2 });
      expect(condition(retried, 'Progressing')).toMatchObject({ status: 'False', reason: 'Converged' });
      expect(fake.voterNames()).toEqual(['cancel-0', 'cancel-1', 'cancel-2', 'cancel-3']);
      expect((await handle.query(progressQuery)).halted).toBeUndefined();
    });
  });

  it('a progress deadline that expires removes the learner, ends DeadlineExceeded and reports Stalled (condition and Event)', async () => {
    const fake = createFakeCluster();
    await withCluster('late', specOf(1), fake, async ({ opId, change, handle }) => {
      await finished(fake, opId(1, 'Bootstrap'));
      fake.faults.learnerNeverCatchesUp();
      // The CRD's minimum is 30 s; the workflow itself takes whatever the spec says.
      await change(2, specOf(2, { progressDeadlineSeconds: 4 }));
      const childId = opId(2, 'ScaleUp');

      const status = await finished(fake, childId);
      expect(status.lastOperation).toMatchObject({ type: 'ScaleUp', result: 'DeadlineExceeded' });
      expect(status.lastOperation?.message).toMatch(
        /no progress within 4s .*learner late-1 that it added was removed/,
      );
      expect(condition(status, 'Progressing')).toMatchObject({
        status: 'False',
        reason: 'Stalled',
      });
      expect(condition(status, 'Available')).toMatchObject({ status: 'True' });
      expect(fake.members().map((m) => m.name)).toEqual(['late-0']);
      expect(fake.podNames()).toEqual(['late-0']);
      expect(fake.claimNames()).toEqual(['late-0']);
      await expect(env.client.workflow.getHandle(childId).result()).resolves.toMatchObject({
        result: 'DeadlineExceeded',
      });
      expect(fake.events.filter((e) => e.type === 'Warning').map((e) => e.reason)).toEqual(['Stalled']);
      expect(await handle.query(progressQuery)).toMatchObject({
        halted: { generation: 2, reason: 'DeadlineExceeded' },
      });
    });
  });

  it('keeps a Temporal Schedule for spec.maintenance.defrag.schedule: a firing runs a Schedule Defrag, removing the schedule deletes it, and so does deleting the cluster', async () => {
    const fake = createFakeCluster();
    const withSchedule = (schedule: string) => specOf(3, { maintenance: { defrag: { schedule } } as never });
    await withCluster('sched', withSchedule('0 3 * * 0'), fake, async ({ opId, change, handle, uid }) => {
      const id = `etcdcluster/${NAMESPACE}/sched/defrag/${uid}`;
      await finished(fake, opId(1, 'Bootstrap'));
      await eventually('the schedule to be created', () =>
        fake.temporalSchedules()[id] === '0 3 * * 0' ? true : undefined,
      );
      expect(fake.defrags()).toEqual([]);

      // A firing for another object of the same name is not this cluster's.
      await handle.signal(defragDueSignal, { uid: 'someone-else' });
      // What the Temporal Schedule starts at a firing: it signals the cluster workflow.
      const ref = { namespace: NAMESPACE, name: 'sched', uid };
      const taskQueue = (await handle.describe()).taskQueue;
      await expect(
        env.client.workflow.execute(defragDueWorkflow, {
          workflowId: `${id}/due-1`,
          taskQueue,
          args: [{ ref }],
        }),
      ).resolves.toBe('signalled');
      const served = await finished(fake, opId(2, 'Defrag'));
      expect(served.lastOperation?.message).toMatch(/^Schedule: /);
      expect(fake.defrags().map((d) => d.member)).toHaveLength(3);
      // Served once: no second Defrag follows without another firing.
      await sleep(1500);
      expect(fake.status?.lastOperation?.workflowId).toBe(opId(2, 'Defrag'));
      expect(fake.status?.currentOperation).toBeUndefined();

      await change(2, withSchedule('@daily'));
      await eventually('the schedule to be updated', () =>
        fake.temporalSchedules()[id] === '@daily' ? true : undefined,
      );
      await change(3, specOf(3));
      await eventually('the schedule to be deleted', () =>
        fake.temporalSchedules()[id] === undefined ? true : undefined,
      );
      // A firing that was already under way when the schedule went does nothing.
      await handle.signal(defragDueSignal, { uid });
      await change(4, withSchedule('*/5 * * * *'));
      await eventually('the schedule to be created again', () =>
        fake.temporalSchedules()[id] === '*/5 * * * *' ? true : undefined,
      );
      await change(4, withSchedule('*/5 * * * *'), { deleted: true });
      await expect(handle.result()).resolves.toBeUndefined();
      expect(fake.temporalSchedules()).toEqual({});
      expect(fake.defrags()).toHaveLength(3);
    });
  });

  it('a schedule Temporal refuses is told as a DefragScheduleRefused Warning Event once, and the cluster goes on', async () => {
    const fake = createFakeCluster({ refuseDefragSchedule: 'invalid day of month' });
    const spec = specOf(1, { maintenance: { defrag: { schedule: '0 0 31 2 *' } } as never });
    await withCluster('refused', spec, fake, async ({ opId, change }) => {
      await finished(fake, opId(1, 'Bootstrap'));
      const refused = await eventually('the refusal Event', () =>
        fake.events.find((e) => e.reason === 'DefragScheduleRefused'),
      );
      expect(refused).toMatchObject({ type: 'Warning' });
      expect(refused.message).toContain('"0 0 31 2 *": invalid day of month');
      await change(2, { ...spec, replicas: 3 });
      await finished(fake, opId(2, 'ScaleUp'));
      expect(fake.events.filter((e) => e.reason === 'DefragScheduleRefused')).toHaveLength(1);
      expect(fake.callsOf('applyDefragSchedule')).toHaveLength(1);
    });
  });

  it('a schedule that cannot be kept (not a refusal) is told as a DefragScheduleFailed Warning Event, and the cluster goes on', async () => {
    const fake = createFakeCluster({ failDefragSchedule: 'namespace default: permission denied' });
    const spec = specOf(1, { maintenance: { defrag: { schedule: '@daily' } } as never });
    await withCluster('failed', spec, fake, async ({ opId, change }) => {
      await finished(fake, opId(1, 'Bootstrap'));
      const failed = await eventually('the failure Event', () =>
        fake.events.find((e) => e.reason === 'DefragScheduleFailed'),
      );
      expect(failed).toMatchObject({ type: 'Warning' });
      expect(failed.message).toContain('"@daily": namespace default: permission denied');
      await change(2, { ...spec, replicas: 3 });
      await finished(fake, opId(2, 'ScaleUp'));
      // Not tried again on every look: once within the hour.
      expect(fake.events.filter((e) => e.reason === 'DefragScheduleFailed')).toHaveLength(1);
      expect(fake.callsOf('applyDefragSchedule')).toHaveLength(1);
      expect(fake.temporalSchedules()).toEqual({});
    });
  });

  it('a firing with no cluster workflow running ends the firing with a note, not a failure', async () => {
    const taskQueue = `cluster-workflow-test-${++queue}`;
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle });
    const ref = { namespace: NAMESPACE, name: 'nobody', uid: 'uid-nobody' };
    await worker.runUntil(
      expect(
        env.client.workflow.execute(defragDueWorkflow, {
          workflowId: 'etcdcluster/default/nobody/defrag/uid-nobody/due-1',
          taskQueue,
          args: [{ ref }],
        }),
      ).resolves.toBe('no-cluster-workflow'),
    );
  });

  it('a deletion signal ends the cluster workflow', async () => {
    const fake = createFakeCluster();
    await withCluster('gone', specOf(1), fake, async ({ opId, change, handle, uid }) => {
      await finished(fake, opId(1, 'Bootstrap'));
      // A signal for another object of the same name is ignored.
      await handle.signal(clusterChangedSignal, {
        uid: 'someone-else',
        generation: 9,
        spec: specOf(1),
        deleted: true,
      });
      await change(1, specOf(1), { deleted: true, uid });
      await expect(handle.result()).resolves.toBeUndefined();
      // The signal for the other uid did not end it earlier: it ran until the real deletion.
      expect(fake.voterNames()).toEqual(['gone-0']);
    });
  });

  it('deleting the EtcdCluster while a scale-up waits on its learner ends both workflows without undoing anything, even with every member Pod gone', async () => {
    // The scale-up's looks are held while the world changes: a look between the object's deletion and the
    // cancellation (at load: once in a unit run beside a 50-cluster bench, once in CI beside the stack's `up`) found
    // the object or the Pods gone and the scale-up ended on its own (COMPLETED), so the cancellation under test never
    // happened.
    let releaseLooks: (() => void) | undefined;
    let held: Promise<void> | undefined;
    const fake = createFakeCluster({ beforeOperationLook: () => held ?? Promise.resolve() });
    await withCluster('drop', specOf(1), fake, async ({ opId, change, handle }) => {
      await finished(fake, opId(1, 'Bootstrap'));
      fake.faults.learnerNeverCatchesUp();
      await change(2, specOf(2));
      await eventually('the learner drop-1', () => fake.learnerNames().includes('drop-1'));
      held = new Promise((r) => (releaseLooks = r));
      // What `kubectl delete` does: the object goes, the watcher signals, the garbage collector takes the member
      // Pods, so no member answers: a MemberRemove would be retried for ever.
      fake.faults.deleteClusterObject();
      const deletedAt = Date.now();
      await change(2, specOf(2), { deleted: true });
      const scaleUp = env.client.workflow.getHandle(opId(2, 'ScaleUp'));
      for (let tries = 0; ; tries++) {
        const events = (await scaleUp.fetchHistory()).events ?? [];
        if (events.some((e) => e.workflowExecutionCancelRequestedEventAttributes)) break;
        if (tries >= 100) throw new Error('the scale-up was not asked to cancel within 10 s of the deletion');
        await new Promise((r) => setTimeout(r, 100));
      }
      for (const pod of fake.podNames()) fake.faults.deletePod(pod);
      held = undefined;
      releaseLooks?.();
      await expect(handle.result()).resolves.toBeUndefined();
      const child = await scaleUp.describe();
      expect(child.status.name).toBe('CANCELLED');
      expect(child.closeTime?.getTime()).toBeLessThan(deletedAt + 30_000);
      expect(fake.callsOf('removeMember')).toEqual([]);
      expect(fake.callsOf('clusterGoingAway')).toHaveLength(1);
    });
  });

  it('an EtcdCluster created again under the same name while an operation runs gets its own run once the old one ends', async () => {
    const fake = createFakeCluster();
    await withCluster('again', specOf(1), fake, async ({ opId, change, handle, uid }) => {
      await finished(fake, opId(1, 'Bootstrap'));
      const firstRun = (await handle.describe()).runId;
      fake.faults.learnerNeverCatchesUp();
      await change(2, specOf(2));
      await eventually('the learner again-1', () => fake.learnerNames().includes('again-1'));
      // Deleted and created again at once: the watcher's two signals reach the old run, still in its operation.
      fake.faults.deleteClusterObject();
      await change(2, specOf(2), { deleted: true });
      fake.faults.recreateClusterObject('uid-again-2');
      fake.faults.learnersCatchUp();
      await handle.signal(clusterChangedSignal, { uid: 'uid-again-2', generation: 1, spec: specOf(3) });
      // A late deletion signal for the old object is not for the new run.
      await handle.signal(clusterChangedSignal, { uid, generation: 2, spec: specOf(2), deleted: true });

      const status = await finished(fake, opId(3, 'Bootstrap'));
      expect(status).toMatchObject({ observedGeneration: 1, replicas: 3, readyReplicas: 3 });
      expect(fake.voterNames()).toEqual(['again-0', 'again-1', 'again-2']);
      const run = await handle.describe();
      expect(run.status.name).toBe('RUNNING');
      expect(run.runId).not.toBe(firstRun);
      expect(run.searchAttributes).toMatchObject({ EtcdClusterUID: ['uid-again-2'] });
      const old = await env.client.workflow.getHandle(opId(2, 'ScaleUp')).describe();
      expect(old.status.name).toBe('CANCELLED');
    });
  });

  it('a refusal told before continue-as-new is not told again by the next run, which carries the guard', async () => {
    const fake = createFakeCluster();
    await withCluster('told', specOf(3), fake, async ({ opId, change, handle, uid }) => {
      await finished(fake, opId(1, 'Bootstrap'));
      const refused = specOf(3, { version: '3.5.20' });
      await change(2, refused);
      const told = await eventually('the refusal Event', () =>
        fake.events.find((e) => e.reason === 'UpgradePathRefused'),
      );
      await handle.terminate('the next run starts from carried state');
      const taskQueue = `cluster-workflow-test-${queue}`;
      const nextRun = (carried: Partial<CarriedState>) =>
        env.client.workflow.start(etcdClusterWorkflow, {
          workflowId: clusterWorkflowId(NAMESPACE, 'told'),
          taskQueue,
          args: [
            {
              ref: { namespace: NAMESPACE, name: 'told', uid },
              change: { uid, generation: 2, spec: refused },
              carried: { recorded: { members: [], paused: false }, seq: 1, ...carried },
            },
          ],
        });
      const observed = () => fake.callsOf('observeCluster').length;

      // Carried: the next run observes and plans the same refusal, and says nothing.
      let before = observed();
      const carriedRun = await nextRun({ refusalReported: told.message });
      await eventually('the next run observed', () => observed() > before);
      await sleep(1000);
      expect(fake.events.filter((e) => e.reason === 'UpgradePathRefused')).toHaveLength(1);
      await carriedRun.terminate('next case');

      // Not carried (as before this change): the same refusal is told a second time.
      before = observed();
      const forgetful = await nextRun({});
      await eventually('the second Event', () =>
        fake.events.filter((e) => e.reason === 'UpgradePathRefused').length === 2 ? true : undefined,
      );
      expect(observed()).toBeGreaterThan(before);
      await forgetful.terminate('test over');
    });
  });

  it("an idle cluster's database size moving by a few KiB writes no status; a move of 1 MiB does", async () => {
    const fake = createFakeCluster();
    await withCluster('sizes', specOf(3), fake, async ({ opId, handle, name }) => {
      await finished(fake, opId(1, 'Bootstrap'));
      await sleep(1000);
      const member = `${name}-0`;
      const look = async () => {
        const observations = fake.callsOf('observeCluster').length;
        await handle.signal(membersChangedSignal);
        await eventually('a look', () => fake.callsOf('observeCluster').length > observations);
        await sleep(500);
      };
      fake.setDbSize(member, 1 << 20, 20480);
      await look();
      const writes = fake.statusWrites.length;
      fake.setDbSize(member, 1 << 20, 24576);
      await look();
      expect(fake.statusWrites.length).toBe(writes);
      fake.setDbSize(member, 3 << 20, 24576);
      await look();
      expect(fake.statusWrites.length).toBe(writes + 1);
      expect(fake.status?.members?.find((m) => m.name === member)).toMatchObject({
        dbSize: 3 << 20,
        dbSizeInUse: 24576,
      });
    });
  });

  it('an idle cluster writes status once and not again on further membersChanged signals', async () => {
    const fake = createFakeCluster();
    await withCluster('idle', specOf(3), fake, async ({ opId, handle }) => {
      await finished(fake, opId(1, 'Bootstrap'));
      await sleep(1000);
      const writes = fake.statusWrites.length;
      const observations = fake.callsOf('observeCluster').length;
      for (let i = 0; i < 5; i++) {
        await handle.signal(membersChangedSignal);
        await sleep(300);
      }
      await eventually(
        'the signals to be observed',
        () => fake.callsOf('observeCluster').length > observations,
      );
      await sleep(1000);
      expect(fake.statusWrites.length).toBe(writes);
      // The converged status was written exactly once.
      expect(fake.statusWrites.filter((s) => s.lastOperation !== undefined)).toHaveLength(1);
      // Its three members started together: no learner was ever added.
      expect(fake.callsOf('addLearner')).toHaveLength(0);
    });
  });
});
