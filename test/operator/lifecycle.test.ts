// End-to-end journeys on the local stack: real apiserver, real etcd members as Pods, real Temporal, the operator the stack runs.
import type { Harness } from '../support/cluster-harness';
import {
  connect,
  createCluster,
  freshNamespace,
  getCluster,
  memberHashes,
  patchSpec,
  readKeys,
  waitConverged,
  writeKeys,
  eventually,
} from '../support/cluster-harness';

let h: Harness;
beforeAll(() => {
  h = connect();
});

/** Keys written before survive, and every member holds the same data. */
async function expectDataIntact(ns: string, name: string, prefix: string, written: Map<string, string>) {
  const read = await eventually('keys readable', () => readKeys(ns, name, prefix));
  expect(read).toEqual(written);
  const c = await getCluster(h, ns, name);
  const members = (c.status?.members ?? []).map((m) => m.name);
  const hashes = await eventually('equal hashKV on all members', async () => {
    const hs = await memberHashes(ns, name, members);
    return new Set(hs.values()).size === 1 ? hs : undefined;
  });
  expect(hashes.size).toBe(members.length);
}

describe('EtcdCluster lifecycle', () => {
  test('a 1-member cluster bootstraps and serves writes through its client Service', async () => {
    const ns = await freshNamespace(h, 'boot1');
    await createCluster(h, ns, 'solo', { replicas: 1 });
    const c = await waitConverged(h, ns, 'solo', 1);
    expect(c.status?.clientEndpoint).toBe(`http://solo-client.${ns}.svc:2379`);
    expect(c.status?.lastOperation).toMatchObject({ type: 'Bootstrap', result: 'Succeeded' });
    const written = await writeKeys(ns, 'solo', 'k', 10);
    await expectDataIntact(ns, 'solo', 'k', written);
  });

  test('a 3-member cluster bootstraps, then scales 3 -> 5 -> 3 -> 1 -> 3 keeping every key', async () => {
    const ns = await freshNamespace(h, 'scale');
    await createCluster(h, ns, 'main', { replicas: 3 });
    const boot = await waitConverged(h, ns, 'main', 3);
    const clusterId = boot.status?.clusterId;
    expect(clusterId).toBeTruthy();
    const written = await writeKeys(ns, 'main', 'before', 50);

    for (const replicas of [5, 3, 1, 3]) {
      await patchSpec(h, ns, 'main', { replicas });
      const c = await waitConverged(h, ns, 'main', replicas);
      expect(c.status?.clusterId).toBe(clusterId);
      expect(c.status?.members?.filter((m) => m.leader)).toHaveLength(1);
      await expectDataIntact(ns, 'main', 'before', written);
    }
  });
});
