// Gated recovery from a permanent quorum loss on the real stack: a 3-member cluster under the shared writer loses
// two members' data for good (their claims and Pods deleted) after a snapshot to MinIO. Status says
// PermanentQuorumLoss with the survivor, its revision, that snapshot and the approval to give, once, and nothing
// happens for half a minute; an approval naming another uid is refused; `kubectl etcd approve-recovery` approves,
// the Recover operation rebuilds the cluster from the survivor (--force-new-cluster) and snapshots what is left, and
// a ScaleUp, under a second writer, brings it back to 3 members. Every member then holds exactly what the survivor
// held, hashkv agrees, and the lost window is reported.
import { setHeaderOptions, PatchStrategy } from '@kubernetes/client-node';
import { API_GROUP, API_VERSION_NAME, ETCD_CLUSTER } from '../../crds/etcd-cluster';
import type { EtcdCluster } from '../../crds/etcd-cluster';
import { memberClientURL } from '../../crds/names';
import { createCredentialsSecret, eventsFor, minioDestination } from '../backup/backup-harness';
import { expectAvailability, PLANNED_GAP_BOUND_MS } from '../support/availability';
import type { Harness } from '../support/cluster-harness';
import {
  connect,
  createCluster,
  etcdMemberList,
  eventually,
  freshNamespace,
  getCluster,
  waitConverged,
} from '../support/cluster-harness';
import { loseMembersForGood } from '../support/container-faults';
import { agreedLeader } from '../support/etcd-view';
import { installKubectlEtcd, type KubectlEtcd } from '../support/kubectl-etcd';
import type { StoredKey } from '../support/write-history';
import { startWriterRunning, strictClient } from '../support/writer';

jest.setTimeout(1_200_000);

const name = 'qr';
const APPROVAL = 'etcd.conductor.dev/approve-recovery';
const crd = { group: API_GROUP, version: API_VERSION_NAME, plural: ETCD_CLUSTER.plural };

let h: Harness;
let ns: string;
let kubectlEtcdShim: KubectlEtcd;

beforeAll(async () => {
  h = connect();
  // What `npm install -g` would put on the PATH: an executable named kubectl-etcd.
  kubectlEtcdShim = installKubectlEtcd(h);
  ns = await freshNamespace(h, 'quorum-recovery');
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

async function annotate(value: string | null): Promise<void> {
  await h.custom.patchNamespacedCustomObject(
    { ...crd, namespace: ns, name, body: { metadata: { annotations: { [APPROVAL]: value } } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

async function podUid(pod: string): Promise<string | undefined> {
  return h.core
    .readNamespacedPod({ namespace: ns, name: pod })
    .then((p) => p.metadata?.uid)
    .catch(() => undefined);
}

/** The keys under `prefix` as `member` itself holds them (a serializable read needs no quorum), with its revision. */
async function memberKeys(member: string, prefix: string) {
  const c = strictClient([memberClientURL({ namespace: ns, name }, member)], {}, 10_000);
  try {
    const start = Buffer.from(`${prefix}/`);
    const end = Buffer.from(start);
    end[end.length - 1] = (end[end.length - 1] ?? 0) + 1;
    const res = await c.kv.range({ key: start, range_end: end, serializable: true });
    const keys = new Map<string, StoredKey>(
      res.kvs.map((kv) => [
        kv.key.toString(),
        { value: kv.value.toString(), modRevision: Number(kv.mod_revision) },
      ]),
    );
    return { revision: Number(res.header.revision), keys };
  } finally {
    c.close();
  }
}

test('two of three members wiped for good: reported, gated, refused with a wrong uid, approved with the plugin, rebuilt from the survivor with its data', async () => {
  const members = [0, 1, 2].map((i) => `${name}-${i}`);
  const before = await getCluster(h, ns, name);
  const uid = before.metadata.uid ?? '';
  const idsBefore = new Map((before.status?.members ?? []).map((m) => [m.name, m.id]));
  // The leader and one follower go; the survivor is a follower, which cannot elect itself.
  const leader = await agreedLeader({ namespace: ns, name }, members);
  const survivor = members.find((m) => m !== leader) ?? '';
  const wiped = members.filter((m) => m !== survivor);

  const writer = await startWriterRunning({ namespace: ns, name, prefix: '/qr-before' });
  // A backup from before the loss, which status names as the newest point of the backup.
  const snapshotLine = (await kubectlEtcd('snapshot', name, '-n', ns, '--timeout', '300')).stdout;
  const snapshot = /EtcdSnapshot (\S+) Succeeded: revision (\d+)/.exec(snapshotLine);
  expect(snapshot).not.toBeNull();
  await sleep(3000);
  // Both at once, frozen before their claims and Pods go (loseMembersForGood), so the operator never sees one member
  // lost while the others still make a quorum (it would replace that member itself, which is another story).
  await loseMembersForGood(h, ns, wiped);

  const lost = await eventually(
    'status to say PermanentQuorumLoss',
    async () => {
      const c = await getCluster(h, ns, name);
      return condition(c, 'Available')?.reason === 'PermanentQuorumLoss' ? c : undefined;
    },
    240_000,
  );
  const report = await writer.stop();
  const message = condition(lost, 'Available')?.message ?? '';
  console.log(`quorum-recovery: ${message}`);
  expect(condition(lost, 'Available')?.status).toBe('False');
  expect(condition(lost, 'Degraded')).toMatchObject({ status: 'True', reason: 'PermanentQuorumLoss' });
  expect(message).toContain(`2 of 3 members lost their data for good (${wiped.join(', ')})`);
  expect(message).toMatch(new RegExp(`survivors: ${survivor} at revision \\d+`));
  expect(message).toContain(`${APPROVAL}=${uid}`);
  expect(message).toContain(`newest snapshot ${snapshot?.[1] ?? ''} at revision ${snapshot?.[2] ?? ''}`);
  expect(await events('PermanentQuorumLoss')).toHaveLength(1);

  // What the survivor holds: it answers serializable reads alone.
  const held = await memberKeys(survivor, '/qr-before');
  const acknowledged = report.records.filter((r) => r.ok);
  const gone = acknowledged.filter((r) => !held.keys.has(r.key));
  // etcd's log is a prefix: the survivor lacks only writes acknowledged after the revision it applied.
  expect(gone.filter((r) => (r.revision ?? 0) <= held.revision)).toEqual([]);
  console.log(
    `quorum-recovery: writer acknowledged ${acknowledged.length}, the survivor ${survivor} holds ${held.keys.size} at revision ${held.revision}, ${gone.length} acknowledged writes only the lost members had`,
  );

  // Nothing happens on its own, and status is not rewritten once the claims are gone (while they were only being
  // deleted, the message said so: a change of fact, written once more).
  await eventually(
    'the wiped claims gone and said so',
    async () => {
      const m = condition(await getCluster(h, ns, name), 'Available')?.message ?? '';
      return wiped.every((w) => m.includes(`${w}: its claim was deleted`)) ? true : undefined;
    },
    180_000,
  );
  expect(await events('PermanentQuorumLoss')).toHaveLength(1);
  const survivorPod = await podUid(survivor);
  const quiet = await getCluster(h, ns, name);
  await sleep(30_000);
  const after = await getCluster(h, ns, name);
  // What was rewritten, if anything, shows in the diff before the resourceVersion says that something was.
  expect({ metadata: after.metadata, status: after.status }).toEqual({
    metadata: quiet.metadata,
    status: quiet.status,
  });
  expect(after.metadata.resourceVersion).toBe(quiet.metadata.resourceVersion);
  expect(after.status?.currentOperation).toBeUndefined();
  expect(await podUid(survivor)).toBe(survivorPod);
  for (const m of wiped) expect(await podUid(m)).toBeUndefined();

  // An approval that names another uid is refused, in status and as an Event, and nothing is done.
  await annotate(`not-${uid}`);
  const refused = await eventually('the refusal', async () => (await events('RecoveryRefused'))[0], 120_000);
  expect(refused.message).toContain(`which is not this EtcdCluster's uid ${uid}: refused, nothing was done`);
  await eventually('status to say it', async () =>
    condition(await getCluster(h, ns, name), 'Available')?.message.includes('refused, nothing was done')
      ? true
      : undefined,
  );
  await sleep(5000);
  expect(await podUid(survivor)).toBe(survivorPod);
  expect((await getCluster(h, ns, name)).status?.currentOperation).toBeUndefined();
  await annotate(null);

  // Approved with the plugin, as a user would; it waits for the Recover's end.
  const approved = await kubectlEtcd('approve-recovery', name, '-n', ns, '--timeout', '600');
  console.log(`quorum-recovery: ${approved.stdout.trim()}`);
  expect(approved.stdout).toMatch(/Recover \S+ Succeeded: rebuilt from/);

  // Under a second writer, the ScaleUp that follows brings the cluster back to 3 members.
  const writer2 = await startWriterRunning({ namespace: ns, name, prefix: '/qr-after' });
  const back = await waitConverged(h, ns, name, 3, 600_000);
  const report2 = await writer2.stop();
  await expectAvailability(h, report2, {
    what: 'scale 1 -> 3 after a recovery from permanent quorum loss',
    boundMs: PLANNED_GAP_BOUND_MS,
    members,
  });

  // The approval was used; the Recover and its window are reported.
  expect(back.metadata.annotations?.[APPROVAL]).toBeUndefined();
  const recover = (await events('QuorumRecovered'))[0];
  expect(recover?.message).toContain(`rebuilt from ${survivor}`);
  // spec.backup: a snapshot of what is left, stored before any member joined.
  expect(recover?.message).toMatch(
    new RegExp(`snapshot ${name}-pre-recovery-\\d+ of what is left stored at s3://`),
  );
  const recovered = /recovered at revision (\d+)/.exec(recover?.message ?? '')?.[1];
  expect(Number(recovered)).toBe(held.revision);
  const seen = /revisions \d+\.\.(\d+)|at or beyond revision (\d+)/.exec(recover?.message ?? '');
  expect(seen).not.toBeNull();
  console.log(`quorum-recovery: ${recover?.message ?? ''}`);
  // The window as the operator knew it beside what the writer saw (printed: the operator looks only now and then).
  const lastSeen = Number(seen?.[1] ?? seen?.[2]);
  const highest = Math.max(...acknowledged.map((r) => r.revision ?? 0));
  console.log(
    `quorum-recovery: recovered at ${held.revision}; the operator last saw ${lastSeen}; the writer's highest acknowledged revision ${highest}; ${gone.length} acknowledged writes gone`,
  );
  if (lastSeen > held.revision) {
    expect(recover?.message).toContain(`revisions ${held.revision + 1}..${lastSeen}`);
  }

  // The survivor kept its member id; the others are fresh members; etcd lists three voters.
  const idsAfter = new Map((back.status?.members ?? []).map((m) => [m.name, m.id]));
  expect(idsAfter.get(survivor)).toBe(idsBefore.get(survivor));
  for (const m of wiped) expect(idsAfter.get(m)).not.toBe(idsBefore.get(m));
  const list = await etcdMemberList(ns, name);
  expect(list.filter((m) => !m.isLearner)).toHaveLength(3);

  // Every member holds exactly what the survivor held under the first writer's prefix.
  for (const m of members) {
    const copy = await eventually(`${m} to have applied revision ${held.revision}`, async () => {
      const c = await memberKeys(m, '/qr-before');
      return c.revision >= held.revision ? c : undefined;
    });
    expect({ member: m, keys: [...copy.keys].sort() }).toEqual({ member: m, keys: [...held.keys].sort() });
  }
});
