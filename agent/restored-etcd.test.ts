// The throwaway etcd that verification and point-in-time restore start on a restored snapshot, against a real etcd
// 3.6: a port taken between freePort() and etcd's bind is a race on the machine, tried again on fresh ports, and
// never reported as a corrupt snapshot.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { AgentError } from './agent-error';
import { takeSnapshot } from './snapshot';
import { freePort, PORT_ATTEMPTS, restoreSingleMember, startRestoredEtcd } from './verify';
import { AgentFailureReasons } from '../contracts/agent-result';
import { binaryPath, cacheRoot, ETCD_TOOLS } from '../localcluster/tool-cache';
import { startLocalEtcd, type LocalEtcd } from '../test/support/local-etcd';
import { strictClient } from '../test/support/writer';

jest.setTimeout(120_000);

const env = {
  PATH: `${dirname(binaryPath(cacheRoot(), ETCD_TOOLS['3.6.16'], 'etcd'))}:${process.env.PATH ?? ''}`,
};
const signal = new AbortController().signal;
let source: LocalEtcd;
let work: string;
let snapshotFile: string;
let held: Server;
let heldPort: number;
const accepted = new Set<Socket>();

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'restored-etcd-test-'));
  source = await startLocalEtcd('restored-etcd-source-', 30_000);
  const c = strictClient([source.url], {}, 5000);
  try {
    for (let i = 0; i < 5; i++) await c.put(`/k/${i}`).value(String(i));
  } finally {
    c.close();
  }
  snapshotFile = join(work, 'snap.db');
  await takeSnapshot(
    {
      command: 'snapshot',
      endpoint: source.url,
      destination: { kind: 'file', path: snapshotFile },
      uri: `file://${snapshotFile}`,
      resultFile: join(work, 'unused-result'),
    },
    {},
    signal,
  );
  // A port someone else holds, as another process on the machine would between freePort() and etcd's bind.
  // It accepts and never answers; the connections a client made to it are closed with it.
  held = createServer((socket) => accepted.add(socket));
  await new Promise<void>((r) => held.listen(0, '127.0.0.1', r));
  heldPort = (held.address() as AddressInfo).port;
});

afterAll(async () => {
  source?.stop();
  for (const socket of accepted) socket.destroy();
  await new Promise((r) => held?.close(r));
  rmSync(work, { recursive: true, force: true });
});

async function restore(dir: string): Promise<string> {
  const data = join(work, dir);
  await restoreSingleMember(snapshotFile, data, env, signal, 60_000);
  return data;
}

test('a client port taken at the first start: started again on fresh ports, and the restored data reads back', async () => {
  const data = await restore('taken-once');
  let asked = 0;
  const ports = () => (asked++ === 0 ? Promise.resolve(heldPort) : freePort());
  const { etcd, first } = await startRestoredEtcd(data, env, signal, ports);
  try {
    // Two ports per start: the second start is the one that answered.
    expect(asked).toBe(4);
    expect(first.keys).toBe(5);
    expect(etcd.clientURL).not.toContain(`:${heldPort}`);
  } finally {
    await etcd.stop();
  }
});

test('ports taken at every start: given up after PORT_ATTEMPTS starts, as unavailable, never as a corrupt snapshot', async () => {
  const data = await restore('taken-always');
  let starts = 0;
  const ports = () => {
    starts++;
    return Promise.resolve(heldPort);
  };
  const err: unknown = await startRestoredEtcd(data, env, signal, ports).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AgentError);
  expect((err as AgentError).reason).toBe(AgentFailureReasons.DestinationUnavailable);
  expect((err as AgentError).message).toMatch(/could not bind its port/);
  expect(starts).toBe(2 * PORT_ATTEMPTS);
});
