// Talks to etcd's cluster and maintenance APIs; every call is bounded by a deadline and idempotent by lookup.
import { AlarmAction, AlarmType, Etcd3 } from 'etcd3';
import type { IOptions } from 'etcd3';
import { noop } from 'cockatiel';
import { clusterClientEndpoint } from '../crds/names';
import { attachToken, processTokens } from './auth-tokens';
import type { ConnectionResolver } from './etcd-connection';
import { clusterOfEndpoint } from './etcd-connection';
import type { DialTarget } from './member-addresses';

/** A member as etcd reports it. Member ids are uint64: always decimal strings, never numbers. */
export interface EtcdMember {
  id: string;
  /** Empty until the member has started once. */
  name: string;
  peerURLs: string[];
  clientURLs: string[];
  isLearner: boolean;
}

/** What one member says about itself through Maintenance.Status. */
export interface EtcdMemberStatus {
  endpoint: string;
  id: string;
  leaderId: string;
  version: string;
  raftIndex: string;
  raftAppliedIndex: string;
  /** The newest revision this member applied (its response header): answered without a quorum. */
  revision: string;
  dbSize: number;
  dbSizeInUse: number;
  isLearner: boolean;
  errors: string[];
}

export interface EtcdAdmin {
  listMembers(endpoints: string[]): Promise<EtcdMember[]>;
  /** The member list with the cluster id it came from (linearizable: it needs a quorum). */
  listMembersWithHeader(
    endpoints: string[],
    timeoutMs?: number,
    dial?: DialTarget,
  ): Promise<{ clusterId: string; members: EtcdMember[] }>;
  /**
   * MemberAddAsLearner with this peer URL, or the member that already has it (a retry finds its own work);
   * `not-ready` while etcd refuses membership changes because a voter has not been connected for its health
   * interval yet (a wait, not a failure).
   */
  addLearner(
    endpoints: string[],
    peerURL: string,
  ): Promise<{ member: EtcdMember; members: EtcdMember[] } | 'not-ready'>;
  /** Promotes a learner; resolves `not-caught-up` while etcd says the learner is not in sync yet. */
  promote(endpoints: string[], id: string): Promise<'promoted' | 'not-caught-up' | 'not-found'>;
  /** Removes a member; a member that is already gone counts as removed. */
  remove(endpoints: string[], id: string): Promise<'removed' | 'not-found'>;
  /**
   * Hands leadership from the member at `leaderEndpoint` to `targetId`, looking first: `already-leader` when
   * the target leads (a retry of a move that succeeded but timed out), `not-leader` when a third member leads
   * now (the caller plans again from the leader it observes; nothing was moved).
   */
  moveLeader(leaderEndpoint: string, targetId: string): Promise<'moved' | 'already-leader' | 'not-leader'>;
  /**
   * `timeoutMs` overrides the per-call deadline: observation wants a quick "unreachable", not a long wait. `dial`
   * (here and on listMembersWithHeader and alarms, with one endpoint): the member's Pod address to dial, the
   * endpoint's name kept for TLS and :authority (member-addresses.ts).
   */
  status(endpoint: string, timeoutMs?: number, dial?: DialTarget): Promise<EtcdMemberStatus>;
  /**
   * Maintenance.Status without the cluster's auth (TLS as usual): etcd 3.5 and 3.6 answer it unauthenticated, and
   * Authenticate itself needs a quorum, so this is how a member is asked while the quorum is lost. Optional: fakes
   * that do not test it leave it out (callers fall back to status).
   */
  statusWithoutAuth?(endpoint: string, timeoutMs?: number): Promise<EtcdMemberStatus>;
  /** Raised alarms (Maintenance.Alarm GET), alarm names upper case as etcdctl prints them (NOSPACE, CORRUPT). */
  alarms(endpoints: string[], timeoutMs?: number, dial?: DialTarget): Promise<EtcdAlarmRow[]>;
  /** Deactivates one member's NOSPACE alarm; one that is not raised counts as disarmed. */
  disarmNoSpace(endpoints: string[], memberId: string): Promise<void>;
  /**
   * Compacts the key space up to the current revision and waits until that is physically applied. Only
   * superseded revisions go; every key keeps its latest value. An already compacted revision counts as done.
   */
  compactToCurrent(endpoints: string[]): Promise<{ revision: string; alreadyCompacted: boolean }>;
  /** Maintenance.Defragment against exactly this member; it blocks that member until the rewrite ends. */
  defragment(endpoint: string, timeoutMs: number): Promise<void>;
  /** Maintenance.HashKV of exactly this member at `revision`: the hash of its key history up to it. */
  hashKV(
    endpoint: string,
    revision: number,
    timeoutMs?: number,
  ): Promise<{ hash: number; compactRevision: number }>;
}

interface HashKVCallable {
  exec(
    service: 'Maintenance',
    method: string,
    payload: object,
  ): Promise<{ hash: string | number; compact_revision: string | number }>;
}

export interface EtcdAlarmRow {
  memberId: string;
  alarm: string;
}

export interface EtcdAdminOptions {
  /** Per-call deadline; without one a call to a dead member hangs until the dial timeout. */
  callTimeoutMs?: number;
  credentials?: IOptions['credentials'];
  /** Per call: the TLS credentials and auth of the cluster the endpoints belong to (activities/etcd-connection.ts). */
  connectionFor?: ConnectionResolver;
}

// etcd returns these while a learner is still catching up; promotion must be retried, never forced.
const NOT_CAUGHT_UP =
  /can only promote a learner member which is in sync with leader|learner member not ready/i;
const MEMBER_NOT_FOUND = /member not found/i;
// Compact refuses a revision at or below the last compaction: a retry of our own compaction, so done.
const ALREADY_COMPACTED = /required revision has been compacted/i;
// etcd (--strict-reconfig-check, on by default) refuses MemberAdd until every voter has been connected for its
// 5 s health interval: right after a member joined or was promoted. The operation waits on a short timer
// instead of an exponential activity retry, which would overshoot the interval by seconds.
const NOT_READY_FOR_MEMBERS = /unhealthy cluster|not enough started members/i;

/** Whether etcd refused a membership change only until its voters have been connected for its health interval. */
export function refusedUntilHealthy(err: unknown): boolean {
  return NOT_READY_FOR_MEMBERS.test(err instanceof Error ? err.message : String(err));
}

// etcd answers Authenticate with this while auth is off: the credentials a cluster with spec.auth has before
// the operator enabled auth (or after someone disabled it) are then simply not needed.
const AUTH_NOT_ENABLED = /authentication is not enabled/i;
const LEARNER_REFUSES = /rpc not supported for learner/i;
const INVALID_TOKEN = /invalid auth token/i;
// A learner applies the Authenticate entry that made a token a moment after the voter that issued it.
const FRESH_TOKEN_RETRY_MS = 300;

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * Runs `fn` with a short-lived client for `hosts`, with the connection options of their cluster. With
 * credentials, the call carries a token of that cluster (activities/auth-tokens.ts), obtained once and
 * reused; while etcd says auth is not enabled, the call is made without one.
 */
export async function withEtcdClient<T>(
  options: EtcdAdminOptions,
  hosts: string[],
  fn: (client: Etcd3) => Promise<T>,
  callTimeout = options.callTimeoutMs ?? 5000,
  dial?: DialTarget,
): Promise<T> {
  if (hosts.length === 0) throw new Error('no etcd endpoints to talk to');
  const connection = options.connectionFor ? await options.connectionFor(hosts) : {};
  const { auth, ...plain } = connection;
  // One member asked at its Pod's address: TLS verifies, and :authority names, the member's name as if dialled by it.
  // Only `hosts` themselves are dialled so; the cluster's client Service (a learner's fallback below) goes by name.
  const direct = dial && hosts.length === 1 ? dial : undefined;
  const open = (on: string[], at: DialTarget | undefined) =>
    new Etcd3({
      hosts: at ? [at.url] : on,
      ...(at
        ? {
            grpcOptions: {
              'grpc.ssl_target_name_override': at.authority,
              'grpc.default_authority': at.authority,
            },
          }
        : {}),
      dialTimeout: callTimeout,
      // No client-side retries: etcd3 would retry a dead member three times per call, tripling every
      // observation of an unreachable member. The activity's retry policy is the one place that retries.
      faultHandling: { global: noop, host: () => noop },
      defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + callTimeout }),
      ...(options.credentials ? { credentials: options.credentials } : {}),
      ...plain,
    });
  const attempt = async (token?: string) => {
    const client = open(hosts, direct);
    try {
      if (token) attachToken(client, token);
      return await fn(client);
    } finally {
      client.close();
    }
  };
  if (!auth) return attempt();

  // Authenticate at the hosts; a learner refuses, and then the cluster's voters (its client Service) answer.
  const authenticate = async (): Promise<string | 'not-enabled'> => {
    const cluster = clusterOfEndpoint(hosts[0] ?? '');
    const places = [hosts, ...(cluster ? [[clusterClientEndpoint(cluster)]] : [])];
    let last: unknown;
    for (const on of places) {
      const client = open(on, on === hosts ? direct : undefined);
      try {
        const res = await client.auth.authenticate({ name: auth.username, password: auth.password });
        return res.token;
      } catch (err) {
        if (AUTH_NOT_ENABLED.test(errorText(err))) return 'not-enabled';
        if (!LEARNER_REFUSES.test(errorText(err))) throw err;
        last = err;
      } finally {
        client.close();
      }
    }
    throw last;
  };
  const cluster = clusterOfEndpoint(hosts[0] ?? '');
  const key = JSON.stringify([cluster ?? hosts, auth.username, auth.password]);
  let token = processTokens.get(key);
  const fresh = token === undefined;
  if (token === undefined) {
    const got = await authenticate();
    if (got === 'not-enabled') return attempt();
    token = got;
    processTokens.set(key, token);
  }
  try {
    return await attempt(token);
  } catch (err) {
    if (!INVALID_TOKEN.test(errorText(err))) throw err;
    processTokens.drop(key);
    if (fresh) {
      await new Promise((r) => setTimeout(r, FRESH_TOKEN_RETRY_MS));
      return attempt(token);
    }
    const again = await authenticate();
    if (again === 'not-enabled') return attempt();
    processTokens.set(key, again);
    return attempt(again);
  }
}

/** One member's Maintenance.Status in the operator's words. */
async function memberStatusOf(c: Etcd3, endpoint: string): Promise<EtcdMemberStatus> {
  const s = await c.maintenance.status();
  return {
    endpoint,
    id: s.header.member_id,
    leaderId: s.leader,
    version: s.version,
    raftIndex: s.raftIndex,
    raftAppliedIndex: s.raftAppliedIndex,
    revision: String(s.header.revision),
    dbSize: Number(s.dbSize),
    dbSizeInUse: Number(s.dbSizeInUse),
    isLearner: Boolean(s.isLearner),
    errors: [...(s.errors ?? [])],
  };
}

export function createEtcdAdmin(options: EtcdAdminOptions = {}): EtcdAdmin {
  const timeout = options.callTimeoutMs ?? 5000;

  // One short-lived client per call: etcd3 load-balances over `hosts` and keeps circuit breakers per host,
  // which would send per-member RPCs (status) to the wrong member and keep broken channels around.
  const withClient = <T>(
    hosts: string[],
    fn: (client: Etcd3) => Promise<T>,
    callTimeout = timeout,
    dial?: DialTarget,
  ) => withEtcdClient(options, hosts, fn, callTimeout, dial);

  const toMember = (m: {
    ID: string;
    name: string;
    peerURLs: string[];
    clientURLs: string[];
    isLearner: boolean;
  }) => ({
    id: m.ID,
    name: m.name,
    peerURLs: [...m.peerURLs],
    clientURLs: [...m.clientURLs],
    isLearner: Boolean(m.isLearner),
  });

  async function listMembers(endpoints: string[]): Promise<EtcdMember[]> {
    return withClient(endpoints, async (c) => {
      const res = await c.cluster.memberList({ linearizable: true });
      return res.members.map(toMember);
    });
  }

  return {
    listMembers,

    async listMembersWithHeader(endpoints, timeoutMs, dial) {
      return withClient(
        endpoints,
        async (c) => {
          const res = await c.cluster.memberList({ linearizable: true });
          return { clusterId: res.header.cluster_id, members: res.members.map(toMember) };
        },
        timeoutMs ?? timeout,
        dial,
      );
    },

    async addLearner(endpoints, peerURL) {
      const before = await listMembers(endpoints);
      const existing = before.find((m) => m.peerURLs.includes(peerURL));
      if (existing) return { member: existing, members: before };
      try {
        return await withClient(endpoints, async (c) => {
          const res = await c.cluster.memberAdd({ peerURLs: [peerURL], isLearner: true });
          return { member: toMember(res.member), members: res.members.map(toMember) };
        });
      } catch (err) {
        if (refusedUntilHealthy(err)) return 'not-ready';
        throw err;
      }
    },

    async promote(endpoints, id) {
      const members = await listMembers(endpoints);
      const target = members.find((m) => m.id === id);
      if (!target) return 'not-found';
      if (!target.isLearner) return 'promoted';
      try {
        await withClient(endpoints, (c) => c.cluster.memberPromote({ ID: id }));
        return 'promoted';
      } catch (err) {
        if (NOT_CAUGHT_UP.test(String((err as Error).message))) return 'not-caught-up';
        throw err;
      }
    },

    async remove(endpoints, id) {
      try {
        await withClient(endpoints, (c) => c.cluster.memberRemove({ ID: id }));
        return 'removed';
      } catch (err) {
        if (MEMBER_NOT_FOUND.test(String((err as Error).message))) return 'not-found';
        throw err;
      }
    },

    async moveLeader(leaderEndpoint, targetId) {
      const leaderNow = async () => {
        const s = await withClient([leaderEndpoint], (c) => c.maintenance.status());
        return { self: s.header.member_id, leader: s.leader };
      };
      const before = await leaderNow();
      if (before.leader === targetId) return 'already-leader';
      if (before.leader !== before.self) return 'not-leader';
      try {
        await withClient([leaderEndpoint], (c) => c.maintenance.moveLeader({ targetID: targetId }));
        return 'moved';
      } catch (err) {
        // The move may have happened even though the call failed (a timeout after etcd acted, or "not leader"
        // because it already handed over): what etcd says now decides, not the error.
        const after = await leaderNow().catch(() => undefined);
        if (after?.leader === targetId) return 'already-leader';
        throw err;
      }
    },

    async alarms(endpoints, timeoutMs, dial) {
      return withClient(
        endpoints,
        async (c) => {
          const res = await c.maintenance.alarm({
            action: AlarmAction.Get,
            memberID: 0,
            alarm: AlarmType.None,
          });
          return (res.alarms ?? []).map((a) => ({
            memberId: String(a.memberID),
            // The generated type says 'Nospace'; the wire enum name is NOSPACE. One spelling for the rest of the code.
            alarm: String(a.alarm).toUpperCase(),
          }));
        },
        timeoutMs ?? timeout,
        dial,
      );
    },

    async disarmNoSpace(endpoints, memberId) {
      await withClient(endpoints, (c) =>
        c.maintenance.alarm({ action: AlarmAction.Deactivate, memberID: memberId, alarm: AlarmType.Nospace }),
      );
    },

    async compactToCurrent(endpoints) {
      return withClient(
        endpoints,
        async (c) => {
          // A linearizable read's header carries the current revision.
          const res = await c.kv.range({ key: Buffer.from([0]), limit: 1, keys_only: true });
          const revision = String(res.header.revision);
          try {
            await c.kv.compact({ revision, physical: true });
            return { revision, alreadyCompacted: false };
          } catch (err) {
            if (ALREADY_COMPACTED.test(String((err as Error).message)))
              return { revision, alreadyCompacted: true };
            throw err;
          }
        },
        // Physical compaction of a full database takes a while: a longer deadline than a status call.
        Math.max(timeout, 60_000),
      );
    },

    async hashKV(endpoint, revision, timeoutMs) {
      return withClient(
        [endpoint],
        async (c) => {
          // etcd3 1.1.2's maintenance.hashKV() names the gRPC method hashKV; its proto loader calls it hashKv.
          const pool = (c.maintenance as unknown as { client: HashKVCallable }).client;
          const res = await pool.exec('Maintenance', 'hashKv', { revision: String(revision) });
          return { hash: Number(res.hash), compactRevision: Number(res.compact_revision) };
        },
        timeoutMs,
      );
    },

    async defragment(endpoint, timeoutMs) {
      await withClient([endpoint], (c) => c.maintenance.defragment(), timeoutMs);
    },

    async statusWithoutAuth(endpoint, timeoutMs) {
      const resolve = options.connectionFor;
      const plain: EtcdAdminOptions = {
        ...options,
        ...(resolve
          ? {
              connectionFor: async (hosts: readonly string[]) => {
                const { auth: _auth, ...tls } = await resolve(hosts);
                return tls;
              },
            }
          : {}),
      };
      return withEtcdClient(plain, [endpoint], (c) => memberStatusOf(c, endpoint), timeoutMs ?? timeout);
    },

    async status(endpoint, timeoutMs, dial) {
      return withClient([endpoint], (c) => memberStatusOf(c, endpoint), timeoutMs, dial);
    },
  };
}
