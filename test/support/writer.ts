// The one writer of the end-to-end tests: a put of a new key every 50 ms through the cluster's client Service, each with a 1 s budget and no retry (one left unanswered for 400 ms no longer holds the next back), so a failed request is a failed write with its time; what it proves is checked by availability.ts.
import { randomBytes } from 'node:crypto';
import { noop } from 'cockatiel';
import { Etcd3 } from 'etcd3';
import type { IOptions } from 'etcd3';
import type { TokenSource } from '../../activities/auth-tokens';
import { attachTokenSource } from '../../activities/auth-tokens';
import { AUTH_NOT_ENABLED } from '../../agent/etcd-source';
import { clusterClientEndpoint } from '../../crds/names';
import type { ClientCredentials } from './cluster-harness';
import type { Stall, WriteFigures, WriteRecord } from './write-history';
import { writeFigures } from './write-history';

export const WRITE_INTERVAL_MS = 50;
export const WRITE_TIMEOUT_MS = 1000;
/** How long a write may go unanswered before the next one is sent on a new connection (see startWriter). */
export const HEDGE_AFTER_MS = 400;
const MAX_IN_FLIGHT = 2;
/** The stall monitor's tick, and how late a tick must be to count as the writer's own stall. */
const STALL_TICK_MS = 20;
const STALL_MIN_MS = 50;

export type EtcdAuth = NonNullable<IOptions['auth']>;

/** How to reach a cluster with client TLS and/or auth. A function is asked before each write: a new answer (a rotated certificate, a new password) reconnects with it, as an application that reloads its configuration does. */
export interface ClusterAccess {
  credentials?: ClientCredentials | (() => ClientCredentials | undefined);
  auth?: EtcdAuth | (() => EtcdAuth | undefined);
}

export interface WriterInput extends ClusterAccess {
  namespace: string;
  name: string;
  /** Keys are `<prefix>/<seq>`; one prefix per writer. */
  prefix: string;
  /**
   * Where to write (default: the cluster's client Service, as an application in the cluster would). With several,
   * the writer keeps to one and moves to the next after a failed write, as etcd's own client (clientv3) fails over,
   * so an outage of one member costs one failed write rather than one per unlucky random pick.
   */
  endpoints?: string[];
  /** Told each failed write's error, as an application reacting to it (asking for credentials, say) would be. */
  onFailure?: (error: string) => void;
}

export interface WriterReport {
  namespace: string;
  name: string;
  prefix: string;
  records: WriteRecord[];
  startedAt: number;
  stoppedAt: number;
  figures: WriteFigures;
  /** When the writer's own process could not run (see Stall): excluded from the gaps, and printed. */
  stalls: Stall[];
  /** The access the writer used last, for reading its keys back. */
  access: { credentials?: ClientCredentials; auth?: EtcdAuth };
}

export interface Writer {
  /** Acknowledged writes so far (to wait for the first one before changing the cluster). */
  acknowledged(): number;
  stop(): Promise<WriterReport>;
}

const current = <T>(v: T | (() => T | undefined) | undefined): T | undefined =>
  typeof v === 'function' ? (v as () => T | undefined)() : v;

/**
 * A client with etcd3's own fault handling off: its default retries a recoverable error up to three times and
 * opens a circuit breaker for 5 s after three failures, which would hide failures and invent gaps. Its own
 * subchannel pool: grpc-js otherwise shares one connection per target among all clients in the process, so a
 * client opened after a failure would reuse the very connection to the member that just failed to answer (a
 * frozen member keeps its TCP connection open), and reconnecting would change nothing.
 */
export function strictClient(
  hosts: string[],
  access: { credentials?: ClientCredentials; auth?: EtcdAuth },
  timeoutMs = WRITE_TIMEOUT_MS,
  /** The gRPC deadline of each call, if not `timeoutMs` (the writer keeps its own budget, see within()). */
  deadlineMs = timeoutMs,
): Etcd3 {
  return new Etcd3({
    // The client library takes TLS from the credentials, whatever the URL's scheme.
    hosts,
    ...(access.credentials ? { credentials: access.credentials } : {}),
    ...(access.auth ? { auth: access.auth } : {}),
    dialTimeout: timeoutMs,
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + deadlineMs }),
    faultHandling: { host: () => noop, global: noop },
    grpcOptions: { 'grpc.use_local_subchannel_pool': 1 },
  });
}

/**
 * Records when this process's event loop could not run: a tick that comes more than STALL_MIN_MS late means
 * nothing (no request sent, no answer read) happened in between.
 */
function startStallMonitor(): { stalls: Stall[]; stop(): void } {
  const stalls: Stall[] = [];
  let last = Date.now();
  const timer = setInterval(() => {
    const now = Date.now();
    if (now - last - STALL_TICK_MS > STALL_MIN_MS) stalls.push({ from: last + STALL_TICK_MS, to: now });
    last = now;
  }, STALL_TICK_MS);
  return { stalls, stop: () => clearInterval(timer) };
}

/**
 * Fails after `ms` of this process running, whatever the client does (a token exchange has its own deadline, the
 * write its own). A timer that fires late (the process stood still) would otherwise fail a write whose answer is
 * already waiting to be read: timers run before pending I/O, so the time it was late is given once more.
 */
export function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    const due = Date.now() + ms;
    const fail = () => reject(new Error(`no answer within ${ms} ms`));
    timer = setTimeout(() => {
      const late = Date.now() - due;
      if (late > STALL_MIN_MS) timer = setTimeout(fail, Math.min(late, ms));
      else fail();
    }, ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** A token for `auth` from the member at `endpoint`; undefined when etcd's auth is off. */
async function authenticate(
  endpoint: string,
  credentials: ClientCredentials | undefined,
  auth: EtcdAuth,
): Promise<string | undefined> {
  const c = strictClient([endpoint], credentials ? { credentials } : {});
  try {
    return (await c.auth.authenticate({ name: auth.username, password: auth.password })).token;
  } catch (err) {
    if (AUTH_NOT_ENABLED.test(String(err))) return undefined;
    throw err;
  } finally {
    c.close();
  }
}

/** etcd's answers after which the writer's token is asked for again: rejected, or auth turned on since. */
const TOKEN_STALE = /invalid auth token|user name is empty/i;

/**
 * Starts writing at once. The next write starts 50 ms after the previous one started (at once if that one took
 * longer), never in a burst to catch up. A write still unanswered after HEDGE_AFTER_MS no longer holds the next one
 * back: the next goes on a new client (a new connection through the Service, which may pick another member), so
 * at most MAX_IN_FLIGHT writes are in flight; the unanswered one keeps its whole budget and is recorded as it ends.
 * etcd drops a proposal a follower forwards to a leader in the middle of a leadership transfer, and that request
 * waits for its deadline (etcd-io/etcd#8975): one at a time, a single such drop during a planned MoveLeader made a
 * gap as long as the write budget although the cluster took writes throughout. After a failure the client is thrown
 * away and the next write connects anew, as an application's reconnect would; the failed write is not tried again.
 */
export function startWriter(input: WriterInput): Writer {
  const endpoints = input.endpoints ?? [
    clusterClientEndpoint({ namespace: input.namespace, name: input.name }),
  ];
  const records: WriteRecord[] = [];
  const startedAt = Date.now();
  let stopped = false;
  let client: Etcd3 | undefined;
  let using: { credentials?: ClientCredentials; auth?: EtcdAuth } = {};
  const run = randomBytes(3).toString('hex');
  const monitor = startStallMonitor();
  /** Which endpoint the writer keeps to (moved on by each failure and each write left unanswered). */
  let pinned = 0;
  const inFlight = new Set<Promise<void>>();
  /**
   * With auth, one token for every connection the writer opens, as etcd's own client (clientv3) keeps its token
   * across reconnects: the first write that needs it authenticates (inside its own budget), and the token is asked
   * for again only when etcd rejects it, auth is turned on, or the credentials change. A token per connection made
   * each write after a failure pay an Authenticate (a bcrypt check and a raft entry) inside its 1 s budget: on a
   * loaded machine ten of them failed in a row after one slow write, a 5 s gap that was the writer's own.
   */
  let token: { for: EtcdAuth; value: Promise<string | undefined> } | undefined;
  const tokenFor = (
    auth: EtcdAuth,
    credentials: ClientCredentials | undefined,
    endpoint: string,
  ): TokenSource => ({
    token: () => {
      if (!token || token.for !== auth) {
        const value = authenticate(endpoint, credentials, auth);
        const held = { for: auth, value };
        token = held;
        // A failed Authenticate fails the write that asked; the next write asks again.
        value.catch(() => {
          if (token === held) token = undefined;
        });
      }
      return token.value;
    },
    rejected: () => {
      if (token?.for === auth) token = undefined;
    },
  });
  /** The current client is given up: later writes connect anew, it is closed once its own writes have ended. */
  const giveUp = (c: Etcd3, pending: Promise<void>) => {
    if (client !== c) return;
    client = undefined;
    pinned++;
    void pending.finally(() => c.close());
  };

  const write = (c: Etcd3, seq: number, started: number): Promise<void> => {
    const key = `${input.prefix}/${String(seq).padStart(7, '0')}`;
    const value = `${run}-${seq}`;
    return within(WRITE_TIMEOUT_MS, c.put(key).value(value).exec()).then(
      (res) => {
        records.push({
          key,
          value,
          startedAt: started,
          endedAt: Date.now(),
          ok: true,
          revision: Number(res.header.revision),
        });
      },
      (err: unknown) => {
        records.push({ key, value, startedAt: started, endedAt: Date.now(), ok: false, error: String(err) });
        if (TOKEN_STALE.test(String(err))) token = undefined;
        input.onFailure?.(String(err));
        giveUp(c, Promise.resolve());
      },
    );
  };

  const loop = (async () => {
    for (let seq = 0; !stopped; seq++) {
      const started = Date.now();
      const wanted = { credentials: current(input.credentials), auth: current(input.auth) };
      if (client && (wanted.credentials !== using.credentials || wanted.auth !== using.auth)) {
        giveUp(
          client,
          Promise.all([...inFlight]).then(() => undefined),
        );
      }
      using = wanted;
      // The gRPC deadline is a backstop: the write's budget is within()'s, which does not count the writer's stalls.
      if (!client) {
        const endpoint = endpoints[pinned % endpoints.length] ?? '';
        const { auth, credentials } = using;
        client = strictClient(
          [endpoint],
          credentials ? { credentials } : {},
          WRITE_TIMEOUT_MS,
          3 * WRITE_TIMEOUT_MS,
        );
        if (auth) attachTokenSource(client, tokenFor(auth, credentials, endpoint));
      }
      const c = client;
      const done = write(c, seq, started);
      inFlight.add(done);
      void done.finally(() => inFlight.delete(done));
      let hedge: NodeJS.Timeout | undefined;
      const answered = await Promise.race([
        done.then(() => true),
        new Promise<false>((r) => (hedge = setTimeout(() => r(false), HEDGE_AFTER_MS))),
      ]).finally(() => clearTimeout(hedge));
      if (!answered) giveUp(c, done);
      while (inFlight.size >= MAX_IN_FLIGHT) await Promise.race(inFlight);
      const wait = started + WRITE_INTERVAL_MS - Date.now();
      if (wait > 0 && !stopped) await new Promise((r) => setTimeout(r, wait));
    }
    await Promise.all([...inFlight]);
  })();

  return {
    acknowledged: () => records.filter((r) => r.ok).length,
    async stop() {
      stopped = true;
      const stoppedAt = Date.now();
      await loop;
      monitor.stop();
      client?.close();
      const stalls = [...monitor.stalls];
      return {
        namespace: input.namespace,
        name: input.name,
        prefix: input.prefix,
        records,
        startedAt,
        stoppedAt,
        figures: writeFigures(records, startedAt, stoppedAt, stalls),
        stalls,
        access: using,
      };
    },
  };
}

/**
 * startWriter, returning once the writer has written for `steadyMs` with at least one acknowledgement (within
 * 30 s), so the change a test makes next starts under a running load, and the figures include some steady state.
 */
export async function startWriterRunning(input: WriterInput, steadyMs = 1000): Promise<Writer> {
  const writer = startWriter(input);
  const deadline = Date.now() + 30_000;
  while (writer.acknowledged() === 0) {
    if (Date.now() > deadline) {
      const report = await writer.stop();
      throw new Error(
        `the writer got no acknowledgement in 30 s: ${report.records.at(-1)?.error ?? 'no write finished'}`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  await new Promise((r) => setTimeout(r, steadyMs));
  return writer;
}
