// The Upgrade operation on the real Temporal dev server against the in-memory fake world: order, leader hand-off, pre-upgrade snapshot, refusal.
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { EtcdClusterSpec, EtcdClusterStatus } from '../crds/etcd-cluster';
import type { etcdClusterWorkflow } from './cluster-workflow';
import { operationWorkflowId } from '../contracts/messages';
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

const spec = (version: string, more: Partial<EtcdClusterSpec> = {}): EtcdClusterSpec => ({
  replicas: 3,
  version,
  storage: { size: '1Gi', medium: '' },
  progressDeadlineSeconds: 600,
  ...more,
});

const backup: EtcdClusterSpec['backup'] = {
  destination: {
    s3: {
      endpoint: 'http://minio:9000',
      bucket: 'etcd',
      key: 'pre',
      region: 'us-east-1',
      forcePathStyle: true,
      credentialsSecretRef: { name: 's3' },
    },
  },
};

const condition = (s: EtcdClusterStatus | undefined, type: string) =>
  s?.conditions?.find((c) => c.type === type);
const finished = operationFinished;

/** A 3-member cluster bootstrapped on `from`, then its spec changed to `to` (generation 2). */
const upgrade = (
  name: string,
  from: EtcdClusterSpec,
  to: EtcdClusterSpec,
  options: FakeClusterOptions,
  body: (fake: FakeCluster, handle: WorkflowHandle<typeof etcdClusterWorkflow>) => Promise<void>,
) => afterSpecChange({ env, workflowBundle }, { name, from, to, options }, body);

const deleted = (fake: FakeCluster) =>
  fake.callsOf('deleteMemberPodForUpgrade').map((c) => (c.input as { member: string }).member);

describe('the Upgrade operation', () => {
  it('restarts followers by ordinal, moves leadership to an upgraded voter, restarts the old leader last', async () => {
    await upgrade('up', spec('3.5.35'), spec('3.6.16'), {}, async (fake) => {
      const opId = operationWorkflowId('default', 'up', 2, 'Upgrade');
      const status = await finished(fake, opId);
      expect(status.lastOperation).toMatchObject({
        type: 'Upgrade',
        result: 'Succeeded',
        observedGeneration: 2,
      });
      expect(deleted(fake)).toEqual(['up-1', 'up-2', 'up-0']);
      // Leadership left up-0 before its Pod was deleted, to a member that already ran 3.6.16.
      const at = (name: string) => fake.calls.flatMap((c, i) => (c.name === name ? [i] : []));
      const [, second, third] = at('deleteMemberPodForUpgrade');
      expect(at('moveLeader')).toHaveLength(1);
      expect(at('moveLeader')[0]).toBeGreaterThan(second ?? Infinity);
      expect(at('moveLeader')[0]).toBeLessThan(third ?? -1);
      expect(fake.callsOf('moveLeader')[0]?.input).toMatchObject({ from: 'up-0' });
      // Same members, same ids, all on the new version.
      expect(fake.voterNames()).toEqual(['up-0', 'up-1', 'up-2']);
      // No member added: the bootstrap started all three together, and the upgrade removed and re-added none.
      expect(fake.memberAdds()).toBe(0);
      expect(status.members?.map((m) => [m.name, m.version])).toEqual([
        ['up-0', '3.6.16'],
        ['up-1', '3.6.16'],
        ['up-2', '3.6.16'],
      ]);
      const child = await env.client.workflow.getHandle(opId).describe();
      expect(await child.staticSummary()).toBe('upgrade default/up 3.5.35 -> 3.6.16');
      expect(fake.statusWrites.some((s) => condition(s, 'Progressing')?.reason === 'Upgrading')).toBe(true);
    });
  });

  it('with spec.backup, takes a snapshot first and names its artifact in lastOperation and an Event', async () => {
    await upgrade('snap', spec('3.5.35', { backup }), spec('3.6.16', { backup }), {}, async (fake) => {
      const status = await finished(fake, operationWorkflowId('default', 'snap', 2, 'Upgrade'));
      expect(status.lastOperation?.result).toBe('Succeeded');
      expect(status.lastOperation?.message).toContain('pre-upgrade snapshot s3://etcd/snap-pre-upgrade-2.db');
      const created = fake.calls.findIndex((c) => c.name === 'createPreUpgradeSnapshot');
      const firstTouch = fake.calls.findIndex(
        (c) => c.name === 'deleteMemberPodForUpgrade' || c.name === 'moveLeader',
      );
      expect(created).toBeGreaterThanOrEqual(0);
      expect(created).toBeLessThan(firstTouch);
      expect(fake.events.find((e) => e.reason === 'PreUpgradeSnapshotTaken')?.message).toContain(
        's3://etcd/snap-pre-upgrade-2.db',
      );
    });
  });

  it('a failed pre-upgrade snapshot ends the upgrade Failed with nothing restarted', async () => {
    const options: FakeClusterOptions = { preUpgradeSnapshot: 'Failed' };
    await upgrade('nosnap', spec('3.5.35', { backup }), spec('3.6.16', { backup }), options, async (fake) => {
      const status = await finished(fake, operationWorkflowId('default', 'nosnap', 2, 'Upgrade'));
      expect(status.lastOperation).toMatchObject({ type: 'Upgrade', result: 'Failed' });
      expect(status.lastOperation?.message).toMatch(
        /pre-upgrade snapshot nosnap-pre-upgrade-2 failed \(BucketNotFound\)/,
      );
      expect(condition(status, 'Progressing')).toMatchObject({ status: 'False', reason: 'OperationFailed' });
      expect(deleted(fake)).toEqual([]);
      expect(fake.callsOf('moveLeader')).toEqual([]);
      expect(fake.events.map((e) => e.reason)).toContain('PreUpgradeSnapshotFailed');
    });
  });

  it('a downgrade 3.6 -> 3.5 below 3.5.32 is refused in status and an Event, and nothing is touched', async () => {
    await upgrade('down', spec('3.6.16'), spec('3.5.20'), {}, async (fake) => {
      const status = await eventually('the refusal in status', () => {
        const s = fake.status;
        return s?.observedGeneration === 2 && condition(s, 'Progressing')?.reason === 'UpgradePathRefused'
          ? s
          : undefined;
      });
      expect(condition(status, 'Progressing')?.message).toMatch(/downgrade 3\.6\.16 -> 3\.5\.20 is refused/);
      expect(status.currentOperation).toBeUndefined();
      await eventually('the Event', () => fake.events.find((e) => e.reason === 'UpgradePathRefused'));
      expect(fake.events.filter((e) => e.reason === 'UpgradePathRefused')).toHaveLength(1);
      expect(deleted(fake)).toEqual([]);
      expect(fake.callsOf('createMemberPod')).toHaveLength(3);
    });
  });

  it('a deadline mid-upgrade stops between members and says which member runs which version', async () => {
    const options: FakeClusterOptions = { unreachableAfterRestart: 'dl-1' };
    const short = (version: string) => spec(version, { progressDeadlineSeconds: 5 });
    await upgrade('dl', short('3.5.35'), short('3.6.16'), options, async (fake) => {
      const status = await finished(fake, operationWorkflowId('default', 'dl', 2, 'Upgrade'));
      expect(status.lastOperation).toMatchObject({ type: 'Upgrade', result: 'DeadlineExceeded' });
      expect(status.lastOperation?.message).toContain('members run: dl-0 3.5.35, dl-1 3.6.16, dl-2 3.5.35');
      expect(condition(status, 'Progressing')).toMatchObject({
        status: 'False',
        reason: 'Stalled',
      });
      // Only dl-1 was restarted; its Pod exists again, so the cluster keeps all three members.
      expect(deleted(fake)).toEqual(['dl-1']);
      expect(fake.podNames()).toEqual(['dl-0', 'dl-1', 'dl-2']);
      expect(fake.voterNames()).toEqual(['dl-0', 'dl-1', 'dl-2']);
    });
  });
});
