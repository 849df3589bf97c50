// A quorum lost with no member keeping its data, in the cluster and operation workflows on the real Temporal dev
// server with the in-memory fake world: with no backup the loss says there is nothing to approve and nothing
// happens even when approved; with a snapshot, the uid's approval runs the Rebuild operation (the point resolved
// before anything is touched, every claim deleted, the first member restored from it), the lost window is told,
// and the ScaleUp after it brings the cluster back to its replicas.
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { ClusterActivities } from '../activities/cluster-activities';
import type { RestoreActivities } from '../activities/restore-activities';
import type { RestoreInit } from '../activities/restore-manifests';
import type { EtcdClusterSpec, EtcdClusterStatus } from '../crds/etcd-cluster';
import { membersChangedSignal } from '../contracts/messages';
import type { FakeCluster } from '../test/support/fake-cluster';
import { createFakeCluster } from '../test/support/fake-cluster';
import type { ClusterRun } from '../test/support/cluster-workflow-run';
import { withClusterWorkflow } from '../test/support/cluster-workflow-run';
import {
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

const spec: EtcdClusterSpec = {
  replicas: 3,
  version: '3.6.16',
  storage: { size: '1Gi', medium: '' },
  progressDeadlineSeconds: 600,
  backup: {
    destination: {
      s3: {
        endpoint: 'http://minio:9000',
        bucket: 'etcd',
        key: 'rb',
        region: 'us-east-1',
        forcePathStyle: true,
        credentialsSecretRef: { name: 's3' },
      },
    },
  },
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const condition = (status: EtcdClusterStatus | undefined, type: string) =>
  status?.conditions?.find((c) => c.type === type);
const restoreInit = { container: { name: 'restore' }, volumes: [] } as unknown as RestoreInit;

/** The fake world plus the restore preparation, which answers ready and records what it was asked. */
async function withCluster(
  name: string,
  fake: FakeCluster,
  body: (r: ClusterRun, prepared: unknown[]) => Promise<void>,
) {
  const prepared: unknown[] = [];
  const activities: ClusterActivities & RestoreActivities = {
    ...fake.activities,
    async prepareRestore(input) {
      // Where it came among the fake's calls: the calls before it were made before the point was resolved.
      prepared.push({ ...input, at: fake.calls.length });
      return { state: 'ready', init: restoreInit, uri: 's3://etcd/rb-snap.db' };
    },
  };
  await withClusterWorkflow({ env, workflowBundle, queuePrefix: 'rebuild', name, spec, activities }, (run) =>
    body(run, prepared),
  );
}

test('every member lost with no backup: nothing to approve, and an approval changes nothing', async () => {
  const fake = createFakeCluster();
  await withCluster('nob', fake, async ({ handle, uid, opId, change }, prepared) => {
    await operationFinished(fake, opId(1, 'Bootstrap'));
    for (const m of ['nob-0', 'nob-1', 'nob-2']) fake.faults.wipeMember(m);
    await handle.signal(membersChangedSignal);
    const lost = await eventually(
      'status to report the permanent loss',
      () => condition(fake.status, 'Available')?.reason === 'PermanentQuorumLoss' && fake.status,
    );
    const message = condition(lost, 'Available')?.message ?? '';
    expect(message).toMatch(/^all 3 members lost their data for good \(nob-0, nob-1, nob-2\)/);
    expect(message).toContain('there is no backup of this cluster');
    expect(message).toContain('nothing to rebuild from and nothing to approve');
    expect(fake.events.filter((e) => e.reason === 'PermanentQuorumLoss')).toHaveLength(1);

    await change({ recoveryApproval: uid });
    for (let i = 0; i < 3; i++) {
      await handle.signal(membersChangedSignal);
      await sleep(700);
    }
    expect(prepared).toEqual([]);
    expect(fake.podNames()).toEqual([]);
    expect(fake.status?.currentOperation).toBeUndefined();
    expect(condition(fake.status, 'Available')?.reason).toBe('PermanentQuorumLoss');
  });
});

test('every member lost, a snapshot, and the uid approves: rebuilt in place from it, then grown back', async () => {
  const fake = createFakeCluster({
    backup: {
      snapshot: 'rb-snap',
      revision: 90,
      takenAt: '2026-11-26T10:00:00Z',
      uri: 's3://etcd/rb-snap.db',
    },
  });
  await withCluster('rb', fake, async ({ handle, uid, opId, change }, prepared) => {
    await operationFinished(fake, opId(1, 'Bootstrap'));
    // The operator last sees revision 150; the snapshot holds revision 90, what the restored member serves.
    for (const m of ['rb-0', 'rb-1', 'rb-2']) fake.faults.setRevision(m, 150);
    const looks = fake.callsOf('observeCluster').length;
    await handle.signal(membersChangedSignal);
    await eventually('a look at the new revision', () => fake.callsOf('observeCluster').length > looks);
    await sleep(500);
    for (const m of ['rb-0', 'rb-1', 'rb-2']) fake.faults.wipeMember(m);
    fake.faults.setRevision('rb-0', 90);
    await handle.signal(membersChangedSignal);

    const lost = await eventually(
      'status to report the permanent loss',
      () => condition(fake.status, 'Available')?.reason === 'PermanentQuorumLoss' && fake.status,
    );
    const message = condition(lost, 'Available')?.message ?? '';
    expect(message).toContain('rebuilds the cluster in place from snapshot rb-snap at revision 90');
    expect(message).toContain(`etcd.conductor.dev/approve-recovery=${uid}`);
    await sleep(1500);
    expect(prepared).toEqual([]);

    await change({ recoveryApproval: uid });
    const rebuilt = await eventually('the Rebuild to end', () =>
      fake.statusWrites.find((s) => s.lastOperation?.workflowId === opId(2, 'Rebuild')),
    );
    expect(rebuilt.lastOperation).toMatchObject({ type: 'Rebuild', result: 'Succeeded' });
    expect(rebuilt.lastOperation?.message).toMatch(/rebuilt in place from snapshot rb-snap at revision 90/);
    expect(rebuilt.lastOperation?.message).toMatch(/rb-0 serves its data \(at revision 90:/);
    expect(rebuilt.lastOperation?.message).toMatch(/revisions 91\.\.150 \(60\)/);
    const event = fake.events.find((e) => e.reason === 'ClusterRebuilt');
    expect(event?.message).toMatch(/rb-0, rb-1, rb-2 had lost their data for good/);

    // The restore was asked for the snapshot, as spec.bootstrap.restore would name it, for the first member.
    expect(prepared[0]).toMatchObject({
      member: 'rb-0',
      spec: { bootstrap: { restore: { source: { snapshotRef: { name: 'rb-snap' } } } } },
    });
    // Order: approval used up, point resolved, then the seed created with the restore init container.
    const names = fake.calls.map((c) => c.name);
    const preparedAt = (prepared[0] as { at: number }).at;
    expect(names.indexOf('removeRecoveryApproval')).toBeLessThan(preparedAt);
    const seed = fake
      .callsOf('createMemberPod')
      .find((c) => (c.input as { restore?: unknown }).restore !== undefined);
    expect(seed?.input).toMatchObject({ member: 'rb-0', mode: 'seed' });
    expect(fake.calls.indexOf(seed!)).toBeGreaterThanOrEqual(preparedAt);

    await eventually(
      'three voters, Available',
      () =>
        fake.voterNames().length === 3 &&
        condition(fake.status, 'Available')?.status === 'True' &&
        !fake.status?.currentOperation,
    );
    expect(fake.voterNames()).toEqual(['rb-0', 'rb-1', 'rb-2']);
    const started = fake.events.map((e) => e.reason).filter((r) => r.endsWith('Started'));
    expect(started.slice(0, 3)).toEqual(['BootstrapStarted', 'RebuildStarted', 'ScaleUpStarted']);
  });
});

test('spec.rollback approved on a healthy cluster: the present data snapshotted, then rolled back in place', async () => {
  const fake = createFakeCluster();
  await withCluster('rbk', fake, async ({ handle, uid, opId, change }, prepared) => {
    await operationFinished(fake, opId(1, 'Bootstrap'));
    for (const m of ['rbk-0', 'rbk-1', 'rbk-2']) fake.faults.setRevision(m, 150);
    const rollback = { snapshotRef: { name: 'rbk-snap' } };
    // Asked for but not approved (then approved for another uid): nothing happens.
    await change({ generation: 2, spec: { ...spec, rollback } });
    await change({ generation: 2, spec: { ...spec, rollback }, rollbackApproval: 'other' });
    for (let i = 0; i < 3; i++) {
      await handle.signal(membersChangedSignal);
      await sleep(500);
    }
    expect(prepared).toEqual([]);
    expect(fake.callsOf('createPreUpgradeSnapshot')).toEqual([]);
    // The refused approval is told once (three looks saw it), naming the annotation and the uid it should carry.
    const refused = fake.events.filter((e) => e.reason === 'RollbackRefused');
    expect(refused).toHaveLength(1);
    expect(refused[0]?.message).toContain(`etcd.conductor.dev/approve-rollback is "other"`);
    expect(refused[0]?.message).toContain(uid);

    fake.faults.setRevision('rbk-0', 90);
    await change({ generation: 2, spec: { ...spec, rollback }, rollbackApproval: uid });
    const done = await eventually('the Rebuild to end', () =>
      fake.statusWrites.find((s) => s.lastOperation?.workflowId === opId(2, 'Rebuild')),
    );
    expect(done.lastOperation).toMatchObject({ type: 'Rebuild', result: 'Succeeded' });
    expect(done.lastOperation?.message).toMatch(
      /rebuilt in place from snapshot rbk-snap \(rolled back as approved\)/,
    );
    expect(done.lastOperation?.message).toContain(
      'the data before the rollback is kept in snapshot rbk-pre-rollback-2 (s3://etcd/rbk-pre-rollback-2.db)',
    );
    // The rollback approval (not the recovery one) was used up; the present data was kept before any Pod went.
    expect(fake.callsOf('removeRecoveryApproval')[0]?.input).toMatchObject({ approval: 'rollback' });
    const names = fake.calls.map((c) => c.name);
    expect(names.indexOf('readPreUpgradeSnapshot')).toBeLessThan(names.indexOf('deleteMemberPod'));
    expect(prepared[0]).toMatchObject({
      member: 'rbk-0',
      spec: { bootstrap: { restore: { source: { snapshotRef: { name: 'rbk-snap' } } } } },
    });
    await eventually(
      'three voters, Available',
      () =>
        fake.voterNames().length === 3 &&
        condition(fake.status, 'Available')?.status === 'True' &&
        !fake.status?.currentOperation,
    );
    // Used once: the cluster converged again and no second rollback started.
    await sleep(1500);
    expect(fake.callsOf('createPreUpgradeSnapshot')).toHaveLength(1);
    const started = fake.events.map((e) => e.reason).filter((r) => r.endsWith('Started'));
    expect(started.slice(0, 3)).toEqual(['BootstrapStarted', 'RebuildStarted', 'ScaleUpStarted']);
  });
});
