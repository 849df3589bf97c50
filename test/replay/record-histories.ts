// Records the histories workflows/replay.test.ts replays: canonical scenarios on the Temporal dev server against the fake world.
//
// The histories already recorded stand for older workflow code and must keep replaying: they are never
// rewritten. Without names this records the scenarios that have no history in the directory yet; with
// --only it records the named ones (after removing just their files). A change that running workflows
// depend on needs patched() instead of a new recording.
//
//   npx tsc -p tsconfig.json --outDir .local/replay-build
//   node .local/replay-build/test/replay/record-histories.js [--only name,name] [outDir, default test/replay/histories]
//   npx prettier --write test/replay/histories
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import type { EtcdClusterSpec } from '../../crds/etcd-cluster';
import { cacheRoot, toolPaths } from '../../localcluster/tool-cache';
import type { etcdClusterWorkflow } from '../../workflows/cluster-workflow';
import type { ClusterChange, ClusterWorkflowInput } from '../../contracts/messages';
import {
  clusterChangedSignal,
  clusterWorkflowId,
  operationWorkflowId,
  SearchAttributes,
  WorkflowTypes,
} from '../../contracts/messages';
import type { FakeCluster, FakeClusterOptions } from '../support/fake-cluster';
import { createFakeCluster } from '../support/fake-cluster';

const NAMESPACE = 'default';

function specOf(replicas: number, more: Partial<EtcdClusterSpec> = {}): EtcdClusterSpec {
  return {
    replicas,
    version: '3.6.16',
    storage: { size: '1Gi', medium: '' },
    progressDeadlineSeconds: 600,
    ...more,
  };
}

async function until(what: string, probe: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const finished = (fake: FakeCluster, workflowId: string) =>
  until(
    `${workflowId} to finish`,
    () => fake.status?.lastOperation?.workflowId === workflowId && !fake.status.currentOperation,
  );

interface Run {
  fake: FakeCluster;
  op: (seq: number, type: Parameters<typeof operationWorkflowId>[3]) => string;
  change: (generation: number, spec: EtcdClusterSpec, more?: Partial<ClusterChange>) => Promise<void>;
}

type Scenario = (run: Run) => Promise<void>;

/** Each scenario ends with the EtcdCluster deleted, so every recorded history is complete. */
const scenarios: Record<string, { initial: EtcdClusterSpec; options?: FakeClusterOptions; body: Scenario }> =
  {
    // Bootstrap 3, scale 3 -> 5 -> 3, then delete.
    lifecycle: {
      initial: specOf(3),
      body: async ({ fake, op, change }) => {
        await finished(fake, op(1, 'Bootstrap'));
        await change(2, specOf(5));
        await finished(fake, op(2, 'ScaleUp'));
        await change(3, specOf(3));
        await finished(fake, op(3, 'ScaleDown'));
        await change(3, specOf(3), { deleted: true });
      },
    },
    // A scale up cancelled while its learner cannot catch up, halted, then retried with a retry token.
    cancelled: {
      initial: specOf(1),
      body: async ({ fake, op, change }) => {
        await finished(fake, op(1, 'Bootstrap'));
        fake.faults.learnerNeverCatchesUp();
        await change(2, specOf(2));
        await until('a learner', () => fake.learnerNames().length > 0 && fake.podNames().length === 2);
        await until(
          'the step in status',
          () => fake.status?.currentOperation?.workflowId === op(2, 'ScaleUp'),
        );
        await env.client.workflow.getHandle(op(2, 'ScaleUp')).cancel();
        await finished(fake, op(2, 'ScaleUp'));
        fake.faults.learnersCatchUp();
        await change(2, specOf(2), { retryToken: 'retry-1' });
        await finished(fake, op(3, 'ScaleUp'));
        await change(2, specOf(2), { deleted: true, retryToken: 'retry-1' });
      },
    },
    // A scale up whose progress deadline expires, then deletion while a second scale up waits on its learner.
    deadline: {
      initial: specOf(1),
      body: async ({ fake, op, change }) => {
        await finished(fake, op(1, 'Bootstrap'));
        fake.faults.learnerNeverCatchesUp();
        await change(2, specOf(2, { progressDeadlineSeconds: 4 }));
        await finished(fake, op(2, 'ScaleUp'));
        await change(3, specOf(2));
        await until('a learner', () => fake.learnerNames().length > 0);
        fake.faults.deleteClusterObject();
        await change(3, specOf(2), { deleted: true });
      },
    },
    // An options change rolls the 3 members (leader last), then delete.
    rollout: {
      initial: specOf(3),
      body: async ({ fake, op, change }) => {
        await finished(fake, op(1, 'Bootstrap'));
        await change(2, specOf(3, { options: { 'snapshot-count': '5000' } }));
        await finished(fake, op(2, 'Rollout'));
        await change(2, specOf(3, { options: { 'snapshot-count': '5000' } }), { deleted: true });
      },
    },
    // 3.5.35 -> 3.6.16 of 3 members (leader last), then delete.
    upgrade: {
      initial: specOf(3, { version: '3.5.35' }),
      body: async ({ fake, op, change }) => {
        await finished(fake, op(1, 'Bootstrap'));
        await change(2, specOf(3));
        await finished(fake, op(2, 'Upgrade'));
        await change(2, specOf(3), { deleted: true });
      },
    },
    // 3.6.16 -> 3.5.35 through etcd's downgrade API (enable, roll, etcd finishes), then delete.
    downgrade: {
      initial: specOf(3),
      body: async ({ fake, op, change }) => {
        await finished(fake, op(1, 'Bootstrap'));
        await change(2, specOf(3, { version: '3.5.35' }));
        await finished(fake, op(2, 'Downgrade'));
        await change(2, specOf(3, { version: '3.5.35' }), { deleted: true });
      },
    },
    // spec.auth added to a running cluster: root user, root role, auth on; then delete.
    auth: {
      initial: specOf(3),
      body: async ({ fake, op, change }) => {
        await finished(fake, op(1, 'Bootstrap'));
        const withAuth = specOf(3, { auth: { rootSecretRef: { name: 'auth-root' } } });
        await change(2, withAuth);
        await finished(fake, op(2, 'EnableAuth'));
        await change(2, withAuth, { deleted: true });
      },
    },
    // Databases over the fragmentation threshold: every member defragmented, the leader last; then delete.
    defrag: {
      initial: specOf(3),
      body: async ({ fake, op, change }) => {
        await finished(fake, op(1, 'Bootstrap'));
        for (const m of fake.voterNames()) fake.setDbSize(m, 64 * MIB, 8 * MIB);
        const withDefrag = specOf(3, { maintenance: { defrag: { thresholdPercent: 30, minDbSize: '1Mi' } } });
        await change(2, withDefrag);
        await finished(fake, op(2, 'Defrag'));
        await change(2, withDefrag, { deleted: true });
      },
    },
  };

const MIB = 1024 * 1024;

let env: TestWorkflowEnvironment;

const { History } = temporal.api.history.v1;

// Not historyToJSON: with two copies of protobufjs 8 installed (under @temporalio/common and
// @temporalio/proto) its protojson rejects the History type ("type must be a Type"). protobufjs' own
// object form round-trips through History.fromObject, which is what workflows/replay.test.ts uses.
function historyToObject(history: temporal.api.history.v1.IHistory): object {
  return History.toObject(History.fromObject(history), { longs: String, enums: String, bytes: String });
}

async function record(
  name: string,
  scenario: { initial: EtcdClusterSpec; options?: FakeClusterOptions; body: Scenario },
  workflowBundle: WorkflowBundleWithSourceMap,
  outDir: string,
): Promise<void> {
  const fake = createFakeCluster(scenario.options);
  const taskQueue = `record-${name}`;
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
      change: { uid, generation: 1, spec: scenario.initial },
    };
    const handle: WorkflowHandle<typeof etcdClusterWorkflow> = await env.client.workflow.start<
      typeof etcdClusterWorkflow
    >(WorkflowTypes.cluster, { workflowId: clusterWorkflowId(NAMESPACE, name), taskQueue, args: [input] });
    await scenario.body({
      fake,
      op: (seq, type) => operationWorkflowId(NAMESPACE, name, seq, type),
      change: (generation, spec, more = {}) =>
        handle.signal(clusterChangedSignal, { uid, generation, spec, ...more }),
    });
    await handle.result();
    // Every operation the cluster workflow started appears in status, as currentOperation first.
    const ids = new Set([handle.workflowId]);
    for (const s of fake.statusWrites) {
      if (s.currentOperation) ids.add(s.currentOperation.workflowId);
      if (s.lastOperation) ids.add(s.lastOperation.workflowId);
    }
    for (const id of [...ids].sort()) {
      const history = await env.client.workflow.getHandle(id).fetchHistory();
      const file = join(outDir, `${id.replaceAll('/', '_')}.json`);
      writeFileSync(file, `${JSON.stringify(historyToObject(history), null, 2)}\n`);
      console.log(`recorded ${file}`);
    }
  });
}

/** A scenario's files: `etcdcluster_default_<name>.json` and its operations'. */
const filesOf = (outDir: string, name: string) =>
  readdirSync(outDir).filter(
    (f) => f === `etcdcluster_default_${name}.json` || f.startsWith(`etcdcluster_default_${name}_op_`),
  );

/** The scenarios to record: those --only names, else those without a history in outDir. */
function chosen(args: string[], outDir: string): string[] {
  const i = args.indexOf('--only');
  if (i < 0) return Object.keys(scenarios).filter((name) => filesOf(outDir, name).length === 0);
  const names = (args[i + 1] ?? '').split(',').filter(Boolean);
  const unknown = names.filter((n) => !(n in scenarios));
  if (names.length === 0 || unknown.length > 0)
    throw new Error(
      `--only takes scenario names from ${Object.keys(scenarios).join(', ')}; unknown: ${unknown.join(', ')}`,
    );
  return names;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const positional = args.filter((a, i) => a !== '--only' && args[i - 1] !== '--only');
  const outDir = resolve(positional[0] ?? 'test/replay/histories');
  mkdirSync(outDir, { recursive: true });
  const names = chosen(args, outDir);
  console.log(names.length > 0 ? `recording ${names.join(', ')}` : 'every scenario has its histories');
  for (const name of names) for (const f of filesOf(outDir, name)) rmSync(join(outDir, f));
  if (names.length === 0) return;
  Runtime.install({ logger: new DefaultLogger('WARN') });
  env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: {
        type: 'existing-path',
        path: process.env.TEMPORAL_CLI_PATH ?? toolPaths(cacheRoot()).temporal,
      },
      searchAttributes: Object.values(SearchAttributes),
    },
  });
  try {
    const workflowBundle = await bundleWorkflowCode({
      workflowsPath: require.resolve('../../workflows/index'),
      logger: new DefaultLogger('WARN'),
    });
    for (const name of names) {
      const scenario = scenarios[name];
      if (scenario) await record(name, scenario, workflowBundle, outDir);
    }
  } finally {
    await env.teardown();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
