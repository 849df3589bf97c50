// The strict writer against a real single-member etcd (3.6.16 from the tool cache): it counts a write as failed on
// its first error, never retries it, records the outage as a gap, lets no single unanswered write hold the rest
// back, and what it acknowledged is what etcd holds.
import { createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import type { LocalEtcd } from './local-etcd';
import { startLocalEtcd } from './local-etcd';
import type { StoredKey } from './write-history';
import { checkMemberCopy } from './write-history';
import { HEDGE_AFTER_MS, startWriter, strictClient, within, WRITE_TIMEOUT_MS } from './writer';

jest.setTimeout(60_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let etcd: LocalEtcd;
let url: string;

beforeAll(async () => {
  etcd = await startLocalEtcd('writer-test-', 30_000);
  url = etcd.url;
});

afterAll(() => etcd?.stop());

async function stored(prefix: string): Promise<Map<string, StoredKey>> {
  const c = strictClient([url], {}, 5000);
  try {
    const res = await c.kv.range({ key: Buffer.from(`${prefix}/`), range_end: Buffer.from(`${prefix}0`) });
    return new Map(
      res.kvs.map((kv) => [
        kv.key.toString(),
        { value: kv.value.toString(), modRevision: Number(kv.mod_revision) },
      ]),
    );
  } finally {
    c.close();
  }
}

test('a healthy member: a write every 50 ms, all acknowledged, each with its revision, all of them stored', async () => {
  const writer = startWriter({ namespace: 'x', name: 'x', prefix: '/healthy', endpoints: [url] });
  await sleep(1500);
  const report = await writer.stop();
  // One request at a time, 50 ms apart: about 30 in 1.5 s on an idle machine, at least 10 on a busy one.
  expect(report.figures.acknowledged).toBeGreaterThan(10);
  expect(report.figures.acknowledged).toBeLessThanOrEqual(31);
  expect(report.figures.failed).toBe(0);
  expect(new Set(report.records.map((r) => r.key)).size).toBe(report.records.length);
  expect(report.figures.longestGap.ms).toBeLessThan(1000);
  expect(checkMemberCopy(report.records, await stored('/healthy'))).toEqual({
    lost: [],
    changed: [],
    unexpected: [],
    recovered: 0,
  });
});

test('a frozen member: each write fails once after 1 s and is not retried, the outage is the gap, writes resume after', async () => {
  const writer = startWriter({ namespace: 'x', name: 'x', prefix: '/frozen', endpoints: [url] });
  await sleep(500);
  etcd.signal('SIGSTOP');
  const frozenAt = Date.now();
  await sleep(2500);
  etcd.signal('SIGCONT');
  const thawedAt = Date.now();
  await sleep(1500);
  const report = await writer.stop();

  const failed = report.records.filter((r) => !r.ok);
  expect(failed.length).toBeGreaterThanOrEqual(2);
  // No hidden retry: a failed write took its one budget (never much more: no second attempt inside it).
  for (const f of failed) expect(f.endedAt - f.startedAt).toBeLessThan(WRITE_TIMEOUT_MS + 500);
  expect(new Set(report.records.map((r) => r.key)).size).toBe(report.records.length);
  // The gap covers the freeze (on the clock: a stall of this process meanwhile is not counted, but the member was
  // frozen all along), and writes came back after the thaw.
  expect(report.figures.longestGap.wallMs).toBeGreaterThanOrEqual(thawedAt - frozenAt - 100);
  expect(report.figures.longestGap.ms).toBeLessThan(thawedAt - frozenAt + 2000);
  expect(report.records.filter((r) => r.ok && r.startedAt > thawedAt).length).toBeGreaterThan(5);
  // Every acknowledged write is stored; failed ones may be (a timeout after commit), never invented ones.
  const check = checkMemberCopy(report.records, await stored('/frozen'));
  expect({ lost: check.lost, changed: check.changed, unexpected: check.unexpected }).toEqual({
    lost: [],
    changed: [],
    unexpected: [],
  });
});

test("the writer's own process standing still is a stall, not the cluster's gap, and fails no write", async () => {
  const writer = startWriter({ namespace: 'x', name: 'x', prefix: '/stalled', endpoints: [url] });
  await sleep(500);
  // Block this process's event loop for 1.5 s, as a full garbage collection of a big test heap would: the member
  // answers in the meantime, but nothing can read its answer, and a timer due meanwhile fires late.
  const blockedAt = Date.now();
  while (Date.now() - blockedAt < 1500) {
    // busy
  }
  await sleep(500);
  const report = await writer.stop();

  expect(report.figures.failed).toBe(0);
  expect(report.stalls.some((s) => s.to - s.from >= 1400 && s.from <= blockedAt + 100)).toBe(true);
  expect(report.figures.longestStallMs).toBeGreaterThanOrEqual(1400);
  // On the clock two acknowledgements are 1.4 s or more apart; counted, no gap comes near the 1 s bound.
  const acks = report.records.filter((r) => r.ok).map((r) => r.endedAt);
  expect(Math.max(...acks.slice(1).map((t, i) => t - (acks[i] ?? t)))).toBeGreaterThanOrEqual(1400);
  expect(report.figures.longestGap.ms).toBeLessThan(1000);
});

test('a write whose answer waited out a stall of the process is acknowledged, not timed out', async () => {
  const c = strictClient([url], {}, WRITE_TIMEOUT_MS, 3 * WRITE_TIMEOUT_MS);
  try {
    const put = within(WRITE_TIMEOUT_MS, c.put('/within/k').value('v').exec());
    const blockedAt = Date.now();
    while (Date.now() - blockedAt < 1500) {
      // busy: the budget's timer is due meanwhile and fires late, before the answer can be read
    }
    await expect(put).resolves.toHaveProperty('header');
    // An answer that never comes still fails the write: the budget is not lifted, only not spent while stalled. (A
    // frozen etcd was the never-answering side here; in a CI run beside a stack coming up, that put was answered, which
    // this file cannot explain from its log: the property under test is within's, so it is asked of within alone.)
    await expect(within(WRITE_TIMEOUT_MS, new Promise<never>(() => undefined))).rejects.toThrow(
      'no answer within 1000 ms',
    );
  } finally {
    c.close();
  }
});

test('given several endpoints it keeps to one and moves to the next after a failure, as clientv3 fails over', async () => {
  // The first endpoint answers nothing (a port nobody listens on): one failed write, then every write on the other.
  const dead = 'http://127.0.0.1:9';
  const writer = startWriter({ namespace: 'x', name: 'x', prefix: '/failover', endpoints: [dead, url] });
  await sleep(1500);
  const report = await writer.stop();
  expect(report.records[0]?.ok).toBe(false);
  expect(report.figures.failed).toBe(1);
  expect(report.figures.acknowledged).toBeGreaterThan(5);
});

test('a write left unanswered does not hold the next back: after 400 ms the next goes on a new connection, the unanswered one fails at its budget', async () => {
  // A listener that accepts and never answers, as a follower whose forwarded proposal the leader dropped (or an etcd
  // still starting) does: one hung request, while the cluster behind the other endpoint takes writes.
  const sockets = new Set<Socket>();
  const silent = createServer((sock) => {
    sockets.add(sock);
    sock.on('error', () => undefined);
  });
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
  const port = (silent.address() as AddressInfo).port;
  try {
    const writer = startWriter({
      namespace: 'x',
      name: 'x',
      prefix: '/hedged',
      endpoints: [`http://127.0.0.1:${port}`, url],
    });
    await sleep(2000);
    const report = await writer.stop();
    const first = report.records.find((r) => r.key.endsWith('/0000000'));
    expect(first?.ok).toBe(false);
    expect((first?.endedAt ?? 0) - (first?.startedAt ?? 0)).toBeGreaterThanOrEqual(WRITE_TIMEOUT_MS - 50);
    expect(report.figures.failed).toBe(1);
    // The second write started HEDGE_AFTER_MS after the first, on the other endpoint, and was acknowledged.
    const second = report.records.find((r) => r.key.endsWith('/0000001'));
    expect(second?.ok).toBe(true);
    expect((second?.startedAt ?? 0) - (first?.startedAt ?? 0)).toBeGreaterThanOrEqual(HEDGE_AFTER_MS - 20);
    expect(report.figures.longestGap.ms).toBeLessThan(WRITE_TIMEOUT_MS);
    expect(report.figures.acknowledged).toBeGreaterThan(10);
  } finally {
    for (const s of sockets) s.destroy();
    await new Promise((r) => silent.close(r));
  }
});

test('a key deleted behind the writer is reported lost (the check can fail)', async () => {
  const writer = startWriter({ namespace: 'x', name: 'x', prefix: '/deleted', endpoints: [url] });
  await sleep(600);
  const report = await writer.stop();
  const victim = report.records.find((r) => r.ok)?.key ?? '';
  const c = strictClient([url], {}, 5000);
  try {
    await c.delete().key(victim);
  } finally {
    c.close();
  }
  expect(checkMemberCopy(report.records, await stored('/deleted')).lost).toEqual([victim]);
});

/** How many Authenticate calls the member has started, from its gRPC metrics. */
async function authenticates(member: LocalEtcd): Promise<number> {
  const text = await (await fetch(`${member.url}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith('grpc_server_started_total{') && l.includes('grpc_method="Authenticate"'));
  return Number(line?.split(' ').pop() ?? 0);
}

test('with auth, one token for every connection: writes after a failed one reconnect without authenticating again', async () => {
  const secured = await startLocalEtcd('writer-auth-test-', 30_000);
  try {
    const root = { username: 'root', password: 'writer-test' };
    const admin = strictClient([secured.url], {}, 5000);
    try {
      await admin.user('root').create(root.password);
      await admin.user('root').addRole('root');
      await admin.auth.authEnable({});
    } finally {
      admin.close();
    }
    const before = await authenticates(secured);
    const writer = startWriter({
      namespace: 'x',
      name: 'x',
      prefix: '/auth',
      endpoints: [secured.url],
      auth: root,
    });
    await sleep(500);
    secured.signal('SIGSTOP');
    await sleep(1500);
    secured.signal('SIGCONT');
    const thawedAt = Date.now();
    await sleep(1500);
    const report = await writer.stop();

    // Writes failed during the freeze, each on a connection given up for a new one, and came back after it.
    expect(report.records.filter((r) => !r.ok).length).toBeGreaterThanOrEqual(1);
    expect(report.records.filter((r) => r.ok && r.startedAt > thawedAt).length).toBeGreaterThan(5);
    // One Authenticate in all: the new connections carried the token the first one got.
    expect((await authenticates(secured)) - before).toBe(1);
  } finally {
    secured.stop();
  }
});
