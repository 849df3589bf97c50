// Downgrade 3.6.16 -> 3.5.35 of 3 members under a client writing throughout, with a pre-downgrade snapshot to MinIO, and a clear CEL refusal of a 3.5 patch below the floor.
import { UPGRADE_FROM, UPGRADE_TO } from '../../bench/upgrade';
import { expectAvailability, PLANNED_GAP_BOUND_MS } from '../support/availability';
import { apiMessage } from '../localcluster/kube';
import type { EtcdCluster } from '../../crds/etcd-cluster';
import { createCredentialsSecret, listSnapshots, minioDestination } from '../backup/backup-harness';
import type { EtcdSnapshot } from '../../crds/etcd-snapshot';
import { Labels } from '../../crds/labels';
import type { Harness } from '../support/cluster-harness';
import { connect, createCluster, freshNamespace, patchSpec, waitConverged } from '../support/cluster-harness';
import { everyMemberOn, watchRoll } from '../support/rolling-watch';
import { startWriterRunning } from '../support/writer';

jest.setTimeout(1_200_000);

let h: Harness;
beforeAll(() => {
  h = connect();
});

const progressing = (c: EtcdCluster) => c.status?.conditions?.find((x) => x.type === 'Progressing');

describe('rolling downgrade', () => {
  let ns: string;
  const name = 'down';

  test(`${UPGRADE_TO} -> ${UPGRADE_FROM} under writes: etcd's downgrade enabled first, the leader restarted last, every acknowledged write kept, equal hashkv, the pre-downgrade snapshot named`, async () => {
    ns = await freshNamespace(h, 'downgrade');
    await createCredentialsSecret(h, ns, 's3');
    await createCluster(h, ns, name, {
      replicas: 3,
      version: UPGRADE_TO,
      backup: { destination: minioDestination(h, 's3', `downgrade/${ns}`) },
    });
    const before = await waitConverged(h, ns, name, 3, 300_000);
    expect(before.status?.members?.map((m) => m.version)).toEqual([UPGRADE_TO, UPGRADE_TO, UPGRADE_TO]);
    const ids = before.status?.members?.map((m) => [m.name, m.id]);
    const oldLeader = before.status?.members?.find((m) => m.leader)?.name ?? '';

    const writer = await startWriterRunning({ namespace: ns, name, prefix: '/downgrade' });
    await patchSpec(h, ns, name, { version: UPGRADE_FROM });

    const roll = await watchRoll(h, ns, name, {
      type: 'Downgrade',
      members: 3,
      done: everyMemberOn(UPGRADE_FROM),
      what: 'every member reports 3.5 and the Downgrade finished',
      timeoutMs: 900_000,
    });
    const { cluster: done, restartedOrder, operationTypes, versionsDuring } = roll;
    const report = await writer.stop();
    console.log(`downgrade order: ${restartedOrder.join(', ')}`);

    expect([...operationTypes]).toEqual(['Downgrade']);
    expect(done.status?.lastOperation).toMatchObject({ type: 'Downgrade', result: 'Succeeded' });
    // Same members, restarted on their claims.
    expect(done.status?.members?.map((m) => [m.name, m.id])).toEqual(ids);
    // Followers first by ordinal, the old leader last.
    const followers = [`${name}-0`, `${name}-1`, `${name}-2`].filter((m) => m !== oldLeader);
    expect(restartedOrder).toEqual([...followers, oldLeader]);
    const pods = (await h.core.listNamespacedPod({ namespace: ns, labelSelector: Labels.member })).items;
    expect(pods).toHaveLength(3);
    expect(pods.every((p) => p.spec?.containers[0]?.image === `quay.io/coreos/etcd:v${UPGRADE_FROM}`)).toBe(
      true,
    );
    // status.members[].version moved while the operation ran: some member was seen on 3.5 before the end.
    expect([...versionsDuring].some((v) => v.includes(`=${UPGRADE_FROM}`))).toBe(true);

    // etcd's downgrade was enabled (Event), and etcd reports the cluster at 3.5 with the downgrade finished.
    const events = (await h.core.listNamespacedEvent({ namespace: ns })).items;
    expect(events.some((e) => e.reason === 'DowngradeEnabled' && e.message?.includes('3.5.0'))).toBe(true);
    expect(
      events.some(
        (e) =>
          e.reason === 'DowngradeStarted' &&
          e.message?.includes(`downgrade ${ns}/${name} ${UPGRADE_TO} -> ${UPGRADE_FROM}`),
      ),
    ).toBe(true);

    // The pre-downgrade snapshot exists, succeeded, and its artifact is named in lastOperation.message.
    const snaps = (await listSnapshots(h, ns)).filter((x) =>
      x.metadata?.name?.startsWith(`${name}-pre-upgrade-`),
    );
    expect(snaps).toHaveLength(1);
    const snap = snaps[0] as EtcdSnapshot;
    expect(snap.status?.phase).toBe('Succeeded');
    const uri = snap.status?.artifact?.uri ?? '';
    expect(uri).toMatch(/^s3:\/\//);
    expect(done.status?.lastOperation?.message).toContain(uri);

    // No acknowledged write lost on any member; every member holds the same data; no gap of 1 s.
    await expectAvailability(h, report, {
      what: `downgrade ${UPGRADE_TO} -> ${UPGRADE_FROM}`,
      boundMs: PLANNED_GAP_BOUND_MS,
      members: [`${name}-0`, `${name}-1`, `${name}-2`],
    });
    expect(progressing(done)?.reason).toBe('Converged');
  });

  test('a downgrade to a 3.5 patch below 3.5.32 is refused by CEL, naming the patch to take', async () => {
    const ns2 = await freshNamespace(h, 'downgrade-floor');
    // Paused: only the spec transition is judged.
    await createCluster(h, ns2, 'new', { replicas: 0, version: UPGRADE_TO });
    const refused = await patchSpec(h, ns2, 'new', { version: '3.5.20' }).then(
      () => undefined,
      (err: unknown) => ({ code: (err as { code?: number }).code, message: apiMessage(err) }),
    );
    expect(refused).toMatchObject({ code: 422 });
    expect(refused?.message).toContain(
      `version ${UPGRADE_TO} -> 3.5.20 is refused: a cluster that runs 3.6 may only have 3.5 members on 3.5.32 or later`,
    );
  });
});
