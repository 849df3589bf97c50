// A quorum lost with no survivor on the real stack: a 3-member cluster under the shared writer is snapshotted to MinIO
// at revision S, written on, then every member's claim and Pod are deleted. Status says PermanentQuorumLoss naming
// the snapshot and the approval; `kubectl etcd approve-recovery` approves, the Rebuild operation starts the first
// member from the snapshot in place, and the ScaleUp brings the cluster back to 3. Every key equals what
// `get --rev=S` gave before the loss, the name, client Service and its address are unchanged, the lost window is
// reported. Availability is lost with the data (that is the fault): what is asserted is what the docs promise,
// nothing acknowledged at or before the backup point is lost.
import type { EtcdCluster } from '../../crds/etcd-cluster';
import { clientServiceName } from '../../crds/names';
import { createCredentialsSecret, eventsFor, minioDestination } from '../backup/backup-harness';
import type { Harness } from '../support/cluster-harness';
import { loseMembersForGood } from '../support/container-faults';
import { agreedLeader, memberKeysAt } from '../support/etcd-view';
import { installKubectlEtcd, type KubectlEtcd } from '../support/kubectl-etcd';
import {
  connect,
  createCluster,
  etcdMemberList,
  eventually,
  freshNamespace,
  getCluster,
  memberHashes,
  waitConverged,
} from '../support/cluster-harness';
import { startWriterRunning } from '../support/writer';

jest.setTimeout(1_200_000);

const name = 'rb';
const APPROVAL = 'etcd.conductor.dev/approve-recovery';
const PREFIX = '/rb';

let h: Harness;
let ns: string;
let kubectlEtcdShim: KubectlEtcd;

beforeAll(async () => {
  h = connect();
  kubectlEtcdShim = installKubectlEtcd(h);
  ns = await freshNamespace(h, 'rebuild');
  await createCredentialsSecret(h, ns, 's3-credentials');
  await createCluster(h, ns, name, {
    replicas: 3,
    backup: { destination: minioDestination(h, 's3-credentials', `e2e/${ns}`) },
  });
  await waitConverged(h, ns, name, 3, 300_000);
});
afterAll(() => kubectlEtcdShim.remove());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const condition = (c: EtcdCluster, type: string) => c.status?.conditions?.find((x) => x.type === type);

const events = async (reason: string) => (await eventsFor(h, ns, name)).filter((e) => e.reason === reason);

const kubectlEtcd = (...args: string[]) => kubectlEtcdShim.run(...args);

const keysAt = (member: string, revision?: number) =>
  memberKeysAt({ namespace: ns, name }, member, PREFIX, revision);

test('every member wiped for good: the loss names the snapshot, the approval rebuilds in place from it, every key as at its revision', async () => {
  const members = [0, 1, 2].map((i) => `${name}-${i}`);
  const before = await getCluster(h, ns, name);
  const uid = before.metadata.uid ?? '';
  const serviceBefore = await h.core.readNamespacedService({ namespace: ns, name: clientServiceName(name) });

  const writer = await startWriterRunning({ namespace: ns, name, prefix: PREFIX });
  await sleep(3000);
  const snapshotLine = (await kubectlEtcd('snapshot', name, '-n', ns, '--timeout', '300')).stdout;
  const snapshot = /EtcdSnapshot (\S+) Succeeded: revision (\d+)/.exec(snapshotLine);
  expect(snapshot).not.toBeNull();
  const snapshotName = snapshot?.[1] ?? '';
  const S = Number(snapshot?.[2]);
  // What the cluster held at S, read before the loss (the leader's copy; every voter has applied S by now).
  const atS = await eventually('the keys at the snapshot revision', async () =>
    keysAt(members[0] ?? '', S).catch(() => undefined),
  );
  await sleep(3000);
  const report = await writer.stop();
  const acknowledged = report.records.filter((r) => r.ok);
  const highest = Math.max(...acknowledged.map((r) => r.revision ?? 0));
  expect(highest).toBeGreaterThan(S);
  // Everything before the loss with the revision it was written at (the writer puts each key once).
  const all = await keysAt(members[0] ?? '');
  // Let the operator see the newest revision before the loss.
  await sleep(5000);

  // Two members first (the leader among them), then the last one, which leaves no survivor. Each is frozen before
  // its claim and Pod go (loseMembersForGood), and the two at once, so the operator never sees members lost while
  // the rest still make a quorum (it would remove them itself).
  const leader = await agreedLeader({ namespace: ns, name }, members);
  const last = members.find((m) => m !== leader) ?? '';
  const first = members.filter((m) => m !== last);
  const wipe = (which: string[]) => loseMembersForGood(h, ns, which);
  await wipe(first);
  await eventually(
    'status to say PermanentQuorumLoss with a survivor',
    async () =>
      condition(await getCluster(h, ns, name), 'Available')?.reason === 'PermanentQuorumLoss'
        ? true
        : undefined,
    240_000,
  );
  await wipe([last]);

  const lost = await eventually(
    'status to name the snapshot a rebuild starts from',
    async () => {
      const c = await getCluster(h, ns, name);
      const m = condition(c, 'Available')?.message ?? '';
      return condition(c, 'Available')?.reason === 'PermanentQuorumLoss' && m.startsWith('all 3 members')
        ? c
        : undefined;
    },
    300_000,
  );
  const message = condition(lost, 'Available')?.message ?? '';
  console.log(`rebuild-from-backup: ${message}`);
  expect(message).toContain(`all 3 members lost their data for good (${members.join(', ')})`);
  expect(message).toContain(`rebuilds the cluster in place from snapshot ${snapshotName} at revision ${S}`);
  expect(message).toContain(`${APPROVAL}=${uid}`);

  const approved = await kubectlEtcd('approve-recovery', name, '-n', ns, '--timeout', '600');
  console.log(`rebuild-from-backup: ${approved.stdout.trim()}`);
  expect(approved.stdout).toMatch(/Rebuild \S+ Succeeded: rebuilt in place from snapshot/);

  const back = await waitConverged(h, ns, name, 3, 600_000);
  expect(back.metadata.uid).toBe(uid);
  expect(back.metadata.annotations?.[APPROVAL]).toBeUndefined();
  const rebuilt = (await events('ClusterRebuilt'))[0];
  console.log(`rebuild-from-backup: ${rebuilt?.message ?? ''}`);
  // The lost window counts from the snapshot's revision S; its end is the newest revision the operator happened to
  // see (a lower bound, docs/operations.md), printed beside the writer's highest acknowledged one.
  expect(rebuilt?.message).toContain(`recovered at revision ${S}`);
  // The restore bumps revisions by 1000000000 (agent/restore.ts): the data's own revision is the served one less that.
  const served = Number(/serves its data \(at revision (\d+)/.exec(rebuilt?.message ?? '')?.[1]);
  const restoredAt = served - 1_000_000_000;
  console.log(
    `rebuild-from-backup: snapshot status revision ${S}, data restored at ${restoredAt}; the writer's highest acknowledged revision ${highest}`,
  );
  expect(restoredAt).toBeGreaterThanOrEqual(S);

  // The name, the client Service and its address are the same objects.
  const serviceAfter = await h.core.readNamespacedService({ namespace: ns, name: clientServiceName(name) });
  expect(serviceAfter.metadata?.uid).toBe(serviceBefore.metadata?.uid);
  expect(serviceAfter.spec?.clusterIP).toBe(serviceBefore.spec?.clusterIP);
  const list = await etcdMemberList(ns, name);
  expect(list.filter((m) => !m.isLearner)).toHaveLength(3);

  // Every member holds exactly what the cluster held at the restored revision (what get --rev gave before the
  // loss), and so everything it held at S: nothing acknowledged at or before the backup point is lost.
  const expected = all.keys.filter((k) => (all.modRevisions.get(k) ?? Infinity) <= restoredAt);
  for (const k of atS.keys) expect(expected).toContain(k);
  for (const m of members) {
    const now = await eventually(`${m} to answer`, async () => keysAt(m).catch(() => undefined));
    expect({ member: m, keys: now.keys }).toEqual({ member: m, keys: expected });
  }
  // The rebuilt members hold the same data: equal hashKV at one revision (asked again while one is still applying).
  const hashes = await eventually('hashKV of the rebuilt members at one revision', async () =>
    memberHashes(h, ns, name, members).catch(() => undefined),
  );
  expect(new Set(hashes.values()).size).toBe(1);
  const kept = acknowledged.filter((r) => (r.revision ?? 0) <= S);
  expect(kept.length).toBeGreaterThan(0);
});
