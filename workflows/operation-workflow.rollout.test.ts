// The Rollout operation on the real Temporal dev server against the in-memory fake world: restart order and leader hand-off, metadata without restarts, claim growth and its refusal.
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { EtcdClusterSpec, EtcdClusterStatus } from '../crds/etcd-cluster';
import { membersChangedSignal, operationWorkflowId } from '../contracts/messages';
import type { FakeCluster, FakeClusterOptions } from '../test/support/fake-cluster';
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

const spec = (more: Partial<EtcdClusterSpec> = {}): EtcdClusterSpec => ({
  replicas: 3,
  version: '3.6.16',
  storage: { size: '1Gi', medium: '' },
  progressDeadlineSeconds: 600,
  ...more,
});

const condition = (s: EtcdClusterStatus | undefined, type: string) =>
  s?.conditions?.find((c) => c.type === type);
const finished = operationFinished;

/** A 3-member cluster bootstrapped on `from`, then its spec changed to `to` (generation 2). */
const rollout = (
  name: string,
  from: EtcdClusterSpec,
  to: EtcdClusterSpec,
  options: FakeClusterOptions,
  body: (fake: FakeCluster) => Promise<void>,
) => afterSpecChange({ env, workflowBundle }, { name, from, to, options }, body);

const members = (fake: FakeCluster, activity: 'deleteMemberPodForRollout' | 'patchMemberPodMetadata') =>
  fake.callsOf(activity).map((c) => (c.input as { member: string }).member);

describe('the Rollout operation', () => {
  it('restarts followers by ordinal, moves leadership to a restarted voter, restarts the old leader last', async () => {
    const to = spec({ options: { 'snapshot-count': '5000' } });
    await rollout('ro', spec(), to, {}, async (fake) => {
      const status = await finished(fake, operationWorkflowId('default', 'ro', 2, 'Rollout'));
      expect(status.lastOperation).toMatchObject({
        type: 'Rollout',
        result: 'Succeeded',
        observedGeneration: 2,
      });
      expect(members(fake, 'deleteMemberPodForRollout')).toEqual(['ro-1', 'ro-2', 'ro-0']);
      const at = (name: string) => fake.calls.flatMap((c, i) => (c.name === name ? [i] : []));
      const [, second, third] = at('deleteMemberPodForRollout');
      expect(at('moveLeader')).toHaveLength(1);
      expect(at('moveLeader')[0]).toBeGreaterThan(second ?? Infinity);
      expect(at('moveLeader')[0]).toBeLessThan(third ?? -1);
      // The same members came back on their claims, every one up to date.
      expect(fake.voterNames()).toEqual(['ro-0', 'ro-1', 'ro-2']);
      // No member added: the bootstrap started all three together, and the rollout removed and re-added none.
      expect(fake.memberAdds()).toBe(0);
      expect(status.updatedReplicas).toBe(3);
      expect(status.members?.every((m) => m.upToDate)).toBe(true);
      expect(fake.events.map((e) => e.message)).toContain(
        `roll out default/ro: options changed (${operationWorkflowId('default', 'ro', 2, 'Rollout')})`,
      );
    });
  });

  it('recreates a member whose old Pod went away while the operation looked, without waiting out a pause', async () => {
    const id = operationWorkflowId('default', 'gone', 2, 'Rollout');
    // The watcher's signal for the Pod that went away arrives while the observation that still saw it reads.
    const rolledPodGoneDuringLook = () => env.client.workflow.getHandle(id).signal(membersChangedSignal);
    const to = spec({ options: { 'snapshot-count': '5000' } });
    await rollout('gone', spec(), to, { rolledPodGoneDuringLook }, async (fake) => {
      const status = await finished(fake, id);
      expect(status.lastOperation).toMatchObject({ type: 'Rollout', result: 'Succeeded' });
      expect(members(fake, 'deleteMemberPodForRollout')).toEqual(['gone-1', 'gone-2', 'gone-0']);
      // From each restart's delete to its Pod's re-creation: observations only, never a timer (before, the wait
      // after the look cleared the signal and paused its full second).
      const history = await env.client.workflow.getHandle(id).fetchHistory();
      const seen = (history.events ?? []).flatMap((e) => {
        const activity = e.activityTaskScheduledEventAttributes?.activityType?.name;
        if (activity) return [activity];
        return e.timerStartedEventAttributes ? ['timer'] : [];
      });
      const restarts = seen.flatMap((name, i) => (name === 'deleteMemberPodForRollout' ? [i] : []));
      expect(restarts).toHaveLength(3);
      for (const at of restarts) {
        const recreated = seen.indexOf('createMemberPod', at);
        expect(recreated).toBeGreaterThan(at);
        expect(seen.slice(at + 1, recreated)).toEqual(['observeCluster', 'observeCluster']);
      }
    });
  });

  it('patches podLabels onto each Pod without restarting any', async () => {
    await rollout('lab', spec(), spec({ podLabels: { team: 'a' } }), {}, async (fake) => {
      const uids = fake.podUids();
      const status = await finished(fake, operationWorkflowId('default', 'lab', 2, 'Rollout'));
      expect(status.lastOperation).toMatchObject({ type: 'Rollout', result: 'Succeeded' });
      expect(members(fake, 'patchMemberPodMetadata')).toEqual(['lab-0', 'lab-1', 'lab-2']);
      expect(fake.callsOf('deleteMemberPodForRollout')).toEqual([]);
      expect(fake.podUids()).toEqual(uids);
    });
  });

  it('grows every claim when the StorageClass allows expansion', async () => {
    const to = spec({ storage: { size: '2Gi', medium: '' } });
    const options = { storageClass: { name: 'grow', allowVolumeExpansion: true } };
    await rollout('grow', spec(), to, options, async (fake) => {
      await finished(fake, operationWorkflowId('default', 'grow', 2, 'Rollout'));
      expect(fake.claimSizes()).toEqual({ 'grow-0': '2Gi', 'grow-1': '2Gi', 'grow-2': '2Gi' });
      expect(fake.callsOf('deleteMemberPodForRollout')).toEqual([]);
    });
  });

  it('refuses a growth the StorageClass does not allow: claims untouched, Progressing says why, one Event', async () => {
    const to = spec({ storage: { size: '2Gi', medium: '' } });
    const options = { storageClass: { name: 'fixed', allowVolumeExpansion: false } };
    await rollout('fixed', spec(), to, options, async (fake) => {
      const status = await eventually('the refusal in status', () => {
        const s = fake.status;
        return s?.observedGeneration === 2 &&
          condition(s, 'Progressing')?.reason === 'StorageExpansionRefused'
          ? s
          : undefined;
      });
      expect(condition(status, 'Progressing')?.message).toContain(
        'data-fixed-0 (1Gi) has a StorageClass without allowVolumeExpansion (fixed)',
      );
      expect(fake.claimSizes()).toEqual({ 'fixed-0': '1Gi', 'fixed-1': '1Gi', 'fixed-2': '1Gi' });
      expect(fake.callsOf('expandMemberClaim')).toEqual([]);
      expect(fake.events.filter((e) => e.reason === 'StorageExpansionRefused')).toHaveLength(1);
    });
  });
});
