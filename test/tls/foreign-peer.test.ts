// A peer with a wrong certificate cannot join, with a real etcd process: a learner is added with the operator's client certificate, an etcd 3.6 process that presents a peer certificate of a foreign CA is started for it, and it is refused while the cluster keeps its 3 voters and its writes.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClientCredentials, Harness } from '../support/cluster-harness';
import {
  clientEndpoint,
  connect,
  createCluster,
  etcdClient,
  etcdMemberList,
  eventually,
  freshNamespace,
  waitConverged,
} from '../support/cluster-harness';
import { expectAvailability, FAULT_GAP_BOUND_MS } from '../support/availability';
import { startWriterRunning } from '../support/writer';
import { makeCA, memberSans, tlsSecret } from './tls-certs';
import type { Pem, TestCA } from './tls-certs';

jest.setTimeout(1_200_000);

const name = 'fp';
let h: Harness;
let ns: string;
let ca: TestCA;
let foreign: TestCA;
let operator: Pem;
let dir: string;
let proc: ChildProcess | undefined;

const credentialsOf = (leaf: Pem, trust: Buffer): ClientCredentials => ({
  rootCertificate: trust,
  certChain: leaf.cert,
  privateKey: leaf.key,
});

/** A port the kernel hands out now on the stack's own loopback address (a random one may be taken). */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

beforeAll(async () => {
  h = connect();
  ns = await freshNamespace(h, 'foreign-peer');
  ca = makeCA('etcd-ca');
  foreign = makeCA('foreign-ca');
  operator = ca.issue('etcd-conductor');
  for (const body of [
    tlsSecret('peer-certs', ca.issue(`${name}-peer`, memberSans(ns, name)), ca.cert),
    tlsSecret('server-certs', ca.issue(`${name}-client`, memberSans(ns, name)), ca.cert),
    tlsSecret('operator-cert', operator, ca.cert),
  ])
    await h.core.createNamespacedSecret({ namespace: ns, body });
  await createCluster(h, ns, name, {
    replicas: 3,
    tls: {
      peer: { secretName: 'peer-certs' },
      client: { secretName: 'server-certs', operatorSecretName: 'operator-cert' },
    },
  });
  await waitConverged(h, ns, name, 3, 600_000);
  dir = mkdtempSync(join(tmpdir(), 'foreign-peer-'));
});

// A failed test must not leave the write load running (Jest would not exit).
let stopLoad: (() => Promise<unknown>) | undefined;

afterAll(async () => {
  await stopLoad?.();
  proc?.kill('SIGKILL');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('a learner presenting a peer certificate of a foreign CA is refused; the cluster keeps 3 voters and every write', async () => {
  const asOperator = credentialsOf(operator, ca.cert);
  const app = credentialsOf(ca.issue('app'), ca.cert);
  const writer = await startWriterRunning({ namespace: ns, name, prefix: '/foreign-peer', credentials: app });
  stopLoad = () => writer.stop();

  // The intruder: a real etcd on a free port of the machine's address as the members' Pods reach it, with a peer
  // certificate for that address from a foreign CA. It trusts the cluster's CA, so the refusal is about its
  // certificate alone.
  const host = h.stack.podsReachHostAt;
  const [peerPort, clientPort] = [await freePort(host), await freePort(host)];
  const peerURL = `https://${host}:${peerPort}`;
  const leaf = foreign.issue('intruder', [`IP:${host}`, 'IP:127.0.0.1']);
  writeFileSync(join(dir, 'peer.crt'), leaf.cert);
  writeFileSync(join(dir, 'peer.key'), leaf.key);
  writeFileSync(join(dir, 'ca.crt'), ca.cert);

  const admin = etcdClient([clientEndpoint(ns, name)], asOperator);
  let learnerId: string;
  try {
    // etcd refuses a new member until every voter has been connected for 5 s ("unhealthy cluster").
    const added = await eventually(
      'MemberAddAsLearner accepted',
      () => admin.cluster.memberAdd({ peerURLs: [peerURL], isLearner: true }),
      120_000,
      1000,
    );
    learnerId = String(added.member.ID);
    const peers = (await etcdMemberList(ns, name, asOperator))
      .filter((m) => m.id !== learnerId)
      .map((m) => `${m.name}=${m.peerURLs[0] ?? ''}`);
    expect(peers).toHaveLength(3);

    const etcd = join(h.stack.tools.etcdBinDirs['3.6.16'] ?? '', 'etcd');
    let output = '';
    let exit: string | undefined;
    proc = spawn(
      etcd,
      [
        '--name=intruder',
        `--data-dir=${join(dir, 'data')}`,
        `--listen-peer-urls=${peerURL}`,
        `--initial-advertise-peer-urls=${peerURL}`,
        `--listen-client-urls=http://${host}:${clientPort}`,
        `--advertise-client-urls=http://${host}:${clientPort}`,
        `--initial-cluster=${[...peers, `intruder=${peerURL}`].join(',')}`,
        '--initial-cluster-state=existing',
        `--peer-cert-file=${join(dir, 'peer.crt')}`,
        `--peer-key-file=${join(dir, 'peer.key')}`,
        `--peer-trusted-ca-file=${join(dir, 'ca.crt')}`,
        '--peer-client-cert-auth',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    proc.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    proc.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    proc.on('exit', (code, signal) => (exit = String(code ?? signal)));

    // etcd asks the listed peers for the cluster before it joins; every one refuses its certificate at the
    // TLS handshake, so it gives up and exits without ever having joined.
    await eventually('the intruder giving up', async () => exit, 300_000, 500);
    console.log(`intruder exited ${exit ?? ''}; last lines:\n${output.split('\n').slice(-6).join('\n')}`);
    expect(exit).not.toBe('0');
    // The members refused its certificate at the handshake (not a name or network failure).
    expect(output).toMatch(/remote error: tls: (unknown certificate authority|bad certificate)/);
    expect(output).toMatch(/could not retrieve cluster information/);

    // It never started: etcd still lists it without a name (a member gets one once it has joined) or the
    // operator has already removed it as a member nothing runs; either way it is no voter and cannot be promoted.
    const members = await etcdMemberList(ns, name, asOperator);
    const intruder = members.find((m) => m.id === learnerId);
    console.log(
      intruder
        ? `intruder still listed: ${JSON.stringify(intruder)}; removed by the test`
        : 'intruder already removed by the operator (a member nothing runs)',
    );
    if (intruder) {
      expect(intruder).toMatchObject({ name: '', isLearner: true });
      await expect(admin.cluster.memberPromote({ ID: learnerId })).rejects.toThrow(
        /can only promote a learner member which is in sync with leader/,
      );
      await admin.cluster.memberRemove({ ID: learnerId }).catch((err: unknown) => {
        // The operator may remove the stray learner at the same moment.
        if (!/member not found/i.test(String(err))) throw err;
      });
    }
  } finally {
    admin.close();
  }

  // The cluster: 3 voters, no learner left, and the writes went on throughout.
  const after = await eventually('3 voters and no learner', async () => {
    const ms = await etcdMemberList(ns, name, asOperator);
    return ms.length === 3 && ms.every((m) => !m.isLearner) ? ms : undefined;
  });
  expect(after.map((m) => m.name).sort()).toEqual([`${name}-0`, `${name}-1`, `${name}-2`]);
  await waitConverged(h, ns, name, 3, 300_000);
  const report = await writer.stop();
  stopLoad = undefined;
  // An injected fault (a stray learner that never starts): every acknowledged write kept on every member.
  await expectAvailability(h, report, {
    what: 'a foreign-CA learner refused',
    boundMs: FAULT_GAP_BOUND_MS,
    members: [`${name}-0`, `${name}-1`, `${name}-2`],
  });
});
