// What the bench asks etcd itself, from the host at Pod IPs: "done" the same way for the operator's cluster and the floor's (member list, every member answering).
import { Etcd3 } from 'etcd3';
import { PORTS } from '../crds/names';

export const clientURL = (podIP: string) => `http://${podIP}:${PORTS.client}`;

async function withClient<T>(podIP: string, fn: (c: Etcd3) => Promise<T>): Promise<T> {
  const c = new Etcd3({
    hosts: [clientURL(podIP)],
    dialTimeout: 1000,
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + 1000 }),
  });
  try {
    return await fn(c);
  } finally {
    c.close();
  }
}

export interface EtcdMember {
  id: string;
  name: string;
  isLearner: boolean;
}

/** etcd's member list (linearizable) as the member at `podIP` answers it. */
export const memberList = (podIP: string): Promise<EtcdMember[]> =>
  withClient(podIP, async (c) =>
    (await c.cluster.memberList({ linearizable: true })).members.map((m) => ({
      id: String(m.ID),
      name: m.name,
      isLearner: Boolean(m.isLearner),
    })),
  );

/**
 * Raft entries a cluster has applied before the bench times a join: more than etcd 3.6 applies between two in-memory
 * raft snapshots (memorySnapshotCount, 100), after which the first entry is compacted away and every member that
 * joins gets its data as a snapshot, as a member joining a cluster in use does. A cluster younger than that sends a
 * new member its few entries instead, a path users seldom meet, and one that skips etcd's own delay after a snapshot
 * (docs/local-cluster.md, "Joining by snapshot").
 */
export const PRELOAD_ENTRIES = 150;

/** Writes `count` keys through the member at `podIP`, one raft entry each. */
export const preload = (podIP: string, count = PRELOAD_ENTRIES): Promise<void> =>
  withClient(podIP, async (c) => {
    for (let i = 0; i < count; i += 25) {
      await Promise.all(
        Array.from({ length: Math.min(25, count - i) }, (_, k) => c.put(`bench/preload/${i + k}`).value('x')),
      );
    }
  });

/** The member at `podIP` serves a linearizable read: it is part of a quorum with a leader (etcdctl endpoint health). */
export const answers = (podIP: string): Promise<boolean> =>
  withClient(podIP, async (c) => {
    await c.get('bench/health').string();
    return true;
  });

/**
 * True as soon as one check says true, without waiting for the others (a member removed a moment ago can hold its
 * answer until its deadline); false once every check said false or failed.
 */
export function anyTrue(checks: ReadonlyArray<Promise<boolean>>): Promise<boolean> {
  if (checks.length === 0) return Promise.resolve(false);
  return new Promise((resolve) => {
    let left = checks.length;
    for (const check of checks)
      check.then(
        (yes) => (yes ? resolve(true) : --left === 0 && resolve(false)),
        () => --left === 0 && resolve(false),
      );
  });
}

/**
 * How long one member's answer is waited for in a membership poll. A linearizable member list takes ~10-60 ms here;
 * a member removed a moment ago, whose Pod still has its address, can hold a call for 3 s (the client's own retries
 * past its 1 s deadline), and a poll that waited for it would read a membership change up to 3 s late.
 */
export const MEMBERSHIP_ANSWER_MS = 300;

/**
 * `p`, or `fallback` once `ms` passed without an answer. (test/support/writer.ts has a `within` that rejects and
 * forgives the writer's own stalls; the bench is built without test/ and wants a plain answer.)
 */
export function settleWithin<T>(p: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((resolve) => {
      timer = setTimeout(() => resolve(fallback), ms);
    }),
  ]);
}

/** Some member at `podIPs` answers a linearizable member list of exactly n members (within MEMBERSHIP_ANSWER_MS). */
export const membershipIs = (podIPs: string[], n: number): Promise<boolean> =>
  anyTrue(
    podIPs.map((ip) =>
      settleWithin(
        memberList(ip).then((l) => l.length === n),
        MEMBERSHIP_ANSWER_MS,
        false,
      ),
    ),
  );

/** True when some member lists exactly `n` voters and the member at every one of `podIPs` answers. */
export async function votersAnswering(podIPs: string[], n: number): Promise<boolean> {
  if (podIPs.length !== n) return false;
  const oks = await Promise.all(podIPs.map((ip) => answers(ip).catch(() => false)));
  if (!oks.every(Boolean)) return false;
  const members = await memberList(podIPs[0] ?? '');
  return members.length === n && members.every((m) => !m.isLearner);
}

export const memberAdd = (podIP: string, peerURL: string): Promise<void> =>
  withClient(podIP, async (c) => {
    await c.cluster.memberAdd({ peerURLs: [peerURL] });
  });

export const memberRemove = (podIP: string, id: string): Promise<void> =>
  withClient(podIP, async (c) => {
    await c.cluster.memberRemove({ ID: id });
  });
