// spec.backup.continuous in the cluster workflow, on the real Temporal dev server with the in-memory fake world: the
// archiver is kept on every look, status.backup and the ContinuousBackup condition follow the store, a gap and the
// deployment are told once as Events, and turning the backup off removes the archiver, status.backup and the condition.
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { Worker } from '@temporalio/worker';
import type { ContinuousBackupActivities } from '../activities/continuous-backup-activities';
import type { ContinuousBackupReport } from '../contracts/continuous-backup';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import type { ClusterWorkflowInput } from '../contracts/messages';
import { clusterChangedSignal, clusterWorkflowId, operationWorkflowId } from '../contracts/messages';
import { createFakeCluster } from '../test/support/fake-cluster';
import { DEV_SERVER_START_TIMEOUT_MS, eventually, startDevServer } from '../test/support/dev-server';
import { etcdClusterWorkflow } from './cluster-workflow';

jest.setTimeout(120_000);

let env: TestWorkflowEnvironment;
let workflowBundle: WorkflowBundleWithSourceMap;

beforeAll(async () => {
  ({ env, workflowBundle } = await startDevServer());
}, DEV_SERVER_START_TIMEOUT_MS);

afterAll(async () => {
  await env?.teardown();
});

const s3 = {
  endpoint: 'http://minio:9000',
  bucket: 'backups',
  key: 'etcd/cb',
  region: 'us-east-1',
  forcePathStyle: true,
  credentialsSecretRef: { name: 's3' },
};
const spec: EtcdClusterSpec = {
  replicas: 1,
  version: '3.6.16',
  storage: { size: '1Gi', medium: '' },
  progressDeadlineSeconds: 600,
  backup: {
    destination: { s3 },
    continuous: { fullSnapshotInterval: '1h', maxLagSeconds: 5, retention: '168h' },
  },
};
const gap = {
  afterRevision: 10,
  beforeRevision: 20,
  afterTime: '2026-11-25T09:00:00.000Z',
  beforeTime: '2026-11-25T09:01:00.000Z',
  reason: 'compacted' as const,
};

test('the archiver is kept, status.backup and the condition follow the store, and turning it off removes them', async () => {
  const fake = createFakeCluster();
  const asked: Array<{ continuous: boolean }> = [];
  let deployed = false;
  const backup: ContinuousBackupActivities = {
    async keepContinuousBackup({ spec: s }): Promise<ContinuousBackupReport> {
      const on = Boolean(s.backup?.continuous);
      asked.push({ continuous: on });
      if (!on) {
        const was = deployed;
        deployed = false;
        return { deployment: was ? 'deleted' : 'absent' };
      }
      const first = !deployed;
      deployed = true;
      return first
        ? { deployment: 'created' }
        : {
            deployment: 'unchanged',
            state: { latestRevision: 42, latestTime: new Date(Date.now() - 2000).toISOString(), gaps: [gap] },
          };
    },
  };
  const taskQueue = 'cluster-workflow-continuous-backup';
  const uid = 'uid-cb';
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle,
    activities: { ...fake.activities, ...backup },
  });
  await worker.runUntil(async () => {
    const input: ClusterWorkflowInput = {
      ref: { namespace: 'default', name: 'cb', uid },
      change: { uid, generation: 1, spec },
    };
    const handle = await env.client.workflow.start(etcdClusterWorkflow, {
      workflowId: clusterWorkflowId('default', 'cb'),
      taskQueue,
      args: [input],
    });
    try {
      const bootstrap = operationWorkflowId('default', 'cb', 1, 'Bootstrap');
      await eventually('the Bootstrap to finish', () => {
        const s = fake.status;
        return s?.lastOperation?.workflowId === bootstrap && !s.currentOperation ? s : undefined;
      });
      // The look after the Bootstrap reads the store: status.backup and a True condition.
      const status = await eventually('status.backup from the store', () =>
        fake.status?.backup?.latestRevision === 42 ? fake.status : undefined,
      );
      expect(status.backup).toEqual({
        latestRevision: 42,
        latestTime: expect.any(String),
        lagSeconds: 0,
        gaps: [gap],
      });
      expect(status.conditions?.find((c) => c.type === 'ContinuousBackup')).toMatchObject({
        status: 'True',
        reason: 'BackupCurrent',
      });
      expect(fake.events.filter((e) => e.reason === 'ArchiverDeployed')).toHaveLength(1);
      expect(fake.events.filter((e) => e.reason === 'BackupGapRecorded')).toEqual([
        expect.objectContaining({ type: 'Warning', message: expect.stringContaining('revisions 11..19') }),
      ]);

      // Off: the archiver goes, and so do status.backup and the condition; asked once more, then no more.
      await handle.signal(clusterChangedSignal, {
        uid,
        generation: 2,
        spec: { ...spec, backup: { destination: { s3 } } },
      });
      await eventually('status without the backup', () =>
        fake.status &&
        !fake.status.backup &&
        !fake.status.conditions?.some((c) => c.type === 'ContinuousBackup')
          ? true
          : undefined,
      );
      expect(deployed).toBe(false);
      const settled = asked.length;
      await handle.signal(clusterChangedSignal, {
        uid,
        generation: 3,
        spec: { ...spec, replicas: 1, backup: { destination: { s3 } } },
      });
      await new Promise((r) => setTimeout(r, 3000));
      expect(asked.length).toBe(settled);
      // The gap was told once, however many looks saw it.
      expect(fake.events.filter((e) => e.reason === 'BackupGapRecorded')).toHaveLength(1);
    } finally {
      const description = await handle.describe();
      if (description.status.name === 'RUNNING') await handle.terminate('test over');
    }
  });
});
