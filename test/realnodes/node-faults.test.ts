// Node faults on real nodes, each under the strict writer (writing to every member's own address, as a client given
// all endpoints does) and the member-list sampler: the leader's node cut off from the other nodes both ways, then
// healed; a node stopped (kubelet, containerd and its containers killed) and started again. Each asserts nothing
// acknowledged lost, equal hashkv, a write gap under the fault bound, three voters with the same ids throughout (the
// operator never takes membership below quorum), and convergence to the spec.
import { memberClientURL } from '../../crds/names';
import { expectAvailability, FAULT_GAP_BOUND_MS } from '../support/availability';
import type { Harness } from '../support/cluster-harness';
import {
  connect,
  createCluster,
  eventually,
  freshNamespace,
  getCluster,
  waitConverged,
} from '../support/cluster-harness';
import { agreedLeader } from '../support/etcd-view';
import { expectMembership, startMembershipSampler } from '../support/membership-sampler';
import { useRealNodeStack } from '../support/real-node-stack';
import { startWriterRunning } from '../support/writer';

jest.setTimeout(300_000);

/** Its own stack, when the default is not a real-node stack: B = 64, node network 10.64.0.0/24, names ec64-*. */
const stack = useRealNodeStack('127.64.0.1');
const name = 'nf';
const members = [0, 1, 2].map((i) => `${name}-${i}`);
let h: Harness;
let ns: string;
let ids: string[];

const nodeOf = async (pod: string) =>
  (await h.core.readNamespacedPod({ namespace: ns, name: pod })).spec?.nodeName ?? '';

/** Runs `fault` under the writer and the sampler, waits for convergence with the same members, then asserts. */
async function underFault(what: string, fault: () => Promise<void>) {
  const sampler = startMembershipSampler({ namespace: ns, name });
  const writer = await startWriterRunning({
    namespace: ns,
    name,
    prefix: `/${what.replace(/\W+/g, '-')}`,
    endpoints: members.map((m) => memberClientURL({ namespace: ns, name }, m)),
  });
  let failure: unknown;
  try {
    await fault();
    const c = await waitConverged(h, ns, name, 3, 180_000);
    expect(c.status?.members?.map((m) => m.id).sort()).toEqual(ids);
  } catch (err) {
    failure = err;
  }
  const report = await writer.stop();
  const membership = await sampler.stop();
  if (failure) throw failure;
  await expectAvailability(h, report, { what, boundMs: FAULT_GAP_BOUND_MS, members });
  expectMembership(membership, { what, floor: 3, voterIds: ids });
}

beforeAll(async () => {
  h = connect();
  ns = await freshNamespace(h, 'rn-node-faults', { 'pod-security.kubernetes.io/enforce': 'restricted' });
  await createCluster(h, ns, name, { replicas: 3 });
  const c = await waitConverged(h, ns, name, 3, 240_000);
  ids = (c.status?.members ?? []).map((m) => m.id).sort();
  expect(ids).toHaveLength(3);
  expect(new Set(await Promise.all(members.map(nodeOf))).size).toBe(3);
});

test("the leader's node cut off from the other nodes for 20 s: the others elect a leader and keep writing; after healing the old leader rejoins as the same member", async () => {
  await underFault('real nodes: leader node partitioned 20 s', async () => {
    const leader = await agreedLeader({ namespace: ns, name }, members);
    const node = await nodeOf(leader);
    const others = members.filter((m) => m !== leader);
    await stack.faults.partition(node);
    try {
      const next = await eventually(
        'a new leader among the two members on the other nodes',
        async () => {
          const l = await agreedLeader({ namespace: ns, name }, others);
          return l !== leader ? l : undefined;
        },
        15_000,
      );
      console.log(`partition: ${leader} on ${node} cut off, ${next} leads`);
      await new Promise((r) => setTimeout(r, 15_000));
      // Never below quorum by the operator: the cut-off member is still a voter in the majority's view.
      const c = await getCluster(h, ns, name);
      expect(c.status?.members?.map((m) => m.id).sort()).toEqual(ids);
    } finally {
      await stack.faults.heal(node);
    }
  });
});

test('a node stopped (its kubelet, runtime and containers killed) and started again after 45 s: the member on it is reported, quorum holds, and it returns as the same member', async () => {
  await underFault('real nodes: node stopped 45 s', async () => {
    const victim = members[2] ?? '';
    const node = await nodeOf(victim);
    await stack.faults.stopNode(node);
    const stoppedAt = Date.now();
    try {
      const reported = await eventually(
        `the cluster to report ${victim} not ready`,
        async () => {
          const s = (await getCluster(h, ns, name)).status;
          const degraded = s?.conditions?.find((x) => x.type === 'Degraded');
          return s?.readyReplicas === 2 && degraded?.status === 'True' ? { s, degraded } : undefined;
        },
        40_000,
      );
      console.log(
        `node stop: ${node} stopped; Degraded ${reported.degraded.reason}: ${reported.degraded.message ?? ''}`,
      );
      expect(reported.s.conditions?.find((x) => x.type === 'Available')?.status).toBe('True');
      await new Promise((r) => setTimeout(r, Math.max(0, stoppedAt + 45_000 - Date.now())));
    } finally {
      await stack.faults.startNode(node);
    }
  });
});
