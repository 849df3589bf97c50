// Roll back in place on the real stack: a 3-member cluster under the shared writer is snapshotted to MinIO at revision
// R, written on, then spec.rollback names that snapshot and etcd.conductor.dev/approve-rollback its uid. The Rebuild
// operation snapshots the present data (<name>-pre-rollback-<n>), replaces every member's data with the snapshot and
// grows back to 3. Every key equals what `get --rev` gave before at the restored revision (every key at R included),
// the pre-rollback snapshot exists, the name, client Service and its address are unchanged. Availability is
// interrupted by design (docs/backup-restore.md): what is asserted is that nothing at or before R is lost and that
// every write acknowledged before the rollback is in the pre-rollback snapshot's revision range.
import { setHeaderOptions, PatchStrategy } from '@kubernetes/client-node';
import { API_GROUP, API_VERSION_NAME, ETCD_CLUSTER } from '../../crds/etcd-cluster';
import { clientServiceName } from '../../crds/names';
import { createCredentialsSecret, eventsFor, minioDestination } from './backup-harness';
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
import { memberKeysAt } from '../support/etcd-view';
import { installKubectlEtcd, type KubectlEtcd } from '../support/kubectl-etcd';
import { startWriterRunning } from '../support/writer';

jest.setTimeout(1_200_000);

const name = 'rbk';
const APPROVAL = 'etcd.conductor.dev/approve-rollback';
const PREFIX = '/rbk';

const crd = { group: API_GROUP, version: API_VERSION_NAME, plural: ETCD_CLUSTER.plural };

let h: Harness;
let ns: string;
let kubectlEtcdShim: KubectlEtcd;

beforeAll(async () => {
  h = connect();
  kubectlEtcdShim = installKubectlEtcd(h);
  ns = await freshNamespace(h, 'rollback');
  await createCredentialsSecret(h, ns, 's3-credentials');
  await createCluster(h, ns, name, {
    replicas: 3,
    backup: { destination: minioDestination(h, 's3-credentials', `e2e/${ns}`) },
  });
  await waitConverged(h, ns, name, 3, 300_000);
});
afterAll(() => kubectlEtcdShim.remove());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const events = async (reason: string) => (await eventsFor(h, ns, name)).filter((e) => e.reason === reason);

const kubectlEtcd = (...args: string[]) => kubectlEtcdShim.run(...args);

const keysAt = (member: string, revision?: number) =>
  memberKeysAt({ namespace: ns, name }, member, PREFIX, revision);

test('spec.rollback to a snapshot, approved: the present data snapshotted, every key as at the snapshot, same name and endpoint', async () => {
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
  const R = Number(snapshot?.[2]);
  const atR = await eventually('the keys at the snapshot revision', async () =>
    keysAt(members[0] ?? '', R).catch(() => undefined),
  );
  await sleep(3000);
  const report = await writer.stop();
  const acknowledged = report.records.filter((r) => r.ok);
  const highest = Math.max(...acknowledged.map((r) => r.revision ?? 0));
  expect(highest).toBeGreaterThan(R);
  const all = await keysAt(members[0] ?? '');

  // Asked for in the spec, approved with the uid.
  await h.custom.patchNamespacedCustomObject(
    {
      ...crd,
      namespace: ns,
      name,
      body: {
        metadata: { annotations: { [APPROVAL]: uid } },
        spec: { rollback: { snapshotRef: { name: snapshotName } } },
      },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  const done = await eventually(
    'the Rebuild to end',
    async () => {
      const op = (await getCluster(h, ns, name)).status?.lastOperation;
      return op?.type === 'Rebuild' ? op : undefined;
    },
    600_000,
  );
  console.log(`rollback: ${done.message ?? ''}`);
  expect(done.result).toBe('Succeeded');
  expect(done.message).toContain(`rebuilt in place from snapshot ${snapshotName} (rolled back as approved)`);
  const pre = /kept in snapshot (\S+) \(/.exec(done.message ?? '')?.[1] ?? '';
  expect(pre).toMatch(new RegExp(`^${name}-pre-rollback-\\d+$`));
  const preSnapshot = await h.custom.getNamespacedCustomObject({
    group: API_GROUP,
    version: API_VERSION_NAME,
    plural: 'etcdsnapshots',
    namespace: ns,
    name: pre,
  });
  const preStatus = (preSnapshot as { status?: { phase?: string; artifact?: { revision?: number } } }).status;
  expect(preStatus?.phase).toBe('Succeeded');
  // The pre-rollback snapshot holds every write acknowledged before the rollback.
  expect(preStatus?.artifact?.revision ?? 0).toBeGreaterThanOrEqual(highest);

  const back = await waitConverged(h, ns, name, 3, 600_000);
  expect(back.metadata.uid).toBe(uid);
  expect(back.metadata.annotations?.[APPROVAL]).toBeUndefined();
  const serviceAfter = await h.core.readNamespacedService({ namespace: ns, name: clientServiceName(name) });
  expect(serviceAfter.metadata?.uid).toBe(serviceBefore.metadata?.uid);
  expect(serviceAfter.spec?.clusterIP).toBe(serviceBefore.spec?.clusterIP);
  expect((await etcdMemberList(ns, name)).filter((m) => !m.isLearner)).toHaveLength(3);

  const served = Number(/serves its data \(at revision (\d+)/.exec(done.message ?? '')?.[1]);
  const restoredAt = served - 1_000_000_000;
  console.log(
    `rollback: snapshot revision ${R}, data restored at ${restoredAt}, writer's highest ${highest}`,
  );
  expect(restoredAt).toBeGreaterThanOrEqual(R);
  // The window given up counts from the restored revision (not the bumped one the member serves).
  expect(done.message).toContain(`recovered at revision ${restoredAt}`);
  const expected = all.keys.filter((k) => (all.modRevisions.get(k) ?? Infinity) <= restoredAt);
  for (const k of atR.keys) expect(expected).toContain(k);
  expect(expected.length).toBeLessThan(all.keys.length);
  for (const m of members) {
    const now = await eventually(`${m} to answer`, async () => keysAt(m).catch(() => undefined));
    expect({ member: m, keys: now.keys }).toEqual({ member: m, keys: expected });
  }
  // Used once: no second rollback starts.
  await sleep(10_000);
  expect((await getCluster(h, ns, name)).status?.lastOperation?.type).not.toBe('Rebuild');
  expect((await events('ClusterRebuilt')).length).toBe(1);
});
