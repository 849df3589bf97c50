// The operator killed at every step boundary of a scale-up 3 -> 5, a scale-down 5 -> 3, an upgrade 3.5 -> 3.6 and a
// scale-up 3 -> 4 on 3.6, whose learner is fed a snapshot and so, nearly always, restarted once (RestartLearner).
// The test watches the operation's current step in status; the first time a kind of step shows (the step's text
// with member names, versions and figures taken out), it SIGKILLs the operator and waits until the stack has
// started it again. Each kind is killed at once per operation, not every combination, so the file stays short.
// Temporal resumes each operation on the new worker, and each must still end where the spec says.
//
// Under the strict writer and the member-list sampler: nothing acknowledged lost on any member, hashkv equal, no
// write gap over the fault bound (killing the operator is an injected fault), never more than one learner, never
// fewer than 3 voters.
import { UPGRADE_FROM, UPGRADE_TO } from '../../bench/upgrade';
import type { EtcdCluster } from '../../crds/etcd-cluster';
import { expectAvailability, FAULT_GAP_BOUND_MS } from '../support/availability';
import type { Harness } from '../support/cluster-harness';
import {
  connect,
  createCluster,
  etcdMemberList,
  freshNamespace,
  getCluster,
  patchSpec,
  waitConverged,
} from '../support/cluster-harness';
import { expectMembership, startMembershipSampler } from '../support/membership-sampler';
import { killOperator, stepKind } from '../support/operator-process';
import { startWriterRunning } from '../support/writer';

jest.setTimeout(900_000);

const name = 'ks';
let h: Harness;
let ns: string;

beforeAll(async () => {
  h = connect();
  ns = await freshNamespace(h, 'kill-steps');
  await createCluster(h, ns, name, { replicas: 3, version: UPGRADE_FROM });
  await waitConverged(h, ns, name, 3, 300_000);
});

/** Settled: the spec's generation observed, no operation running, `replicas` ready voters, all on `version`. */
function settled(c: EtcdCluster, replicas: number, version: string): boolean {
  const s = c.status;
  if (!s) return false;
  return (
    s.observedGeneration === c.metadata.generation &&
    !s.currentOperation &&
    s.members?.length === replicas &&
    s.members.every((m) => m.role === 'voter' && m.ready && m.version === version) &&
    s.conditions?.find((x) => x.type === 'Available')?.status === 'True'
  );
}

interface Kill {
  kind: string;
  step: string;
  restartedInMs: number;
}

/**
 * Applies `change`, then kills the operator once at the first sight of each kind of step until the cluster has
 * settled; bounded in time and in kills.
 */
async function killAtEachStep(
  what: string,
  change: Partial<EtcdCluster['spec']>,
  replicas: number,
  version: string,
  killsAt: (step: string) => boolean,
  timeoutMs = 420_000,
): Promise<{ kills: Kill[]; steps: string[] }> {
  const kills: Kill[] = [];
  const steps: string[] = [];
  const killed = new Set<string>();
  await patchSpec(h, ns, name, change);
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    if (Date.now() > deadline)
      throw new Error(`${what}: not settled within ${timeoutMs / 1000} s; steps seen: ${steps.join(' | ')}`);
    const c = await getCluster(h, ns, name);
    if (settled(c, replicas, version)) break;
    const step = c.status?.currentOperation?.step ?? '';
    if (step && step !== last) {
      last = step;
      steps.push(step);
      const kind = stepKind(step, name);
      if (!killed.has(kind) && kills.length < 12 && killsAt(step)) {
        killed.add(kind);
        const t0 = Date.now();
        await killOperator(h);
        kills.push({ kind, step, restartedInMs: Date.now() - t0 });
        console.log(`${what}: killed the operator at "${step}" (restarted in ${Date.now() - t0} ms)`);
      }
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  console.log(`${what}: settled after ${kills.length} kills; steps seen:\n  ${steps.join('\n  ')}`);
  return { kills, steps };
}

async function underWriter(
  what: string,
  change: Partial<EtcdCluster['spec']>,
  replicas: number,
  version: string,
  /** The steps killed at (default every kind), and whether a run with no kill proves anything. */
  kill: { at: (step: string) => boolean; required: boolean } = { at: () => true, required: true },
): Promise<{ kills: Kill[]; steps: string[] }> {
  const before = (await etcdMemberList(ns, name)).map((m) => m.name);
  const sampler = startMembershipSampler({ namespace: ns, name });
  const writer = await startWriterRunning({
    namespace: ns,
    name,
    // One prefix per change: two scale-ups' writers must not read each other's keys as their own.
    prefix: `/kill-steps-${what.replace(/[^a-z0-9.]+/gi, '-')}`,
  });
  let failure: unknown;
  let kills: Kill[] = [];
  let steps: string[] = [];
  try {
    ({ kills, steps } = await killAtEachStep(what, change, replicas, version, kill.at));
  } catch (err) {
    failure = err;
  }
  const report = await writer.stop();
  const membership = await sampler.stop();
  if (failure) throw failure;
  // At least one boundary was hit: a test that never killed the operator would prove nothing.
  if (kill.required) expect(kills.length).toBeGreaterThan(0);
  const after = await etcdMemberList(ns, name);
  expect(after).toHaveLength(replicas);
  expect(after.filter((m) => m.isLearner || m.name === '')).toEqual([]);
  await expectAvailability(h, report, {
    what: `operator killed at each step of ${what}`,
    boundMs: FAULT_GAP_BOUND_MS,
    members: after.map((m) => m.name),
  });
  expectMembership(membership, {
    what: `operator killed during ${what}`,
    floor: Math.min(3, before.length),
    finalVoters: replicas,
  });
  return { kills, steps };
}

test('scale-up 3 -> 5 with the operator killed at each step', async () => {
  await underWriter('scale-up 3 -> 5', { replicas: 5 }, 5, UPGRADE_FROM);
});

test('scale-down 5 -> 3 with the operator killed at each step', async () => {
  await underWriter('scale-down 5 -> 3', { replicas: 3 }, 3, UPGRADE_FROM);
});

test(`upgrade ${UPGRADE_FROM} -> ${UPGRADE_TO} with the operator killed at each step`, async () => {
  await underWriter(`upgrade ${UPGRADE_FROM} -> ${UPGRADE_TO}`, { version: UPGRADE_TO }, 3, UPGRADE_TO);
  // Converged in the harness's sense too, once the operator has been left alone.
  await waitConverged(h, ns, name, 3, 120_000);
});

test(`scale-up 3 -> 4 on ${UPGRADE_TO} with the operator killed while it restarts its learner`, async () => {
  // On 3.6, with the writers' entries behind it, the learner is sent a snapshot, which nearly always holds its own
  // publish: the operator restarts it once (contracts/learner-restart.ts). Killed only there: a kill earlier would
  // keep the operator away past etcd's own 7 s retry, and the learner would need no restart.
  const restart = /^restart learner /;
  const { kills, steps } = await underWriter(
    `scale-up 3 -> 4 on ${UPGRADE_TO}`,
    { replicas: 4 },
    4,
    UPGRADE_TO,
    {
      at: (step) => restart.test(step),
      required: false,
    },
  );
  const restarts = steps.filter((s) => restart.test(s));
  console.log(
    `scale-up 3 -> 4 on ${UPGRADE_TO}: ${restarts.length} learner restart step(s) seen, ${kills.length} kill(s)`,
  );
  // Once per learner, whatever the kill: the step a new worker takes up is the same one, never a second restart.
  expect(restarts.length).toBeLessThanOrEqual(1);
  expect(kills).toHaveLength(restarts.length);
  const claim = await h.core.readNamespacedPersistentVolumeClaim({ name: `data-${name}-3`, namespace: ns });
  const recorded = claim.metadata?.annotations?.['etcd.conductor.dev/restarted-learner'];
  if (restarts.length === 1) {
    // The member id etcd gave the learner when it was added: the restart kept its identity (and its claim, its data).
    const learner = (await etcdMemberList(ns, name)).find((m) => m.name === `${name}-3`);
    expect(recorded).toBe(learner?.id);
  } else {
    expect(recorded).toBeUndefined();
  }
});
