// The gate on recovery from a permanent quorum loss, in the cluster and operation workflows on the real Temporal dev
// server with the in-memory fake world: without an approval nothing happens, an approval that is not the uid is
// refused, the uid's approval runs the Recover operation (--force-new-cluster on the newest survivor, then plain),
// and the ScaleUp after it brings the cluster back to its replicas. A loss that is only temporary is never gated.
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
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

const plainSpec: EtcdClusterSpec = {
  replicas: 3,
  version: '3.6.16',
  storage: { size: '1Gi', medium: '' },
  progressDeadlineSeconds: 600,
};
const backedUp: EtcdClusterSpec = {
  ...plainSpec,
  backup: {
    destination: {
      s3: {
        endpoint: 'http://minio:9000',
        bucket: 'etcd',
        key: 'pql',
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

function withCluster(
  name: string,
  fake: FakeCluster,
  body: (r: ClusterRun) => Promise<void>,
  spec: EtcdClusterSpec = plainSpec,
): Promise<void> {
  return withClusterWorkflow(
    { env, workflowBundle, queuePrefix: 'quorum-recovery', name, spec, activities: fake.activities },
    body,
  );
}

const recoverySteps = (fake: FakeCluster) =>
  fake.calls.filter((c) => ['replaceMemberPod', 'removeRecoveryApproval'].includes(c.name)).length;

test('a permanent loss waits for the approval, refuses a wrong uid, and the uid recovers from the newest survivor', async () => {
  const fake = createFakeCluster();
  await withCluster(
    'pql',
    fake,
    async ({ handle, uid, opId, change }) => {
      await operationFinished(fake, opId(1, 'Bootstrap'));
      // The operator last sees revision 150 (pql-1 is ahead); pql-0 applied 120 when the others' data goes.
      fake.faults.setRevision('pql-1', 150);
      fake.faults.setRevision('pql-0', 120);
      const looks = fake.callsOf('observeCluster').length;
      await handle.signal(membersChangedSignal);
      await eventually('a look at the new revisions', () => fake.callsOf('observeCluster').length > looks);
      await sleep(500);
      // pql-1's claim is marked data-lost and its etcd no longer answers (its Pod stays); pql-2 is gone entirely.
      fake.faults.markDataLost('pql-1');
      fake.faults.makeUnreachable('pql-1');
      fake.faults.wipeMember('pql-2');
      await handle.signal(membersChangedSignal);

      const lost = await eventually(
        'status to report the permanent loss',
        () => condition(fake.status, 'Available')?.reason === 'PermanentQuorumLoss' && fake.status,
      );
      const message = condition(lost, 'Available')?.message ?? '';
      expect(condition(lost, 'Available')?.status).toBe('False');
      expect(condition(lost, 'Degraded')).toMatchObject({ status: 'True', reason: 'PermanentQuorumLoss' });
      expect(condition(lost, 'Progressing')).toMatchObject({
        status: 'False',
        reason: 'PermanentQuorumLoss',
      });
      expect(message).toMatch(/^2 of 3 members lost their data for good \(pql-1, pql-2\)/);
      expect(message).toContain('pql-1: its claim is marked etcd.conductor.dev/data-lost');
      expect(message).toContain('pql-2: its claim was deleted');
      expect(message).toContain('survivors: pql-0 at revision 120');
      expect(message).toContain('no snapshot of this cluster succeeded');
      expect(message).toContain(`etcd.conductor.dev/approve-recovery=${uid}`);
      expect(message).toContain('kubectl etcd approve-recovery pql');

      // Nothing happens on its own, and looking again neither rewrites status nor repeats the Event.
      const writes = fake.statusWrites.length;
      for (let i = 0; i < 3; i++) {
        await handle.signal(membersChangedSignal);
        await sleep(700);
      }
      expect(recoverySteps(fake)).toBe(0);
      expect(fake.members().map((m) => m.name)).toEqual(['pql-0', 'pql-1', 'pql-2']);
      expect(fake.statusWrites.length).toBe(writes);
      expect(fake.events.filter((e) => e.reason === 'PermanentQuorumLoss')).toHaveLength(1);
      expect(fake.status?.currentOperation).toBeUndefined();

      // An approval that is not this object's uid is refused, said in status and once as an Event.
      await change({ recoveryApproval: 'uid-of-another-cluster' });
      const refused = await eventually('the refusal', () =>
        fake.events.find((e) => e.reason === 'RecoveryRefused'),
      );
      expect(refused.message).toMatch(
        /"uid-of-another-cluster", which is not this EtcdCluster's uid uid-pql/,
      );
      await eventually('status to say it', () =>
        condition(fake.status, 'Available')?.message.includes('refused, nothing was done'),
      );
      await handle.signal(membersChangedSignal);
      await sleep(1500);
      expect(recoverySteps(fake)).toBe(0);
      expect(fake.events.filter((e) => e.reason === 'RecoveryRefused')).toHaveLength(1);

      // The uid approves: Recover rebuilds from pql-0, then ScaleUp adds fresh members back.
      await change({ recoveryApproval: uid });
      // The ScaleUp starts right after it, so the Recover's end is looked for among the status writes.
      const recovered = await eventually('the Recover to end', () =>
        fake.statusWrites.find((s) => s.lastOperation?.workflowId === opId(2, 'Recover')),
      );
      expect(recovered.lastOperation).toMatchObject({ type: 'Recover', result: 'Succeeded' });
      expect(recovered.lastOperation?.message).toMatch(/rebuilt from pql-0/);
      expect(recovered.lastOperation?.message).toMatch(/revisions 121\.\.150 \(30\)/);
      // spec.backup: a snapshot of what is left, after the survivor serves alone and before any member joins.
      expect(recovered.lastOperation?.message).toContain(
        'snapshot pql-pre-recovery-2 of what is left stored at s3://etcd/pql-pre-recovery-2.db',
      );
      const names = fake.calls.map((c) => c.name);
      const snapshotAt = names.indexOf('createPreUpgradeSnapshot');
      expect(snapshotAt).toBeGreaterThan(names.lastIndexOf('awaitSoleMember'));
      const event = fake.events.find((e) => e.reason === 'QuorumRecovered');
      expect(event?.message).toMatch(/pql-1, pql-2 and their data are gone/);
      // The approval was used up first, before anything was touched.
      const calls = fake.calls.map((c) => c.name);
      expect(calls.indexOf('removeRecoveryApproval')).toBeLessThan(calls.indexOf('replaceMemberPod'));
      // The survivor ran once with --force-new-cluster and runs without it now.
      const forced = fake
        .callsOf('createMemberPod')
        .filter((c) => (c.input as { forceNewCluster?: boolean }).forceNewCluster === true);
      expect(forced.map((c) => (c.input as { member: string }).member)).toEqual(['pql-0']);
      expect(fake.forcedPodNames()).toEqual([]);
      // pql-1's Pod (a member of the old cluster) was stopped before the survivor started with the flag.
      const order = fake.calls.map((c) => `${c.name} ${(c.input as { member?: string }).member ?? ''}`);
      const forcedAt = order.findIndex((_, i) => fake.calls[i] === forced[0]);
      expect(order.indexOf('deleteMemberPod pql-1')).toBeGreaterThanOrEqual(0);
      expect(order.indexOf('deleteMemberPod pql-1')).toBeLessThan(forcedAt);

      // A fresh member under the name pql-1 answers (the fault was its old process's).
      fake.faults.makeReachable('pql-1');
      await eventually(
        'three voters, Available',
        () =>
          fake.voterNames().length === 3 &&
          condition(fake.status, 'Available')?.status === 'True' &&
          !fake.status?.currentOperation,
      );
      expect(fake.voterNames()).toEqual(['pql-0', 'pql-1', 'pql-2']);
      // The fresh members joined after the snapshot of what is left.
      const joins = fake.calls.map((c) => c.name).indexOf('addLearner', snapshotAt);
      expect(joins).toBeGreaterThan(snapshotAt);
      // The lost pql-1's marked claim went (etcd no longer lists it) before fresh members were added.
      const started = fake.events.map((e) => e.reason).filter((r) => r.endsWith('Started'));
      expect(started).toEqual(['BootstrapStarted', 'RecoverStarted', 'HealStarted', ...started.slice(3)]);
      expect(fake.callsOf('deleteMemberClaim').map((c) => (c.input as { member: string }).member)).toContain(
        'pql-1',
      );
      // The survivor kept its member id; the others are fresh members.
      const ids = fake.members().map((m) => m.id);
      expect(new Set(ids).size).toBe(3);
    },
    backedUp,
  );
});

test('a loss that is only temporary (Pods gone, claims kept) is healed without any gate', async () => {
  const fake = createFakeCluster();
  await withCluster('tmp', fake, async ({ handle, opId }) => {
    await operationFinished(fake, opId(1, 'Bootstrap'));
    fake.faults.deletePod('tmp-1');
    fake.faults.deletePod('tmp-2');
    await handle.signal(membersChangedSignal);
    await eventually(
      'every Pod back',
      () => fake.podNames().length === 3 && fake.status?.readyReplicas === 3,
    );
    expect(fake.statusWrites.some((s) => condition(s, 'Available')?.reason === 'PermanentQuorumLoss')).toBe(
      false,
    );
    expect(fake.callsOf('probeQuorumLoss')).toEqual([]);
    expect(recoverySteps(fake)).toBe(0);
    expect(fake.members().map((m) => m.name)).toEqual(['tmp-0', 'tmp-1', 'tmp-2']);
  });
});

test('a Recover cancelled while the forced survivor does not answer restarts it without --force-new-cluster and halts', async () => {
  // The survivor never answers once restarted: the Recover waits on it until cancelled.
  const fake = createFakeCluster({ unreachableAfterRestart: 'cq-0' });
  await withCluster('cq', fake, async ({ handle, uid, opId, change }) => {
    await operationFinished(fake, opId(1, 'Bootstrap'));
    fake.faults.wipeMember('cq-1');
    fake.faults.wipeMember('cq-2');
    await handle.signal(membersChangedSignal);
    await eventually(
      'the permanent loss',
      () => condition(fake.status, 'Available')?.reason === 'PermanentQuorumLoss',
    );
    await change({ recoveryApproval: uid });
    await eventually('the forced Pod', () => fake.forcedPodNames().includes('cq-0'));
    await eventually(
      'the Recover in status',
      () => fake.status?.currentOperation?.workflowId === opId(2, 'Recover'),
    );
    await env.client.workflow.getHandle(opId(2, 'Recover')).cancel();

    const ended = await eventually('the Recover to end', () =>
      fake.statusWrites.find((s) => s.lastOperation?.workflowId === opId(2, 'Recover')),
    );
    expect(ended.lastOperation).toMatchObject({ type: 'Recover', result: 'Cancelled' });
    // The compensation's last act: cq-0 created again without the flag.
    const last = fake.callsOf('createMemberPod').at(-1)?.input as {
      member: string;
      forceNewCluster?: boolean;
    };
    expect(last).toMatchObject({ member: 'cq-0', mode: 'restart' });
    expect(last.forceNewCluster).toBeUndefined();
    // Its Pod runs again, plain, on its kept claim; nothing else was started.
    expect(fake.forcedPodNames()).toEqual([]);
    expect(fake.podNames()).toEqual(['cq-0']);
    expect(fake.claimNames()).toEqual(['cq-0']);
    expect(fake.events.map((e) => e.reason)).toContain('OperationCancelled');
    expect(fake.events.map((e) => e.reason)).not.toContain('QuorumRecovered');
  });
});

test('an approval given while the cluster answers is removed and said so, and approves nothing later', async () => {
  const fake = createFakeCluster();
  await withCluster('early', fake, async ({ handle, uid, opId, change }) => {
    await operationFinished(fake, opId(1, 'Bootstrap'));
    await change({ recoveryApproval: uid });
    const told = await eventually('the approval removed', () =>
      fake.events.find((e) => e.reason === 'RecoveryRefused'),
    );
    expect(told.message).toMatch(
      /removed: the cluster answers, so there is no permanent quorum loss to approve/,
    );
    expect(fake.callsOf('removeRecoveryApproval')).toHaveLength(1);
    // The loss that follows waits for an approval of its own. (The fake's removal tells the workflow nothing, as the
    // watcher would: the run itself forgets the approval it removed.)
    fake.faults.wipeMember('early-1');
    fake.faults.wipeMember('early-2');
    await handle.signal(membersChangedSignal);
    await eventually(
      'the permanent loss',
      () => condition(fake.status, 'Available')?.reason === 'PermanentQuorumLoss',
    );
    await sleep(1500);
    expect(fake.callsOf('replaceMemberPod')).toEqual([]);
    expect(fake.status?.currentOperation).toBeUndefined();
  });
});
