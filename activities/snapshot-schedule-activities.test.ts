// applyTemporalSchedule and deleteTemporalSchedule against the real Temporal dev server: the Schedule the CR asks for is the one Temporal keeps.
import type { KubernetesObject } from '@kubernetes/client-node';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import { cacheRoot, toolPaths } from '../localcluster/tool-cache';
import type { EtcdSnapshotScheduleSpec } from '../crds/etcd-snapshot-schedule';
import type { KubeObjects } from './kube-objects';
import { createScheduleActivities, pruneFileJob, pruneJobName } from './snapshot-schedule-activities';

jest.setTimeout(120_000);

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: {
        type: 'existing-path',
        path: process.env.TEMPORAL_CLI_PATH ?? toolPaths(cacheRoot()).temporal,
      },
    },
  });
}, 180_000);
afterAll(async () => {
  await env?.teardown();
});

const unused = new Proxy({}, { get: () => () => Promise.reject(new Error('not used here')) });
const spec = (more: Partial<EtcdSnapshotScheduleSpec> = {}): EtcdSnapshotScheduleSpec => ({
  clusterRef: { name: 'main' },
  schedule: '@every 1h',
  destination: { pvc: { claimName: 'backup', subPath: '' } },
  suspend: false,
  ...more,
});

describe('the Temporal Schedule of an EtcdSnapshotSchedule', () => {
  const acts = () =>
    createScheduleActivities({
      kube: unused as KubeObjects,
      events: unused as never,
      s3: unused as never,
      temporal: env.client,
      agentImage: 'img',
    });
  const input = (id: string, s: EtcdSnapshotScheduleSpec) => ({
    schedule: { namespace: 'ns', name: 'daily', uid: 'u1' },
    spec: s,
    scheduleId: id,
    taskQueue: 'tq',
    runWorkflowType: 'snapshotScheduleRunWorkflow',
    runWorkflowId: `${id}/run`,
    searchAttributes: [],
  });

  it('is created, paused by suspend, unpaused again, and deleted', async () => {
    const id = 'etcdsnapshotschedule/ns/daily-1';
    const a = acts();
    expect(await a.applyTemporalSchedule(input(id, spec()))).toBe('created');
    const handle = env.client.schedule.getHandle(id);
    let d = await handle.describe();
    expect(d.state.paused).toBe(false);
    expect(d.action).toMatchObject({
      type: 'startWorkflow',
      workflowType: 'snapshotScheduleRunWorkflow',
      taskQueue: 'tq',
    });
    expect(d.spec.intervals?.[0]?.every).toBe(3_600_000);

    expect(await a.applyTemporalSchedule(input(id, spec({ suspend: true, schedule: '0 */6 * * *' })))).toBe(
      'updated',
    );
    d = await handle.describe();
    expect(d.state.paused).toBe(true);
    expect(d.spec.calendars?.[0]?.hour).toEqual([{ start: 0, end: 23, step: 6 }]);

    await a.applyTemporalSchedule(input(id, spec()));
    expect((await handle.describe()).state.paused).toBe(false);

    expect(await a.deleteTemporalSchedule({ scheduleId: id })).toBe('deleted');
    expect(await a.deleteTemporalSchedule({ scheduleId: id })).toBe('absent');
  });

  it('refuses a schedule Temporal cannot parse as a permanent InvalidSchedule failure', async () => {
    const err = await acts()
      .applyTemporalSchedule(input('etcdsnapshotschedule/ns/bad', spec({ schedule: 'every tuesday' })))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({
      type: 'InvalidSchedule',
      nonRetryable: true,
      message: expect.stringContaining('every tuesday'),
    });
  });
});

describe('pruneFileJob', () => {
  test('removes exactly the snapshot file under the claim folder, owned by the schedule', () => {
    const job = pruneFileJob({
      schedule: { namespace: 'ns', name: 'daily', uid: 'u1' },
      snapshot: 'daily-20260301000000',
      claimName: 'backup',
      subPath: 'etcd/',
      image: 'img',
    });
    const c = job.spec.template.spec.containers[0];
    expect(c?.command.at(-1)).toBe('/snapshots/daily-20260301000000.db');
    expect(c?.volumeMounts).toEqual([{ name: 'destination', mountPath: '/snapshots', subPath: 'etcd' }]);
    expect(job.metadata.ownerReferences[0]).toMatchObject({ kind: 'EtcdSnapshotSchedule', uid: 'u1' });
  });

  test('its name fits 63 characters', () => {
    expect(pruneJobName('x'.repeat(100)).length).toBe(63);
  });

  test("runs where the scheduled cluster's Pods may run (its nodeSelector and tolerations)", async () => {
    const created: KubernetesObject[] = [];
    const objects: Record<string, unknown> = {
      EtcdSnapshotSchedule: { spec: { clusterRef: { name: 'main' } } },
      EtcdCluster: {
        spec: {
          nodeSelector: { pool: 'etcd' },
          tolerations: [{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }],
        },
      },
    };
    const kube = {
      read: (ref: { kind: string }) => Promise.resolve(objects[ref.kind]),
      createIfAbsent: (o: KubernetesObject) => {
        created.push(o);
        return Promise.resolve('created');
      },
      deleteIfPresent: () => Promise.resolve(true),
    };
    const acts = createScheduleActivities({
      kube: kube as unknown as KubeObjects,
      events: unused as never,
      s3: unused as never,
      temporal: unused as never,
      agentImage: 'img',
    });
    await expect(
      acts.pruneSnapshot({
        schedule: { namespace: 'ns', name: 'daily', uid: 'u1' },
        name: 'daily-20260301000000',
        uri: 'pvc://backup/daily-20260301000000.db',
        destination: { pvc: { claimName: 'backup', subPath: '' } },
      }),
    ).resolves.toBe('pruned');
    expect(created).toHaveLength(1);
    expect((created[0] as ReturnType<typeof pruneFileJob>).spec.template.spec).toMatchObject({
      nodeSelector: { pool: 'etcd' },
      tolerations: [{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }],
    });
  });
});

describe("createScheduledSnapshot when the schedule's namespace is going", () => {
  const schedule = { namespace: 'ns', name: 'daily', uid: 'u1' };
  const notFound = Object.assign(new Error('namespaces "ns" not found'), { code: 404 });
  const acts = (scheduleNow: KubernetesObject | undefined) =>
    createScheduleActivities({
      kube: {
        read: () => Promise.resolve(scheduleNow),
        createIfAbsent: () => Promise.reject(notFound),
      } as unknown as KubeObjects,
      events: unused as never,
      s3: unused as never,
      temporal: unused as never,
      agentImage: 'img',
    });
  const create = (scheduleNow: KubernetesObject | undefined) =>
    acts(scheduleNow).createScheduledSnapshot({
      schedule,
      name: 'daily-20260301000000',
      clusterName: 'main',
      destination: { pvc: { claimName: 'backup', subPath: '' } },
    });
  const live = { metadata: { name: 'daily', namespace: 'ns', uid: 'u1' } };

  test.each([
    ['gone', undefined],
    ['being deleted', { metadata: { ...live.metadata, deletionTimestamp: new Date() } }],
    ['replaced by another of its name', { metadata: { ...live.metadata, uid: 'u2' } }],
  ])('a schedule %s makes the failed create schedule-gone', async (_what, now) => {
    await expect(create(now as KubernetesObject | undefined)).resolves.toBe('schedule-gone');
  });

  test('a schedule still there leaves the failure to be retried', async () => {
    await expect(create(live)).rejects.toBe(notFound);
  });
});
