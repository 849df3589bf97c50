// etcd's side of a look (observeCluster, cluster-observation.ts): the member list asked of every member at once, what an
// unanswered list means (leader-evidence.ts), each listed member's status, and the alarms. Reads only.
import type { ClusterRef } from '../contracts/cluster-ref';
import type { ClusterObservation, EtcdMemberObservation } from '../contracts/observation';
import { memberFromPeerURL } from '../crds/names';
import type { EtcdAdmin } from './etcd-admin';
import { ANSWER_POLL_MS, delay } from './etcd-membership';
import type { PodReadiness } from './leader-evidence';
import {
  confirmWorthAsking,
  NoLeaderKnown,
  noLeaderKnown,
  QuorumGone,
  quorumGoneMeanwhile,
} from './leader-evidence';
import type { DialTarget } from './member-addresses';
import { tlsRefusal } from './tls-refusal';

/**
 * A member that does not answer its status within this long counts as unreachable for this observation.
 * A member that is still starting (its name not yet resolvable, its port not yet open) would otherwise hold
 * every observation for the full call deadline while it joins.
 */
const OBSERVE_STATUS_TIMEOUT_MS = 1000;
/**
 * When no member answers the member list and the kubelet's readiness says one more round is worth asking
 * (confirmWorthAsking, leader-evidence.ts), the list is asked once more this long after: a leader restarting (a
 * rollout, a CA stage) or a slow moment leaves a linearizable list unanswered for about an election, while clients'
 * writes go through.
 */
export const OBSERVE_CONFIRM_MS = 1000;
/**
 * A member whose Pod the kubelet finds not Ready (frozen, stopped, still starting) is given this long to answer its
 * status; a Ready member or a learner (never Ready) the full OBSERVE_STATUS_TIMEOUT_MS. A live etcd answers its status
 * within milliseconds, so a frozen member no longer holds the look that tells of it for a full second.
 */
const NOT_READY_STATUS_TIMEOUT_MS = 300;
/** How long a started learner is given to answer its readiness checks (contracts/learner-restart.ts). */
const LEARNER_READINESS_TIMEOUT_MS = 500;
/** How long a started learner that passed its readiness checks is given to answer its status after them. */
const LEARNER_ANSWER_GRACE_MS = 300;

/** The first value any of `calls` resolves to, all asked at once: one dead member costs no more than a live one's answer. */
async function firstOf<T>(calls: Promise<T>[]): Promise<T> {
  if (calls.length === 0) throw new Error('no member Pod to ask');
  try {
    return await Promise.any(calls);
  } catch (err) {
    throw err instanceof AggregateError ? (err.errors[0] as unknown) : err;
  }
}

type EtcdView = NonNullable<ClusterObservation['etcd']>;

/** A member Pod as the kubelet finds it, by member name. */
export type NamedReadiness = PodReadiness & { name: string };

export interface EtcdLookInput {
  ref: ClusterRef;
  etcd: EtcdAdmin;
  /** Where each member whose live Pod has an address is asked (member-addresses.ts). */
  endpoints: { name: string; url: string; dial: DialTarget }[];
  /** Where a listed member is asked, or undefined when its Pod has no address. */
  reach: (name: string) => { url: string; dial: DialTarget } | undefined;
  podIP: (name: string) => string | undefined;
  /** A learner's readiness checks at its Pod's address (member-readiness.ts). */
  learnerReadiness: (podIP: string, timeoutMs: number) => Promise<boolean>;
  /** The live member Pods' readiness when the look began, and read afresh (while a confirming round runs). */
  readiness: NamedReadiness[];
  readinessNow: () => Promise<NamedReadiness[]>;
}

/**
 * etcd's view (member list, each member's status, alarms), or none when no member answered the list; then
 * `etcdRefused` says so when every member refused the TLS handshake.
 */
export async function observeEtcd(input: EtcdLookInput): Promise<{ etcd?: EtcdView; etcdRefused?: string }> {
  const { ref, etcd, endpoints, reach } = input;
  const readyAtStart = new Set(input.readiness.flatMap((p) => (p.ready ? [p.name] : [])));
  const statusTimeout = (name: string, isLearner: boolean) =>
    isLearner || readyAtStart.has(name) ? OBSERVE_STATUS_TIMEOUT_MS : NOT_READY_STATUS_TIMEOUT_MS;
  /** Whether a member knows a leader, asked within the deadline of its Pod's readiness in `ready`. */
  const probe = (e: (typeof endpoints)[number], ready: Set<string>) =>
    etcd
      .status(e.url, ready.has(e.name) ? OBSERVE_STATUS_TIMEOUT_MS : NOT_READY_STATUS_TIMEOUT_MS, e.dial)
      .catch(() => undefined);
  let etcdRefused: string | undefined;
  try {
    // Every member is asked at once, each within its own deadline: a dead or frozen member costs one
    // deadline, not one per member asked before the one that answers.
    // A first round still unanswered after LIST_PATIENCE_MS also asks each member whether it knows a leader, and
    // ends as soon as none does (leader-evidence.ts); a second round, asked to confirm, waits out its deadline.
    const listRound = async (cutShort: boolean) => {
      let answered = false;
      const calls = endpoints.map((e) =>
        etcd.listMembersWithHeader([e.url], OBSERVE_STATUS_TIMEOUT_MS * 3, e.dial),
      );
      const list = firstOf(calls).then(
        (l) => {
          answered = true;
          return l;
        },
        async (err: unknown) => {
          answered = true;
          // Members that all refuse the TLS handshake answer nothing, yet run: said as such, never as lost quorum.
          const settled = await Promise.allSettled(calls);
          etcdRefused = tlsRefusal(
            settled.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : [])),
          );
          throw err;
        },
      );
      if (!cutShort) return list;
      const leaderless = noLeaderKnown(
        endpoints.length,
        async (i) => (endpoints[i] ? probe(endpoints[i], readyAtStart) : undefined),
        () => answered,
        delay,
      );
      return Promise.race([list, leaderless]);
    };
    // Meanwhile, while the list goes unanswered, the kubelet's readiness is read afresh: once most voters' Pods are
    // not Ready and no member knows a leader, the look ends there, whichever round runs. Members are given their
    // status deadline by the readiness just read (a member whose Pod went not Ready since the look began: 300 ms).
    let settled = false;
    let readyNow = readyAtStart;
    const gone = quorumGoneMeanwhile({
      readiness: async () => {
        const now = await input.readinessNow();
        readyNow = new Set(now.flatMap((p) => (p.ready ? [p.name] : [])));
        return now;
      },
      leaders: () => Promise.all(endpoints.map((e) => probe(e, readyNow))),
      done: () => settled,
      pause: delay,
      pollMs: ANSWER_POLL_MS,
    });
    const listed = await Promise.race([listRound(true), gone])
      .catch(async (err: unknown) => {
        if (err instanceof QuorumGone || etcdRefused) throw err;
        if (!confirmWorthAsking(input.readiness, err instanceof NoLeaderKnown)) throw err;
        // A look the kubelet's readiness ended during the pause asks no second round after it.
        const confirm = delay(OBSERVE_CONFIRM_MS).then(() => {
          if (settled) throw err;
          return listRound(false);
        });
        return Promise.race([confirm, gone]);
      })
      .finally(() => {
        settled = true;
      });
    type Answer = EtcdMemberObservation & { leaderId?: string };
    type Listed = Pick<EtcdMemberObservation, 'id' | 'name' | 'isLearner' | 'started'>;
    /** The member's own status at its Pod's address, or undefined when it does not answer as itself in time. */
    const statusOf = async (
      at: { url: string; dial: DialTarget },
      base: Listed,
    ): Promise<Answer | undefined> => {
      try {
        const s = await etcd.status(at.url, statusTimeout(base.name, base.isLearner), at.dial);
        // The address is this observation's, read a moment ago; an answer from any other member is not this one's.
        if (s.id !== base.id) return undefined;
        return {
          ...base,
          reachable: true,
          raftIndex: s.raftIndex,
          ...(s.revision ? { revision: s.revision } : {}),
          version: s.version,
          leaderId: s.leaderId,
          dbSize: s.dbSize,
          dbSizeInUse: s.dbSizeInUse,
        };
      } catch {
        return undefined;
      }
    };
    const members: Answer[] = await Promise.all(
      listed.members.map(async (m) => {
        const name = memberFromPeerURL(ref, m.peerURLs[0] ?? '') ?? m.name;
        const base = { id: m.id, name, isLearner: m.isLearner, started: m.name !== '' };
        const at = reach(name);
        if (!at) return { ...base, reachable: false };
        const status = statusOf(at, base);
        // A started learner is also asked its readiness checks, at the same time. One that passes them has applied
        // its leader's snapshot and its publish is committed (etcd lists its name), so it serves clients within
        // milliseconds unless it waits on that publish: its status is given LEARNER_ANSWER_GRACE_MS more, not the
        // full deadline, and without an answer by then it is said to wait on its own publish.
        const podIP = input.podIP(name);
        const ready =
          base.isLearner &&
          base.started &&
          podIP !== undefined &&
          (await input.learnerReadiness(podIP, LEARNER_READINESS_TIMEOUT_MS));
        if (!ready) return (await status) ?? { ...base, reachable: false };
        const answered = await Promise.race([status, delay(LEARNER_ANSWER_GRACE_MS).then(() => undefined)]);
        return answered ?? { ...base, reachable: false, awaitingOwnPublish: true };
      }),
    );
    const leaderId = members.find((m) => m.leaderId && m.leaderId !== '0')?.leaderId;
    // NOSPACE and CORRUPT live in etcd's alarm list, not in any member's status; an unanswered question
    // leaves `alarms` out rather than claiming there are none.
    const alarms = await firstOf(
      endpoints.map((e) => etcd.alarms([e.url], OBSERVE_STATUS_TIMEOUT_MS * 3, e.dial)),
    ).catch(() => undefined);
    const view: EtcdView = {
      clusterId: listed.clusterId,
      ...(leaderId ? { leaderId } : {}),
      members: members.map(({ leaderId: _l, ...m }) => m),
      ...(alarms ? { alarms } : {}),
    };
    return { etcd: view };
  } catch {
    return etcdRefused ? { etcdRefused } : {};
  }
}
