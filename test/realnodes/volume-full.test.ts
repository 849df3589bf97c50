// A full member volume on real nodes: a 3-member cluster on the size-limited StorageClass (each node's volumes in a
// tmpfs of fixed size), one member's volume filled to the last byte while the strict writer runs. etcd cannot write
// its data there and stops; the operator must say so (a condition and an Event naming the member and "no space left
// on device"), never QuorumLost while two members keep quorum, never remove the member; once the space is freed the
// member comes back as the same member with its data: nothing acknowledged lost, hashkv equal.
import { statfsSync } from 'node:fs';
import { SIZED_STORAGE_CLASS, SIZED_VOLUMES_BYTES } from '../../localcluster/real-nodes/local-path-storage';
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
import { startWriterRunning, strictClient } from '../support/writer';
import { clusterClientEndpoint } from '../../crds/names';

jest.setTimeout(600_000);

/** Its own stack, when the default is not a real-node stack: B = 67, node network 10.67.0.0/24, names ec67-*. */
const stack = useRealNodeStack('127.67.0.1');
const name = 'vf';
const members = [0, 1, 2].map((i) => `${name}-${i}`);
const NO_SPACE = /no space left on device/i;
let h: Harness;
let ns: string;
let ids: string[];

const isReady = async (member: string) => {
  const p = await h.core.readNamespacedPod({ namespace: ns, name: member }).catch(() => undefined);
  return p?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
};

interface ConditionSample {
  at: number;
  type: string;
  status: string;
  reason: string;
  message: string;
}

/** Samples the cluster's conditions every second until stopped: what the user read during the fault. */
function startConditionSampler() {
  const samples: ConditionSample[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const c = await getCluster(h, ns, name).catch(() => undefined);
      for (const cond of c?.status?.conditions ?? [])
        samples.push({
          at: Date.now(),
          type: cond.type,
          status: cond.status,
          reason: cond.reason ?? '',
          message: cond.message ?? '',
        });
      await new Promise((r) => setTimeout(r, 1000));
    }
  })();
  return {
    samples,
    stop: async () => {
      stopped = true;
      await loop;
      return samples;
    },
  };
}

beforeAll(async () => {
  h = connect();
  ns = await freshNamespace(h, 'rn-volume-full', { 'pod-security.kubernetes.io/enforce': 'restricted' });
  const t0 = Date.now();
  await createCluster(h, ns, name, {
    replicas: 3,
    storage: { size: '200Mi', medium: '', storageClassName: SIZED_STORAGE_CLASS },
  });
  const c = await waitConverged(h, ns, name, 3, 240_000);
  console.log(
    `volume-full: 3 members on sized claims converged ${((Date.now() - t0) / 1000).toFixed(1)}s after create`,
  );
  ids = (c.status?.members ?? []).map((m) => m.id).sort();
  expect(ids).toHaveLength(3);
});

/** Puts `mb` values of 1 MB (under etcd's 1.5 MiB request limit) through the client Service; returns how many were acknowledged. */
async function bulkPut(mb: number): Promise<number> {
  const client = strictClient([clusterClientEndpoint({ namespace: ns, name })], {}, 10_000);
  let acked = 0;
  try {
    for (let i = 0; i < mb; i++) {
      const value = Buffer.alloc(1024 * 1024, i % 251);
      // The writer's keys are checked by expectAvailability; these are only ballast and are not.
      await client
        .put(`/volume-full-bulk/${String(i).padStart(3, '0')}`)
        .value(value)
        .exec()
        .then(() => acked++)
        .catch(() => undefined);
    }
  } finally {
    client.close();
  }
  return acked;
}

test("each member's volume is a folder in its node's size-limited filesystem", async () => {
  for (const m of members) {
    const v = await stack.faults.podVolume(ns, m);
    expect(v.dir.startsWith(`${v.node.sizedVolumesDir}/`)).toBe(true);
    const fs = statfsSync(v.dir);
    expect(fs.blocks * fs.bsize).toBe(SIZED_VOLUMES_BYTES);
  }
});

test('a member whose volume fills is reported as out of space, keeps its place, and comes back with its data once space is freed', async () => {
  const leader = await agreedLeader({ namespace: ns, name }, members);
  // A follower: the fault is the full disk, not an election (the leader's node partition covers that).
  const victim = members.find((m) => m !== leader) ?? '';
  const sampler = startMembershipSampler({ namespace: ns, name });
  const conditions = startConditionSampler();
  const writer = await startWriterRunning({ namespace: ns, name, prefix: '/volume-full' });
  let failure: unknown;
  let released = false;
  try {
    const filled = await stack.faults.fillVolume(ns, victim);
    console.log(`volume-full: filled ${victim}'s volume with ${filled.bytes} bytes (leader ${leader})`);
    // Small writes land in space etcd already holds (the WAL segment is preallocated, bbolt reuses freed pages),
    // so a full volume can go unnoticed for minutes. New data that the database must grow for does not: bbolt
    // extends its file in 16 MB steps and its next commit into the new pages fails with ENOSPC.
    const bulk = await bulkPut(24);
    console.log(`volume-full: ${bulk} MB of new data put while ${victim}'s volume is full`);
    // etcd stops on its next write to the full volume; the operator tells it within its observation round.
    const told = await eventually(
      `status and an Event naming ${victim} and the full volume`,
      async () => {
        const c = await getCluster(h, ns, name);
        const cond = (c.status?.conditions ?? []).find(
          (x) => x.status === 'True' && x.message?.includes(victim) && NO_SPACE.test(x.message),
        );
        const events = await h.core.listNamespacedEvent({ namespace: ns });
        const event = events.items.find(
          (e) => e.involvedObject.name === name && e.message?.includes(victim) && NO_SPACE.test(e.message),
        );
        return cond && event ? { cond, event } : undefined;
      },
      180_000,
    );
    console.log(
      `volume-full: status ${told.cond.type}=${told.cond.status} ${told.cond.reason}: ${told.cond.message}\n` +
        `volume-full: Event ${told.event.type} ${told.event.reason}: ${told.event.message}`,
    );
    await stack.faults.releaseVolume(ns, victim);
    released = true;
    // The kubelet's crash-loop back-off decides when etcd starts again (up to 5 minutes after several exits).
    await eventually(
      `${victim} Ready again`,
      async () => ((await isReady(victim)) ? true : undefined),
      360_000,
    );
    const c = await waitConverged(h, ns, name, 3, 240_000);
    // The same member ids: the member was not removed and added again, it restarted on its own data.
    expect(c.status?.members?.map((m) => m.id).sort()).toEqual(ids);
  } catch (err) {
    failure = err;
  } finally {
    if (!released) await stack.faults.releaseVolume(ns, victim).catch(() => undefined);
  }
  const report = await writer.stop();
  const membership = await sampler.stop();
  const seen = await conditions.stop();
  if (failure) throw failure;
  // Two of three members answered throughout: quorum held, and no condition may have said otherwise.
  const quorumLost = seen.filter(
    (s) => s.reason === 'QuorumLost' || (s.type === 'Available' && s.status === 'False'),
  );
  expect(quorumLost).toEqual([]);
  await expectAvailability(h, report, {
    what: 'real nodes: a member volume filled, then freed',
    boundMs: FAULT_GAP_BOUND_MS,
    members,
  });
  expectMembership(membership, { what: 'real nodes: member volume full', floor: 3, voterIds: ids });
});
