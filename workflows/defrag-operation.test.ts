// The Defrag operation on the real Temporal dev server against the in-memory fake world: a threshold Defrag member by member with the leader last, its cooldown, and NOSPACE cleared by compaction, defragmentation and disarm.
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { EtcdClusterSpec, EtcdClusterStatus } from '../crds/etcd-cluster';
import { membersChangedSignal, operationWorkflowId, progressQuery } from '../contracts/messages';
import type { FakeCluster } from '../test/support/fake-cluster';
import {
  afterSpecChange,
  DEV_SERVER_START_TIMEOUT_MS,
  eventually,
  operationFinished,
  startDevServer,
} from '../test/support/dev-server';

jest.setTimeout(120_000);

let env: TestWorkflowEnvironment;
let workflowBundle: WorkflowBundleWithSourceMap;

beforeAll(async () => {
  ({ env, workflowBundle } = await startDevServer());
}, DEV_SERVER_START_TIMEOUT_MS);

afterAll(async () => {
  await env?.teardown();
});

const MIB = 1024 * 1024;

const spec = (more: Partial<EtcdClusterSpec> = {}): EtcdClusterSpec => ({
  replicas: 3,
  version: '3.6.16',
  storage: { size: '1Gi', medium: '' },
  progressDeadlineSeconds: 600,
  ...more,
});

const degraded = (s: EtcdClusterStatus | undefined) => s?.conditions?.find((c) => c.type === 'Degraded');
const callIndexes = (fake: FakeCluster, name: string) =>
  fake.calls.flatMap((c, i) => (c.name === name ? [i] : []));
const defragmented = (fake: FakeCluster) =>
  fake.callsOf('defragmentMember').map((c) => (c.input as { member: string }).member);

/** Every member's database 200 MiB with 20 MiB in use: 90 % free, over any threshold below that. */
function fragmentAll(fake: FakeCluster, name: string): void {
  for (const i of [0, 1, 2]) fake.setDbSize(`${name}-${i}`, 200 * MIB, 20 * MIB);
}

describe('the Defrag operation', () => {
  it('defragments a fragmented cluster member by member, followers first, the leader last after moving leadership, and not again within the cooldown', async () => {
    const name = 'thr';
    const withThreshold = spec({ maintenance: { defrag: { thresholdPercent: 50, minDbSize: '100Mi' } } });
    const to = withThreshold;
    await afterSpecChange(
      { env, workflowBundle },
      { name, from: withThreshold, to, options: {} },
      async (fake, handle) => {
        const leader = fake.status?.members?.find((m) => m.leader)?.name;
        expect(leader).toBeDefined();
        fragmentAll(fake, name);
        // What the alarm poller or the watcher does: the workflow looks again.
        await handle.signal(membersChangedSignal);
        const status = await operationFinished(fake, operationWorkflowId('default', name, 2, 'Defrag'));
        expect(status.lastOperation).toMatchObject({ type: 'Defrag', result: 'Succeeded' });
        expect(status.lastOperation?.message).toMatch(/^Threshold: /);

        // One member at a time, followers by ordinal, the one that led last, after leadership moved away.
        const order = defragmented(fake);
        expect(order).toHaveLength(3);
        expect(new Set(order)).toEqual(new Set([`${name}-0`, `${name}-1`, `${name}-2`]));
        const defrags = fake.defrags();
        const last = defrags[defrags.length - 1];
        expect(last?.member).toBe(leader);
        expect(last?.leader).not.toBe(last?.member);
        for (const d of defrags.slice(0, -1)) expect(d.leader).toBe(leader);
        const moves = callIndexes(fake, 'moveLeader');
        const steps = callIndexes(fake, 'defragmentMember');
        expect(moves).toHaveLength(1);
        expect(moves[0]).toBeGreaterThan(steps[1] ?? Infinity);
        expect(moves[0]).toBeLessThan(steps[2] ?? -1);
        // No compaction and no disarm: those are NOSPACE's.
        expect(fake.callsOf('compactToCurrentRevision')).toEqual([]);
        expect(fake.callsOf('disarmNoSpace')).toEqual([]);
        expect(status.members?.every((m) => m.dbSize === 20 * MIB)).toBe(true);

        // Fragmentation comes straight back: within the cooldown, the next look starts no second Defrag. The
        // look's status write shows the new sizes; had it started a Defrag, that write would name it.
        fragmentAll(fake, name);
        await handle.signal(membersChangedSignal);
        const looked = await eventually('status to show the fragmentation again', () => {
          const s = fake.status;
          return s?.members?.every((m) => m.dbSize === 200 * MIB) ? s : undefined;
        });
        expect(looked.currentOperation).toBeUndefined();
        expect((await handle.query(progressQuery)).lastDecision).toMatch(/^converged/);
        expect(defragmented(fake)).toHaveLength(3);
        expect(looked.lastOperation?.workflowId).toBe(operationWorkflowId('default', name, 2, 'Defrag'));
      },
    );
  });

  it('clears a NOSPACE alarm: Degraded=True NoSpace, compaction, every member defragmented, disarm, Degraded cleared', async () => {
    const name = 'full';
    await afterSpecChange(
      { env, workflowBundle },
      { name, from: spec(), to: spec(), options: {} },
      async (fake, handle) => {
        fragmentAll(fake, name);
        fake.raiseNoSpace(`${name}-1`, 10 * MIB);
        await handle.signal(membersChangedSignal);
        const status = await operationFinished(fake, operationWorkflowId('default', name, 2, 'Defrag'));
        expect(status.lastOperation).toMatchObject({ type: 'Defrag', result: 'Succeeded' });
        expect(status.lastOperation?.message).toMatch(/^NoSpace: .*NOSPACE disarmed, writes accepted again$/);

        // Degraded said NoSpace, naming the member, while the alarm was raised, and no longer does.
        const shown = fake.statusWrites.find((s) => degraded(s)?.reason === 'NoSpace');
        expect(degraded(shown)).toMatchObject({ status: 'True' });
        expect(degraded(shown)?.message).toContain(`${name}-1`);
        expect(degraded(status)?.status).toBe('False');
        expect(fake.alarms()).toEqual([]);

        // Compact first, then every member (leader last), then disarm.
        const compact = callIndexes(fake, 'compactToCurrentRevision');
        const steps = callIndexes(fake, 'defragmentMember');
        const disarm = callIndexes(fake, 'disarmNoSpace');
        expect(compact).toHaveLength(1);
        expect(steps).toHaveLength(3);
        expect(disarm).toHaveLength(1);
        expect(compact[0]).toBeLessThan(steps[0] ?? -1);
        expect(disarm[0]).toBeGreaterThan(steps[2] ?? Infinity);
        expect(new Set(defragmented(fake))).toEqual(new Set([`${name}-0`, `${name}-1`, `${name}-2`]));
        const defrags = fake.defrags();
        expect(defrags[2]?.leader).not.toBe(defrags[2]?.member);
        // Compaction left 10 MiB live; defragmentation gave the rest back.
        expect(status.members?.every((m) => m.dbSize === 10 * MIB)).toBe(true);
        expect(fake.events.map((e) => e.reason)).toEqual(
          expect.arrayContaining(['DefragStarted', 'Compacted', 'MemberDefragmented', 'NoSpaceCleared']),
        );
      },
    );
  });
});
