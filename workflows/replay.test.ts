// Determinism regression test: every recorded history under test/replay/histories replays against today's workflow code.
//
// A failure here means a change to workflow code would break workflows that are running now: guard it with
// patched() rather than re-recording. Histories come from test/replay/record-histories.ts.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { temporal } from '@temporalio/proto';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from '@temporalio/worker';

jest.setTimeout(120_000);

const HISTORIES = join(__dirname, '..', 'test', 'replay', 'histories');

/** `etcdcluster_default_main_op_1-bootstrap.json` holds the history of `etcdcluster/default/main/op/1-bootstrap`. */
const workflowIdOf = (file: string) => file.replace(/\.json$/, '').replaceAll('_', '/');

// historyFromJSON cannot be used: with two copies of protobufjs 8 installed its protojson rejects the
// History type. The recorder writes protobufjs' object form, which History.fromObject reads back.
function loadHistory(file: string): temporal.api.history.v1.History {
  return temporal.api.history.v1.History.fromObject(JSON.parse(readFileSync(join(HISTORIES, file), 'utf8')));
}

const files = readdirSync(HISTORIES)
  .filter((f) => f.endsWith('.json'))
  .sort();

let workflowBundle: WorkflowBundleWithSourceMap;

beforeAll(async () => {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  workflowBundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('./index'),
    logger: new DefaultLogger('WARN'),
  });
});

describe('recorded workflow histories', () => {
  it('cover the cluster workflow and every kind of operation recorded', () => {
    const types = new Set(
      files.map((f) => {
        const started = loadHistory(f).events[0]?.workflowExecutionStartedEventAttributes;
        return started?.workflowType?.name;
      }),
    );
    expect([...types].sort()).toEqual([
      'clusterOperationWorkflow',
      'etcdClusterWorkflow',
      'etcdSnapshotScheduleWorkflow',
      'etcdSnapshotWorkflow',
      'snapshotScheduleRunWorkflow',
    ]);
    // The operations of every kind recorded, old (scaling) and new (Day 2); old histories are never re-recorded.
    for (const op of [
      'bootstrap',
      'scaleup',
      'scaledown',
      'rollout',
      'upgrade',
      'downgrade',
      'enableauth',
      'defrag',
      'recover',
    ])
      expect(files.filter((f) => f.endsWith(`-${op}.json`)).length).toBeGreaterThan(0);
    expect(files.length).toBeGreaterThanOrEqual(39);
  });

  it('include operations stopped mid-way, as an operator upgrade meets them', () => {
    const running = files.filter((f) => {
      const events = loadHistory(f).events;
      const last = events[events.length - 1]?.eventType;
      return last !== temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED;
    });
    // A scale 3 -> 5 with its learner catching up, an upgrade with a restarted member not answering yet; a
    // snapshot's second Job streaming after a transient failure, a suspended schedule, a run waiting for its
    // snapshot.
    expect(running).toEqual(
      expect.arrayContaining([
        'etcdcluster_default_scalemidway.json',
        'etcdcluster_default_scalemidway_op_2-scaleup.json',
        'etcdcluster_default_upgrademidway.json',
        'etcdcluster_default_upgrademidway_op_2-upgrade.json',
        'etcdsnapshot_default_snapshotmidway.json',
        'etcdsnapshotschedule_default_schedulemidway.json',
        'etcdsnapshotschedule_default_schedulerunmidway_run-1.json',
      ]),
    );
  });

  it('replay against the current workflow code without a determinism error', async () => {
    const results: { workflowId: string; error?: string }[] = [];
    const histories = files.map((f) => ({ workflowId: workflowIdOf(f), history: loadHistory(f) }));
    for await (const r of Worker.runReplayHistories({ workflowBundle }, histories)) {
      results.push({
        workflowId: r.workflowId,
        ...(r.error ? { error: `${r.error.name}: ${r.error.message}` } : {}),
      });
    }
    expect(results.filter((r) => r.error)).toEqual([]);
    expect(results.map((r) => r.workflowId).sort()).toEqual(files.map(workflowIdOf).sort());
  });

  it('report a history whose commands the code does not make (the check has teeth)', async () => {
    const file = files.find((f) => f.endsWith('_op_1-bootstrap.json'));
    expect(file).toBeDefined();
    const history = loadHistory(file ?? '');
    const scheduled = history.events.find(
      (e) => e.activityTaskScheduledEventAttributes,
    )?.activityTaskScheduledEventAttributes;
    expect(scheduled?.activityType?.name).toBe('observeCluster');
    if (scheduled?.activityType) scheduled.activityType.name = 'writeStatus';
    await expect(
      Worker.runReplayHistory({ workflowBundle }, history, workflowIdOf(file ?? '')),
    ).rejects.toMatchObject({ name: 'DeterminismViolationError' });
  });
});
