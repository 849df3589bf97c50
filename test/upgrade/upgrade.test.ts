// Rolling etcd upgrades on the real stack: 3.5.35 -> 3.6.16 of 3 members under a client writing throughout, and the path rules refusing what etcd does not support.
import { apiMessage } from '../localcluster/kube';
import { UPGRADE_FROM, UPGRADE_TO } from '../../bench/upgrade';
import { expectAvailability, PLANNED_GAP_BOUND_MS } from '../support/availability';
import type { Harness } from '../support/cluster-harness';
import {
  connect,
  createCluster,
  freshNamespace,
  getCluster,
  patchSpec,
  waitConverged,
} from '../support/cluster-harness';
import { everyMemberOn, watchRoll } from '../support/rolling-watch';
import { startWriterRunning } from '../support/writer';

jest.setTimeout(900_000);

let h: Harness;
beforeAll(() => {
  h = connect();
});

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (err: unknown) => ({ code: (err as { code?: number }).code, message: apiMessage(err) }),
  );

describe('rolling upgrade', () => {
  let ns: string;
  const name = 'up';

  test(`${UPGRADE_FROM} -> ${UPGRADE_TO} under writes: every member on the new version, every acknowledged write kept, equal hashkv, the leader restarted last`, async () => {
    ns = await freshNamespace(h, 'upgrade');
    await createCluster(h, ns, name, { replicas: 3, version: UPGRADE_FROM });
    const before = await waitConverged(h, ns, name, 3, 300_000);
    expect(before.status?.members?.map((m) => m.version)).toEqual([UPGRADE_FROM, UPGRADE_FROM, UPGRADE_FROM]);
    const ids = before.status?.members?.map((m) => [m.name, m.id]);

    const writer = await startWriterRunning({ namespace: ns, name, prefix: '/upgrade' });

    await patchSpec(h, ns, name, { version: UPGRADE_TO });
    // Watch the upgrade: the order in which member Pods are replaced (new Pod uids tell the order exactly;
    // status.members[].version follows too, but only as often as it is written).
    const roll = await watchRoll(h, ns, name, {
      type: 'Upgrade',
      members: 3,
      done: everyMemberOn(UPGRADE_TO),
      what: 'every member reports the new version and the upgrade finished',
      timeoutMs: 600_000,
    });
    const done = roll.cluster;
    const upgradedOrder = roll.restartedOrder;
    const report = await writer.stop();
    console.log(`upgrade order: ${upgradedOrder.join(', ')}`);

    expect(roll.operationTypes.has('Upgrade')).toBe(true);
    expect(done.status?.lastOperation).toMatchObject({ type: 'Upgrade', result: 'Succeeded' });
    // The same members (ids) came back: the upgrade restarted them on their claims, it did not replace them.
    expect(done.status?.members?.map((m) => [m.name, m.id])).toEqual(ids);

    // Followers first by ordinal, the leader of before the upgrade last.
    const oldLeader = before.status?.members?.find((m) => m.leader)?.name ?? '';
    const followers = ['up-0', 'up-1', 'up-2'].filter((m) => m !== oldLeader);
    expect(upgradedOrder).toEqual([...followers, oldLeader]);
    const pods = (await h.core.listNamespacedPod({ namespace: ns })).items
      .filter((p) => p.metadata?.name?.startsWith(`${name}-`))
      .sort((a, b) =>
        String(a.metadata?.creationTimestamp?.toISOString()).localeCompare(
          String(b.metadata?.creationTimestamp?.toISOString()),
        ),
      );
    expect(pods.map((p) => p.metadata?.name).pop()).toBe(oldLeader);
    expect(pods.every((p) => p.spec?.containers[0]?.image === `quay.io/coreos/etcd:v${UPGRADE_TO}`)).toBe(
      true,
    );

    // No acknowledged write was lost on any member, every member holds the same data, writes never stopped for 1 s.
    await expectAvailability(h, report, {
      what: `upgrade ${UPGRADE_FROM} -> ${UPGRADE_TO}`,
      boundMs: PLANNED_GAP_BOUND_MS,
      members: ['up-0', 'up-1', 'up-2'],
    });
  });

  test('the path rules refuse a major change, a skipped minor and a downgrade below 3.5.32 (CEL), touching nothing', async () => {
    expect(ns).toBeDefined();
    const major = await refusal(patchSpec(h, ns, name, { version: '4.0.0' }));
    expect(major).toMatchObject({ code: 422 });
    expect(major?.message).toContain(`version ${UPGRADE_TO} -> 4.0.0 changes the major version`);
    const skipped = await refusal(patchSpec(h, ns, name, { version: '3.8.0' }));
    expect(skipped).toMatchObject({ code: 422 });
    expect(skipped?.message).toContain(
      `version ${UPGRADE_TO} -> 3.8.0 skips a minor version, which etcd does not support: set version to the newest patch of the next minor after ${UPGRADE_TO} first, then to 3.8.0`,
    );

    // A downgrade to a 3.5 patch below 3.5.32 is refused at once too (test/upgrade/downgrade.test.ts does the
    // allowed downgrade); nothing was touched by any refusal.
    const low = await refusal(patchSpec(h, ns, name, { version: '3.5.20' }));
    expect(low).toMatchObject({ code: 422 });
    const c = await getCluster(h, ns, name);
    expect(c.spec.version).toBe(UPGRADE_TO);
    expect(c.status?.members?.every((m) => m.version === UPGRADE_TO)).toBe(true);
  });

  test('3.6 is refused from a 3.5 patch below 3.5.32, naming the patch to take first (CEL)', async () => {
    const ns2 = await freshNamespace(h, 'upgrade-floor');
    // Paused (replicas 0), so nothing runs the old patch: only the spec transition is judged.
    await createCluster(h, ns2, 'old', { replicas: 0, version: '3.5.20' });
    const refused = await refusal(patchSpec(h, ns2, 'old', { version: UPGRADE_TO }));
    expect(refused).toMatchObject({ code: 422 });
    expect(refused?.message).toContain('requires every 3.5 member to run 3.5.32 or later before 3.6');
  });
});
