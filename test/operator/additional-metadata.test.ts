// spec.additionalMetadata on the real stack: every object the operator makes for a cluster carries it, an edit reaches them all in place (no member replaced, nothing acknowledged lost), and a reserved key is refused by the API server.
import { BatchV1Api, PolicyV1Api } from '@kubernetes/client-node';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { EtcdClusterSpec } from '../../crds/etcd-cluster';
import { Labels } from '../../crds/labels';
import type { Harness } from '../support/cluster-harness';
import {
  connect,
  createCluster,
  eventually,
  freshNamespace,
  getCluster,
  patchSpec,
  waitConverged,
} from '../support/cluster-harness';
import { expectAvailability, PLANNED_GAP_BOUND_MS } from '../support/availability';
import { startWriterRunning } from '../support/writer';
import {
  createCredentialsSecret,
  createSnapshot,
  minioDestination,
  waitFinished,
  waitVerified,
} from '../backup/backup-harness';

const verifiedCondition = (s: { status?: { conditions?: { type: string; status: string }[] } }) =>
  s.status?.conditions?.find((c) => c.type === 'Verified')?.status;

jest.setTimeout(900_000);

let h: Harness;
beforeAll(() => {
  h = connect();
});

type Obj = KubernetesObject & { kind: string };

/** Every object in the namespace the cluster owns, or that carries its instance label (snapshot Jobs and their Pods). */
async function clusterObjects(ns: string, name: string, uid: string): Promise<Obj[]> {
  const batch = h.kc.makeApiClient(BatchV1Api);
  const policy = h.kc.makeApiClient(PolicyV1Api);
  const tag = (kind: string, items: KubernetesObject[]) => items.map((o) => ({ ...o, kind }));
  const all = [
    ...tag('Pod', (await h.core.listNamespacedPod({ namespace: ns })).items),
    ...tag('Service', (await h.core.listNamespacedService({ namespace: ns })).items),
    ...tag(
      'PersistentVolumeClaim',
      (await h.core.listNamespacedPersistentVolumeClaim({ namespace: ns })).items,
    ),
    ...tag('Secret', (await h.core.listNamespacedSecret({ namespace: ns })).items),
    ...tag('ConfigMap', (await h.core.listNamespacedConfigMap({ namespace: ns })).items),
    ...tag('PodDisruptionBudget', (await policy.listNamespacedPodDisruptionBudget({ namespace: ns })).items),
    ...tag('Job', (await batch.listNamespacedJob({ namespace: ns })).items),
  ];
  return all.filter(
    (o) =>
      o.metadata?.ownerReferences?.some((r) => r.uid === uid) ||
      o.metadata?.labels?.['app.kubernetes.io/instance'] === name,
  );
}

const describeObj = (o: Obj) => `${o.kind}/${o.metadata?.name ?? '?'}`;
const isMember = (o: Obj) => o.kind === 'Pod' && o.metadata?.labels?.[Labels.member] !== undefined;
const memberUids = (objs: Obj[]) =>
  Object.fromEntries(objs.filter(isMember).map((o) => [o.metadata?.name, o.metadata?.uid]));

/** The objects lacking what `carries` wants, by name: empty when all carry it. */
function lacking(objs: Obj[], carries: (o: Obj) => boolean): string[] {
  return objs.filter((o) => !carries(o)).map(describeObj);
}

describe('spec.additionalMetadata', () => {
  test('is on every object the operator creates, follows an edit in place under writes, and keeps keys others set', async () => {
    const ns = await freshNamespace(h, 'meta');
    const name = 'am';
    const spec: Partial<EtcdClusterSpec> = {
      replicas: 3,
      additionalMetadata: {
        labels: { team: 'storage', 'example.com/cost': 'c1' },
        annotations: { 'example.com/owner': 'db' },
      },
      // Pod-only extras on top: member Pods take this team, every other object the shared one.
      podLabels: { team: 'members' },
    };
    await createCluster(h, ns, name, spec);
    const converged = await waitConverged(h, ns, name, 3, 300_000);
    const uid = converged.metadata.uid ?? '';

    // A snapshot makes a Job and its Pod for the cluster, and so does its check (the verification Job).
    await createCredentialsSecret(h, ns, 's3-credentials');
    await createSnapshot(h, ns, 'one', {
      clusterRef: { name },
      destination: minioDestination(h, 's3-credentials', `e2e/${ns}`),
    });
    expect((await waitFinished(h, ns, 'one')).status?.phase).toBe('Succeeded');
    expect(verifiedCondition(await waitVerified(h, ns, 'one'))).toBe('True');

    const before = await clusterObjects(ns, name, uid);
    const kinds = (objs: Obj[]) =>
      objs.reduce<Record<string, number>>((n, o) => ({ ...n, [o.kind]: (n[o.kind] ?? 0) + 1 }), {});
    // The peer and client Services; 3 claims; the budget; the snapshot and verification Jobs; 3 members and the
    // Jobs' Pods. A snapshot attempt that fails is retried in a Job of its own (`<snapshot>-<attempt>`): Session 21's
    // third CI run found 3 Jobs, so the snapshot's and the check's are asserted by name, and any other must be a
    // later attempt of the snapshot.
    const { Job: jobs, ...rest } = kinds(before);
    expect(rest).toMatchObject({ Service: 2, PersistentVolumeClaim: 3, PodDisruptionBudget: 1 });
    const jobNames = before.filter((o) => o.kind === 'Job').map((o) => o.metadata?.name ?? '');
    expect(jobNames).toEqual(expect.arrayContaining(['one-1', 'one-verify-1']));
    expect(
      jobNames.filter((j) => !['one-1', 'one-verify-1'].includes(j)).every((j) => /^one-\d+$/.test(j)),
    ).toBe(true);
    expect(jobs).toBeGreaterThanOrEqual(2);
    expect(before.filter(isMember)).toHaveLength(3);
    expect(kinds(before).Pod).toBeGreaterThanOrEqual(5);
    expect(
      lacking(
        before,
        (o) =>
          o.metadata?.labels?.team === (isMember(o) ? 'members' : 'storage') &&
          o.metadata.labels['example.com/cost'] === 'c1' &&
          o.metadata.annotations?.['example.com/owner'] === 'db',
      ),
    ).toEqual([]);
    // The operator's own labels are still there.
    expect(
      lacking(before, (o) => o.metadata?.labels?.['app.kubernetes.io/managed-by'] === 'etcd-conductor'),
    ).toEqual([]);

    // Someone else labels the client Service: the operator leaves that key alone.
    const { setHeaderOptions, PatchStrategy } = await import('@kubernetes/client-node');
    await h.core.patchNamespacedService(
      {
        name: `${name}-client`,
        namespace: ns,
        body: { metadata: { labels: { 'example.com/by-hand': 'kept' } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );

    const uidsBefore = memberUids(before);
    const writer = await startWriterRunning({ namespace: ns, name, prefix: '/additional-metadata' });
    await patchSpec(h, ns, name, {
      additionalMetadata: {
        labels: { team: 'platform', 'example.com/cost': null },
        annotations: { 'example.com/owner': 'db2', 'example.com/extra': 'x' },
      },
    } as unknown as Partial<EtcdClusterSpec>);
    const followed = (o: Obj) =>
      o.metadata?.labels?.team === (isMember(o) ? 'members' : 'platform') &&
      o.metadata.labels['example.com/cost'] === undefined &&
      o.metadata.annotations?.['example.com/owner'] === 'db2' &&
      o.metadata.annotations['example.com/extra'] === 'x';
    const after = await eventually(
      'every object carries the edited metadata',
      async () => {
        const objs = await clusterObjects(ns, name, uid);
        return objs.length === before.length && lacking(objs, followed).length === 0 ? objs : undefined;
      },
      300_000,
    );
    const settled = await waitConverged(h, ns, name, 3, 300_000);
    await expectAvailability(h, await writer.stop(), {
      what: 'additionalMetadata edited on a running cluster',
      boundMs: PLANNED_GAP_BOUND_MS,
      members: [`${name}-0`, `${name}-1`, `${name}-2`],
    });
    expect(memberUids(after)).toEqual(uidsBefore);
    expect(settled.status?.updatedReplicas).toBe(3);
    const client = after.find((o) => o.kind === 'Service' && o.metadata?.name === `${name}-client`);
    expect(client?.metadata?.labels?.['example.com/by-hand']).toBe('kept');
  });

  test.each<[string, Record<string, Record<string, string>>, RegExp]>([
    [
      'an operator label',
      { labels: { 'app.kubernetes.io/instance': 'mine' } },
      /additionalMetadata\.labels may not set app\.kubernetes\.io\/instance: the operator sets that key itself/,
    ],
    [
      "the operator's label prefix",
      { labels: { [Labels.cluster]: 'other' } },
      /additionalMetadata\.labels may not set etcd\.conductor\.dev\/cluster/,
    ],
    [
      "the operator's annotation prefix",
      { annotations: { 'etcd.conductor.dev/pod-metadata': '{}' } },
      /additionalMetadata\.annotations may not set etcd\.conductor\.dev\/pod-metadata: the etcd\.conductor\.dev\/ prefix is reserved/,
    ],
  ])(
    'a reserved key (%s) is refused by the API server, naming the key',
    async (_case, additionalMetadata, message) => {
      const ns = await freshNamespace(h, 'meta-refused');
      await expect(createCluster(h, ns, 'refused', { replicas: 1, additionalMetadata })).rejects.toThrow(
        message,
      );
      // An edit of an existing cluster is refused the same way, and leaves it as it was.
      await createCluster(h, ns, 'kept', { replicas: 0, additionalMetadata: { labels: { team: 'a' } } });
      await expect(patchSpec(h, ns, 'kept', { additionalMetadata })).rejects.toThrow(message);
      expect((await getCluster(h, ns, 'kept')).spec.additionalMetadata).toEqual({ labels: { team: 'a' } });
    },
  );
});
