// Upgrade 3.5 -> 3.6, then ask for 3.5 again the moment every member reports 3.6: the downgrade must wait for etcd to
// finish the upgrade (its cluster version lags a few seconds) and then go through etcd's downgrade API, rather than
// restarting a member on a 3.5 binary that cannot join a 3.6 cluster (the bench once found it stuck that way).
import { UPGRADE_FROM, UPGRADE_TO } from '../../bench/upgrade';
import type { EtcdCluster } from '../../crds/etcd-cluster';
import { expectAvailability, PLANNED_GAP_BOUND_MS } from '../support/availability';
import type { Harness } from '../support/cluster-harness';
import {
  connect,
  createCluster,
  eventually,
  freshNamespace,
  getCluster,
  patchSpec,
  readKeys,
  waitConverged,
  writeKeys,
} from '../support/cluster-harness';
import { startWriterRunning } from '../support/writer';

jest.setTimeout(1_200_000);

let h: Harness;
beforeAll(() => {
  h = connect();
});

/** The cluster once every member reports `version`, with no operation running. */
const settledOn = (ns: string, name: string, version: string, type: string) =>
  eventually(
    `every member reports ${version} after ${type}`,
    async () => {
      const c = await getCluster(h, ns, name);
      const s = c.status;
      if (!s) return undefined;
      const ok =
        s.observedGeneration === c.metadata.generation &&
        s.members?.length === 3 &&
        s.members.every((m) => m.version === version && m.ready) &&
        !s.currentOperation &&
        s.lastOperation?.type === type;
      return ok ? c : undefined;
    },
    900_000,
    300,
  );

test(`${UPGRADE_FROM} -> ${UPGRADE_TO} -> ${UPGRADE_FROM} back to back: the downgrade waits for etcd's cluster version, then succeeds with the data intact`, async () => {
  const ns = await freshNamespace(h, 'roundtrip');
  const name = 'rt';
  await createCluster(h, ns, name, { replicas: 3, version: UPGRADE_FROM });
  await waitConverged(h, ns, name, 3, 300_000);
  const written = await writeKeys(ns, name, '/roundtrip', 20);

  const writer = await startWriterRunning({ namespace: ns, name, prefix: '/roundtrip-writes' });
  await patchSpec(h, ns, name, { version: UPGRADE_TO });
  const up: EtcdCluster = await settledOn(ns, name, UPGRADE_TO, 'Upgrade');
  expect(up.status?.lastOperation?.result).toBe('Succeeded');

  // At once: etcd's cluster version may still read 3.5.0 here.
  await patchSpec(h, ns, name, { version: UPGRADE_FROM });
  const down = await settledOn(ns, name, UPGRADE_FROM, 'Downgrade');
  expect(down.status?.lastOperation).toMatchObject({ type: 'Downgrade', result: 'Succeeded' });
  const events = (await h.core.listNamespacedEvent({ namespace: ns })).items;
  expect(events.some((e) => e.reason === 'DowngradeEnabled' && e.message?.includes('3.5.0'))).toBe(true);

  const read = await eventually('keys readable', () => readKeys(ns, name, '/roundtrip'));
  expect(read).toEqual(written);
  await expectAvailability(h, await writer.stop(), {
    what: `upgrade ${UPGRADE_FROM} -> ${UPGRADE_TO} -> ${UPGRADE_FROM} back to back`,
    boundMs: PLANNED_GAP_BOUND_MS,
    members: [`${name}-0`, `${name}-1`, `${name}-2`],
  });
  await h.core.deleteNamespace({ name: ns });
});
