// applyDefragSchedule and deleteDefragSchedule against the real Temporal dev server: the Schedule a cluster's defrag schedule asks for is the one Temporal keeps.
import { ApplicationFailure } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { SearchAttributes } from '../contracts/messages';
import { cacheRoot, toolPaths } from '../localcluster/tool-cache';
import { createDefragScheduleActivities } from './defrag-schedule-activities';

jest.setTimeout(120_000);

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: {
        type: 'existing-path',
        path: process.env.TEMPORAL_CLI_PATH ?? toolPaths(cacheRoot()).temporal,
      },
      searchAttributes: Object.values(SearchAttributes),
    },
  });
}, 180_000);
afterAll(async () => {
  await env?.teardown();
});

const ref = { namespace: 'ns', name: 'main', uid: 'u1' };
const input = (scheduleId: string, schedule: string) => ({ ref, schedule, scheduleId, taskQueue: 'tq' });

describe('the Temporal Schedule of spec.maintenance.defrag.schedule', () => {
  it('is created in UTC with skip overlap, updated in place when the cron changes, and deleted (twice is fine)', async () => {
    const id = 'etcdcluster/ns/main/defrag/u1';
    const a = createDefragScheduleActivities({ temporal: env.client });
    expect(await a.applyDefragSchedule(input(id, '0 3 * * 7'))).toBe('created');
    const handle = env.client.schedule.getHandle(id);
    let d = await handle.describe();
    expect(d.spec.timezone).toBe('UTC');
    expect(d.policies).toMatchObject({ overlap: 'SKIP', catchupWindow: 60_000 });
    expect(d.memo).toEqual({ etcdCluster: 'ns/main', uid: 'u1' });
    expect(d.state.paused).toBe(false);
    expect(d.action).toMatchObject({
      type: 'startWorkflow',
      workflowType: 'defragDueWorkflow',
      taskQueue: 'tq',
    });
    // Day 7 is Sunday, as the CRD documents it: Temporal reads it so.
    expect(d.info.nextActionTimes.map((t) => t.getUTCDay())).toEqual(d.info.nextActionTimes.map(() => 0));

    expect(await a.applyDefragSchedule(input(id, '@monthly'))).toBe('updated');
    d = await handle.describe();
    expect(d.state.note).toContain('on "@monthly" (UTC)');
    expect(d.info.nextActionTimes.map((t) => t.toISOString().slice(8))).toContain('01T00:00:00.000Z');

    expect(await a.deleteDefragSchedule({ scheduleId: id })).toBe('deleted');
    expect(await a.deleteDefragSchedule({ scheduleId: id })).toBe('absent');
  });

  it('a cron Temporal refuses fails for good as InvalidSchedule, quoting the schedule', async () => {
    const a = createDefragScheduleActivities({ temporal: env.client });
    const refused = await a.applyDefragSchedule(input('etcdcluster/ns/main/defrag/u2', '0 3 * *')).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(ApplicationFailure);
    expect((refused as ApplicationFailure).type).toBe('InvalidSchedule');
    expect((refused as ApplicationFailure).nonRetryable).toBe(true);
    expect((refused as ApplicationFailure).message).toContain('"0 3 * *"');
  });
});
