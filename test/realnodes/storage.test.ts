// Storage on real nodes: the operator bootstraps a 3-member cluster on real PersistentVolumeClaims (the default
// StorageClass, local-path volumes in each node's own folder), then a member's container is killed and its Pod deleted.
// The member must come back on the same node, as the same etcd member, with its data, while the strict writer runs.
// That `down` removes the volumes with the nodes is test/localcluster/up-down.test.ts's (this file may share the
// default stack).
import { readdirSync } from 'node:fs';
import { expectAvailability, FAULT_GAP_BOUND_MS } from '../support/availability';
import type { Harness } from '../support/cluster-harness';
import {
  connect,
  createCluster,
  eventually,
  freshNamespace,
  waitConverged,
} from '../support/cluster-harness';
import { expectMembership, startMembershipSampler } from '../support/membership-sampler';
import { useRealNodeStack } from '../support/real-node-stack';
import { startWriterRunning } from '../support/writer';

jest.setTimeout(300_000);

/** Its own stack, when the default is not a real-node stack: B = 63, node network 10.63.0.0/24, names ec63-*. */
const stack = useRealNodeStack('127.63.0.1');
const name = 'st';
const members = [0, 1, 2].map((i) => `${name}-${i}`);
let h: Harness;
let ns: string;
let ids: string[];

interface PodFacts {
  uid: string;
  node: string;
  ready: boolean;
}
const pod = async (member: string): Promise<PodFacts | undefined> => {
  const p = await h.core.readNamespacedPod({ namespace: ns, name: member }).catch(() => undefined);
  if (!p) return undefined;
  return {
    uid: p.metadata?.uid ?? '',
    node: p.spec?.nodeName ?? '',
    ready: p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
  };
};

/** The PersistentVolume bound to a member's claim, and the folder on its node that holds it. */
async function volumeOf(member: string): Promise<{ pv: string; node: string; dir: string }> {
  const claim = await h.core.readNamespacedPersistentVolumeClaim({ namespace: ns, name: `data-${member}` });
  const pvName = claim.spec?.volumeName ?? '';
  expect(claim.status?.phase).toBe('Bound');
  expect(claim.spec?.storageClassName).toBe('local-path');
  const pv = await h.core.readPersistentVolume({ name: pvName });
  const node =
    pv.spec?.nodeAffinity?.required?.nodeSelectorTerms?.[0]?.matchExpressions?.[0]?.values?.[0] ?? '';
  return { pv: pvName, node, dir: pv.spec?.hostPath?.path ?? pv.spec?.local?.path ?? '' };
}

beforeAll(async () => {
  h = connect();
  ns = await freshNamespace(h, 'rn-storage', { 'pod-security.kubernetes.io/enforce': 'restricted' });
  const t0 = Date.now();
  // No storage.medium: each member gets a real claim of the default StorageClass.
  await createCluster(h, ns, name, { replicas: 3 });
  const c = await waitConverged(h, ns, name, 3, 240_000);
  console.log(
    `storage: 3 members on real claims converged ${((Date.now() - t0) / 1000).toFixed(1)}s after create`,
  );
  ids = (c.status?.members ?? []).map((m) => m.id).sort();
  expect(ids).toHaveLength(3);
});

test("binds each member's claim to a volume in its own node's folder of the stack", async () => {
  const nodes = new Set<string>();
  for (const m of members) {
    const v = await volumeOf(m);
    const p = await pod(m);
    expect(v.node).toBe(p?.node);
    nodes.add(v.node);
    const node = stack.net.nodes.find((n) => n.name === v.node);
    expect(v.dir.startsWith(`${node?.volumesDir ?? '?'}/`)).toBe(true);
    // etcd's data directory is on the volume, written through the kubelet's bind mount.
    expect(readdirSync(v.dir).length).toBeGreaterThan(0);
  }
  expect(nodes.size).toBe(3);
});

test('a member whose container is killed and whose Pod is deleted comes back on the same node as the same member, with its data', async () => {
  const victim = members[1] ?? '';
  const before = await pod(victim);
  const volume = await volumeOf(victim);
  const sampler = startMembershipSampler({ namespace: ns, name });
  const writer = await startWriterRunning({ namespace: ns, name, prefix: '/storage-pod-replaced' });
  let failure: unknown;
  try {
    const { node } = await stack.faults.killContainer(ns, victim, 'etcd');
    expect(node).toBe(before?.node);
    await h.core.deleteNamespacedPod({ namespace: ns, name: victim });
    const after = await eventually(
      `${victim} replaced and Ready`,
      async () => {
        const p = await pod(victim);
        return p && p.uid !== before?.uid && p.ready ? p : undefined;
      },
      180_000,
    );
    expect(after.node).toBe(before?.node);
    expect(await volumeOf(victim)).toEqual(volume);
    const c = await waitConverged(h, ns, name, 3, 180_000);
    // The same member ids: the member was not removed and added again, it restarted on its own data.
    expect(c.status?.members?.map((m) => m.id).sort()).toEqual(ids);
  } catch (err) {
    failure = err;
  }
  const report = await writer.stop();
  const membership = await sampler.stop();
  if (failure) throw failure;
  await expectAvailability(h, report, {
    what: 'real nodes: container killed, Pod deleted',
    boundMs: FAULT_GAP_BOUND_MS,
    members,
  });
  expectMembership(membership, { what: 'real nodes: Pod replaced', floor: 3, voterIds: ids });
});
