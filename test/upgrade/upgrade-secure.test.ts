// A rolling 3.5.35 -> 3.6.16 upgrade of a cluster with peer and client TLS and auth on, then the downgrade back, each under a client writing throughout (authenticated, with a certificate of the cluster's CA), with a pre-upgrade snapshot.
import { randomBytes } from 'node:crypto';
import { Etcd3 } from 'etcd3';
import { UPGRADE_FROM, UPGRADE_TO } from '../../bench/upgrade';
import { expectAvailability, PLANNED_GAP_BOUND_MS } from '../support/availability';
import type { EtcdSnapshot } from '../../crds/etcd-snapshot';
import { createCredentialsSecret, listSnapshots, minioDestination } from '../backup/backup-harness';
import type { ClientCredentials, Harness } from '../support/cluster-harness';
import {
  clientEndpoint,
  connect,
  createCluster,
  freshNamespace,
  getCluster,
  patchSpec,
  waitConverged,
} from '../support/cluster-harness';
import { everyMemberOn, watchRoll } from '../support/rolling-watch';
import { startWriterRunning } from '../support/writer';
import { makeCA, memberSans, tlsSecret } from '../tls/tls-certs';
import type { Pem, TestCA } from '../tls/tls-certs';

jest.setTimeout(1_200_000);

const name = 'sec';
const members = [`${name}-0`, `${name}-1`, `${name}-2`];
// Long and random, as in test/auth: the root password of the cluster.
const password = `pw-${randomBytes(12).toString('hex')}`;
const root = { username: 'root', password };
let h: Harness;
let ns: string;
let ca: TestCA;
let app: Pem;
let credentials: ClientCredentials;

beforeAll(async () => {
  h = connect();
  ns = await freshNamespace(h, 'upgrade-secure');
  ca = makeCA('etcd-ca');
  app = ca.issue('app');
  credentials = { rootCertificate: ca.cert, certChain: app.cert, privateKey: app.key };
  for (const body of [
    tlsSecret('peer-certs', ca.issue(`${name}-peer`, memberSans(ns, name)), ca.cert),
    tlsSecret('server-certs', ca.issue(`${name}-client`, memberSans(ns, name)), ca.cert),
    tlsSecret('operator-cert', ca.issue('etcd-conductor'), ca.cert),
  ])
    await h.core.createNamespacedSecret({ namespace: ns, body });
  await h.core.createNamespacedSecret({
    namespace: ns,
    body: { metadata: { name: 'root' }, stringData: { password } },
  });
  await createCredentialsSecret(h, ns, 's3');
});

describe('rolling upgrade with TLS and auth', () => {
  test(`${UPGRADE_FROM} -> ${UPGRADE_TO} with peer+client TLS and auth under authenticated writes: member versions in status, the leader last, every acknowledged write kept, equal hashkv, the pre-upgrade snapshot taken`, async () => {
    await createCluster(h, ns, name, {
      replicas: 3,
      version: UPGRADE_FROM,
      tls: {
        peer: { secretName: 'peer-certs' },
        client: { secretName: 'server-certs', operatorSecretName: 'operator-cert' },
      },
      auth: { rootSecretRef: { name: 'root' } },
      backup: { destination: minioDestination(h, 's3', `upgrade-secure/${ns}`) },
    });
    const before = await waitConverged(h, ns, name, 3, 600_000);
    expect(before.status?.members?.map((m) => m.version)).toEqual([UPGRADE_FROM, UPGRADE_FROM, UPGRADE_FROM]);
    const ids = before.status?.members?.map((m) => [m.name, m.id]);
    const oldLeader = before.status?.members?.find((m) => m.leader)?.name ?? '';

    const writer = await startWriterRunning({
      namespace: ns,
      name,
      prefix: '/secure',
      credentials,
      auth: root,
    });
    await patchSpec(h, ns, name, { version: UPGRADE_TO });
    const roll = await watchRoll(h, ns, name, {
      type: 'Upgrade',
      members: 3,
      done: everyMemberOn(UPGRADE_TO),
      what: 'every member reports the new version and the upgrade finished',
      timeoutMs: 900_000,
    });
    const report = await writer.stop();
    console.log(`secure upgrade order: ${roll.restartedOrder.join(', ')}`);

    expect([...roll.operationTypes]).toEqual(['Upgrade']);
    expect(roll.cluster.status?.lastOperation).toMatchObject({ type: 'Upgrade', result: 'Succeeded' });
    expect(roll.cluster.status?.members?.map((m) => [m.name, m.id])).toEqual(ids);
    expect(roll.cluster.status?.members?.map((m) => m.version)).toEqual([UPGRADE_TO, UPGRADE_TO, UPGRADE_TO]);
    // status.members[].version moved while the operation ran: a member was seen on the new version before the end.
    expect([...roll.versionsDuring].some((v) => v.includes(`=${UPGRADE_TO}`))).toBe(true);
    expect(roll.restartedOrder).toEqual([...members.filter((m) => m !== oldLeader), oldLeader]);

    // Auth and client TLS are still on after the upgrade: a client with the CA's certificate but without
    // root's password is refused (etcd takes the certificate's CN, app, as a user it does not know).
    const anonymous = new Etcd3({ hosts: [clientEndpoint(ns, name)], credentials, dialTimeout: 5000 });
    try {
      await expect(anonymous.put('/secure-anonymous').value('x')).rejects.toThrow(
        /user name|permission denied|invalid auth/i,
      );
    } finally {
      anonymous.close();
    }

    // The pre-upgrade snapshot was taken from the secured cluster and is named in the operation's message.
    const snaps = (await listSnapshots(h, ns)).filter((x) =>
      x.metadata?.name?.startsWith(`${name}-pre-upgrade-`),
    );
    expect(snaps).toHaveLength(1);
    const snap = snaps[0] as EtcdSnapshot;
    expect(snap.status?.phase).toBe('Succeeded');
    expect(roll.cluster.status?.lastOperation?.message).toContain(snap.status?.artifact?.uri ?? '(no uri)');

    // Read back from each member and hashKV, as root over TLS with the client certificate.
    await expectAvailability(h, report, {
      what: `upgrade ${UPGRADE_FROM} -> ${UPGRADE_TO} with TLS and auth`,
      boundMs: PLANNED_GAP_BOUND_MS,
      members,
    });
  });

  test(`${UPGRADE_TO} -> ${UPGRADE_FROM} back with TLS and auth under authenticated writes: etcd's downgrade enabled (its /version read over https), the leader last, every acknowledged write kept, equal hashkv`, async () => {
    const before = await getCluster(h, ns, name);
    expect(before.status?.members?.map((m) => m.version)).toEqual([UPGRADE_TO, UPGRADE_TO, UPGRADE_TO]);
    const oldLeader = before.status?.members?.find((m) => m.leader)?.name ?? '';

    const writer = await startWriterRunning({
      namespace: ns,
      name,
      prefix: '/secure-down',
      credentials,
      auth: root,
    });
    await patchSpec(h, ns, name, { version: UPGRADE_FROM });
    const roll = await watchRoll(h, ns, name, {
      type: 'Downgrade',
      members: 3,
      done: everyMemberOn(UPGRADE_FROM),
      what: 'every member reports 3.5 and the Downgrade finished',
      timeoutMs: 900_000,
    });
    const report = await writer.stop();
    console.log(`secure downgrade order: ${roll.restartedOrder.join(', ')}`);

    expect([...roll.operationTypes]).toEqual(['Downgrade']);
    expect(roll.cluster.status?.lastOperation).toMatchObject({ type: 'Downgrade', result: 'Succeeded' });
    expect(roll.restartedOrder).toEqual([...members.filter((m) => m !== oldLeader), oldLeader]);
    const events = (await h.core.listNamespacedEvent({ namespace: ns })).items;
    expect(events.some((e) => e.reason === 'DowngradeEnabled' && e.message?.includes('3.5.0'))).toBe(true);
    await expectAvailability(h, report, {
      what: `downgrade ${UPGRADE_TO} -> ${UPGRADE_FROM} with TLS and auth`,
      boundMs: PLANNED_GAP_BOUND_MS,
      members,
    });
  });
});
