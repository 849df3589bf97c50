// The soak: a seeded sequence of spec changes and faults against one cluster on the running stack, the strict writer
// and the membership sampler running through each step and the linearizability clients through all of them. Each step
// is judged (soak-checks.ts) once the cluster has converged to its spec; every fault is healed before the step ends
// and again at the end whatever happened. Bounded: at most `maxActions` actions, none started after `minutes`.
import { memberClientURL } from '../../crds/names';
import { realNodeLayout } from '../../localcluster/real-nodes/real-node-layout';
import { RealNodeFaults } from '../../localcluster/real-nodes/node-faults';
import { repoRoot } from '../../localcluster/stack-info';
import { stackLayout } from '../../localcluster/stack-layout';
import { cacheRoot, toolPaths } from '../../localcluster/tool-cache';
import { verifyWrites } from '../support/availability';
import type { Harness } from '../support/cluster-harness';
import {
  connect,
  createCluster,
  eventually,
  freshNamespace,
  getCluster,
  patchSpec,
} from '../support/cluster-harness';
import { containerFaults } from '../support/container-faults';
import { agreedLeader } from '../support/etcd-view';
import { checkLinearizable, startLinClients } from '../support/linearizability';
import { startMembershipSampler } from '../support/membership-sampler';
import type {
  LinearizabilityVerdict,
  StepObservation,
  TimelineEntry,
  Violation,
} from '../support/soak-checks';
import {
  formatTimeline,
  linearizabilityViolations,
  stepViolations,
  summaryTable,
} from '../support/soak-checks';
import type { Fault, PlannedSpec, SoakAction } from '../support/soak-plan';
import {
  CONTAINER_FAULTS,
  NODE_FAULTS,
  convergeBoundMs,
  describeAction,
  soakPlan,
  voterFloor,
} from '../support/soak-plan';
import type { WriteRecord } from '../support/write-history';
import { writeFigures } from '../support/write-history';
import type { WriterReport } from '../support/writer';
import { startWriter } from '../support/writer';

export const VERSIONS = { lower: '3.5.35', upper: '3.6.16' };
/** How long after a fault is healed the soak starts looking for convergence. */
const FAULT_SETTLE_MS = 10_000;

export interface SoakOptions {
  seed: number;
  minutes: number;
  maxActions?: number;
  log?: (line: string) => void;
}

export interface SoakResult {
  seed: number;
  steps: StepObservation[];
  linearizability: LinearizabilityVerdict;
  violations: Violation[];
  /** The final read-back of every acknowledged write of the whole run on every member. */
  final: { acknowledged: number; lost: number; changed: number; hashesEqual: boolean };
  timeline: string;
  summary: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/** Converged to the spec: generation observed, no operation, and either paused or every member a ready voter on the version. */
async function converged(h: Harness, ns: string, name: string, spec: PlannedSpec): Promise<boolean> {
  const c = await getCluster(h, ns, name);
  const s = c.status;
  if (s?.observedGeneration !== c.metadata.generation || s?.currentOperation) return false;
  if (spec.replicas === 0) return (s?.replicas ?? -1) === 0;
  const available = s?.conditions?.find((x) => x.type === 'Available')?.status === 'True';
  const members = s?.members ?? [];
  return (
    available &&
    s?.readyReplicas === spec.replicas &&
    members.length === spec.replicas &&
    members.every((m) => m.role === 'voter' && (m.version === undefined || m.version === spec.version))
  );
}

/** Injects a fault; returns its heal (a no-op for a kill, which heals itself as the kubelet restarts the container). */
async function inject(
  h: Harness,
  nodes: RealNodeFaults,
  ns: string,
  name: string,
  fault: Fault,
  note: (text: string) => void,
): Promise<() => Promise<void>> {
  const status = (await getCluster(h, ns, name)).status;
  const members = (status?.members ?? []).map((m) => m.name).sort();
  if (members.length === 0) {
    note(`fault ${fault.kind}: no member to hit`);
    return async () => undefined;
  }
  let pod = members[fault.target % members.length] ?? '';
  if (fault.kind === 'kill-leader') {
    pod = await agreedLeader({ namespace: ns, name }, members).catch(() => status?.leader ?? pod);
  }
  const faults = containerFaults(h);
  const nodeOf = async () =>
    (await h.core.readNamespacedPod({ namespace: ns, name: pod })).spec?.nodeName ?? '';
  switch (fault.kind) {
    case 'kill':
    case 'kill-leader':
      await faults.crashContainer(ns, pod, 'etcd');
      note(`killed ${pod}'s etcd container`);
      return async () => undefined;
    case 'freeze':
      await faults.freezeContainer(ns, pod, 'etcd');
      note(`froze ${pod}`);
      return async () => {
        await faults.thawContainer(ns, pod, 'etcd').catch((e: unknown) => note(`thaw ${pod}: ${String(e)}`));
        note(`thawed ${pod}`);
      };
    case 'node-stop': {
      const node = await nodeOf();
      await nodes.stopNode(node);
      note(`stopped node ${node} (${pod})`);
      return async () => {
        await nodes.startNode(node);
        note(`started node ${node}`);
      };
    }
    case 'partition': {
      const node = await nodeOf();
      await nodes.partition(node);
      note(`partitioned node ${node} (${pod})`);
      return async () => {
        await nodes.heal(node);
        note(`healed node ${node}`);
      };
    }
  }
}

/** Runs the soak on the stack that connect() finds; never throws for a violation (the result lists them). */
export async function runSoak(o: SoakOptions): Promise<SoakResult> {
  const log = o.log ?? ((line: string) => console.log(line));
  const h = connect();
  const startedAt = Date.now();
  const deadline = startedAt + o.minutes * 60_000;
  const timeline: TimelineEntry[] = [];
  const note = (text: string) => {
    timeline.push({ at: Date.now(), text });
    log(`soak +${((Date.now() - startedAt) / 1000).toFixed(1)}s ${text}`);
  };
  const layout = stackLayout({ repoRoot: repoRoot(), stateDir: h.stack.stateDir, hostIp: h.stack.hostIp });
  const t = toolPaths(cacheRoot());
  const nodes = new RealNodeFaults({
    net: realNodeLayout(layout),
    kubectl: t.kubectl,
    kubeconfig: h.stack.kubeconfig,
    crictl: t.crictl,
    logsDir: layout.paths.logsDir,
    log: (line) => log(line),
  });

  const ns = await freshNamespace(h, 'soak');
  const name = 'soak';
  let spec: PlannedSpec = { replicas: 3, version: VERSIONS.upper };
  const created = await createCluster(h, ns, name, { replicas: spec.replicas, version: spec.version });
  const canPause = created.spec.storage?.medium !== 'Memory';
  note(
    `seed ${o.seed}: created ${ns}/${name} (${spec.replicas} members, ${spec.version}${canPause ? '' : ', Memory: no pause'})`,
  );
  await eventually(
    'the new cluster to converge',
    async () => ((await converged(h, ns, name, spec)) ? true : undefined),
    300_000,
    1000,
  );
  note('converged');

  const plan = soakPlan({
    seed: o.seed,
    count: o.maxActions ?? 200,
    startReplicas: spec.replicas,
    startVersion: spec.version,
    versions: VERSIONS,
    faults: [...CONTAINER_FAULTS, ...NODE_FAULTS],
    canPause,
  });
  const lin = startLinClients({ namespace: ns, name, seed: o.seed });
  const steps: StepObservation[] = [];
  const reports: WriterReport[] = [];
  const heals: (() => Promise<void>)[] = [];
  const healAll = async () => {
    for (const heal of heals.splice(0)) await heal().catch((e: unknown) => note(`heal failed: ${String(e)}`));
  };

  const runStep = async (index: number, action: SoakAction, after: PlannedSpec) => {
    const before = spec;
    const boundMs = convergeBoundMs(before, action);
    const floor = voterFloor(before, action);
    const t0 = Date.now();
    note(
      `step ${index}: ${describeAction(action)} (bound ${Math.round(boundMs / 1000)} s, voter floor ${floor})`,
    );
    const sampler = startMembershipSampler({ namespace: ns, name, maxMs: boundMs + 120_000 });
    const writer = startWriter({ namespace: ns, name, prefix: `/soak/${String(index).padStart(4, '0')}` });
    lin.hold(before.replicas === 0);
    let convergedMs: number | undefined;
    let error: string | undefined;
    try {
      const timed = async (fault: Fault) => {
        const heal = await inject(h, nodes, ns, name, fault, note);
        heals.push(heal);
        await sleep(fault.seconds * 1000);
        await healAll();
      };
      switch (action.kind) {
        case 'scale':
        case 'resume':
        case 'pause':
          await patchSpec(h, ns, name, { replicas: after.replicas });
          if (action.kind === 'scale' && action.fault) {
            await sleep(action.fault.afterSeconds * 1000);
            await timed(action.fault);
          }
          break;
        case 'upgrade':
        case 'downgrade':
          await patchSpec(h, ns, name, { version: after.version });
          break;
        case 'fault':
          await timed(action.fault);
          break;
      }
      if (after.replicas === 0) lin.hold(true);
      // Status lags a fault by a probe or two: judged at once, a killed member could pass for converged before the
      // kubelet has even seen it die.
      if (action.kind === 'fault' || (action.kind === 'scale' && action.fault)) await sleep(FAULT_SETTLE_MS);
      await eventually(
        `${describeAction(action)} to converge`,
        async () => ((await converged(h, ns, name, after)) ? true : undefined),
        Math.max(0, t0 + boundMs - Date.now()),
        1000,
      );
      convergedMs = Date.now() - t0;
      note(`step ${index}: converged in ${(convergedMs / 1000).toFixed(1)} s`);
    } catch (e) {
      error = String(e).slice(0, 400);
      note(`step ${index}: ${error}`);
    } finally {
      await healAll();
    }
    spec = after;
    if (after.replicas > 0) lin.hold(false);
    const report = await writer.stop();
    const membership = await sampler.stop();
    reports.push(report);
    // What failed writes are made of (the first and the last), for the timeline.
    const failed = report.records.filter((r) => !r.ok);
    for (const r of new Set([failed[0], failed.at(-1)]))
      if (r)
        note(
          `step ${index}: a write failed after ${r.endedAt - r.startedAt} ms: ${(r.error ?? '').slice(0, 160)}`,
        );
    if (report.stalls.length > 0)
      note(
        `step ${index}: the writer's own process stalled ${report.stalls.length} times, longest ${report.figures.longestStallMs} ms`,
      );
    const obs: StepObservation = {
      index,
      action: describeAction(action),
      startedAt: t0,
      endedAt: Date.now(),
      boundMs,
      ...(convergedMs !== undefined ? { convergedMs } : {}),
      ...(error ? { error } : {}),
      writes: {
        acknowledged: report.figures.acknowledged,
        failed: report.figures.failed,
        longestGapMs: report.figures.longestGap.ms,
      },
      membership,
      floor,
      ...(after.replicas > 0 ? { expectedVoters: after.replicas } : {}),
    };
    // Settled and serving: every acknowledged write of the step on every member, and hashkv equal.
    if (convergedMs !== undefined && after.replicas > 0 && report.figures.acknowledged > 0) {
      try {
        const verified = await verifyWrites(h, report, { timeoutMs: 60_000 });
        obs.writes.lost = Math.max(...verified.members.map((m) => m.lost.length));
        obs.writes.changed = Math.max(...verified.members.map((m) => m.changed.length));
        obs.writes.unexpected = Math.max(...verified.members.map((m) => m.unexpected.length));
        obs.hashesEqual = new Set(verified.hashes.values()).size === 1;
      } catch (e) {
        obs.error = `read-back: ${String(e).slice(0, 300)}`;
        obs.hashesEqual = false;
      }
    }
    steps.push(obs);
    for (const v of stepViolations(obs)) note(`VIOLATION step ${index}: ${v.invariant}: ${v.detail}`);
  };

  try {
    for (const [i, { action, spec: after }] of plan.entries()) {
      if (Date.now() >= deadline) break;
      await runStep(i + 1, action, after);
    }
    // The final read-back needs members: a run that ended paused resumes first, as a step of its own.
    if (spec.replicas === 0)
      await runStep(steps.length + 1, { kind: 'resume', replicas: 3 }, { ...spec, replicas: 3 });
  } finally {
    await healAll();
  }
  const history = await lin.stop();
  note(`linearizability clients stopped: ${history.length} calls`);

  // Every acknowledged write of the whole run, read back from every member at the end.
  const records: WriteRecord[] = reports.flatMap((r) => r.records);
  const first = reports[0];
  if (!first) throw new Error(`the soak ran no step: its ${o.minutes} min were up before the first action`);
  const all: WriterReport = {
    ...first,
    prefix: '/soak',
    records,
    figures: writeFigures(records, startedAt, Date.now(), []),
    stalls: [],
  };
  const final = { acknowledged: all.figures.acknowledged, lost: 0, changed: 0, hashesEqual: false };
  const violations: Violation[] = steps.flatMap(stepViolations);
  try {
    const members = ((await getCluster(h, ns, name)).status?.members ?? []).map((m) => m.name);
    const verified = await verifyWrites(h, all, { members, timeoutMs: 120_000 });
    final.lost = Math.max(...verified.members.map((m) => m.lost.length));
    final.changed = Math.max(...verified.members.map((m) => m.changed.length + m.unexpected.length));
    final.hashesEqual = new Set(verified.hashes.values()).size === 1;
    note(
      `final read-back on ${members.map((m) => memberClientURL({ namespace: ns, name }, m)).length} members: ${final.acknowledged} acknowledged, ${final.lost} lost, hashkv ${final.hashesEqual ? 'equal' : 'DIFFERENT'}`,
    );
  } catch (e) {
    note(`final read-back failed: ${String(e).slice(0, 300)}`);
  }
  if (final.lost > 0 || final.changed > 0 || !final.hashesEqual)
    violations.push({
      step: -1,
      invariant: 'nothing acknowledged lost (whole run)',
      detail: `${final.lost} lost, ${final.changed} changed or invented, hashkv ${final.hashesEqual ? 'equal' : 'not equal'}`,
    });

  const linStarted = Date.now();
  const linearizability = await checkLinearizable(history, {
    timeoutSeconds: 600,
    visualize: `${h.stack.stateDir}/soak-${o.seed}-linearizability.html`,
  }).catch((e: unknown): LinearizabilityVerdict => ({
    result: 'BadInput',
    operations: history.length,
    unknown: 0,
    keys: 0,
    error: String(e),
  }));
  note(
    `linearizability: ${linearizability.result} (${linearizability.operations} calls, ${linearizability.unknown} of unknown outcome, ${linearizability.keys} keys; checked in ${((Date.now() - linStarted) / 1000).toFixed(1)} s)`,
  );
  violations.push(...linearizabilityViolations(linearizability));

  const summary = summaryTable(steps);
  const timelineText = formatTimeline(startedAt, timeline);
  log(
    `\nsoak seed ${o.seed}, ${((Date.now() - startedAt) / 60_000).toFixed(1)} min, ${steps.length} steps\n${summary}`,
  );
  log(
    `whole run: ${final.acknowledged} acknowledged writes, ${final.lost} lost, hashkv ${final.hashesEqual ? 'equal' : 'NOT equal'}; linearizability ${linearizability.result} over ${linearizability.operations} calls`,
  );
  if (violations.length > 0) {
    log(
      `\nVIOLATIONS (seed ${o.seed}):\n${violations.map((v) => `  step ${v.step}: ${v.invariant}: ${v.detail}`).join('\n')}`,
    );
    log(`\ntimeline (seed ${o.seed}):\n${timelineText}`);
  }
  return { seed: o.seed, steps, linearizability, violations, final, timeline: timelineText, summary };
}
