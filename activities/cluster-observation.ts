// The cluster as it is now, read and never changed: Pods, claims, etcd's member list and each member's status (observeCluster), and a wait for the set of answering members to change (awaitAnswerChange).
import type { KubernetesObject } from '@kubernetes/client-node';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { Annotations, Labels } from '../crds/labels';
import { claimName, memberClientURL, memberFromPeerURL } from '../crds/names';
import type { EtcdAdmin } from './etcd-admin';
import type { KubeObjects } from './kube-objects';
import type {
  ClusterObservation,
  EtcdMemberObservation,
  KubeMemberObservation,
} from '../contracts/observation';
import { reportsLostRaftLog } from './member-failures';
import type { ProblemClaim, ProblemPod } from './member-problems';
import { memberProblem } from './member-problems';
import { RESTORE_CONTAINER, restoreFailureOf, restoredPointOf } from './restore-manifests';
import { etcdVersionOfImage } from './upgrade-images';
import { memberImage } from './etcd-images';
import { initialMembersOfAnnotation } from './member-manifests';
import type { ClaimLike } from './rollout-observation';
import { claimStorageOf, readStorageClasses } from './rollout-observation';
import { podTemplate, templateObservation } from './rollout-template';
import { memberTLSHash } from './etcd-tls';
import { readTLSTrust } from './tls-trust';
import { tlsRefusal } from './tls-refusal';
import { observeIssuedTLS } from './issued-tls';
import type { ClusterRef } from '../contracts/cluster-ref';
import { heartbeat } from './heartbeat';
import { isoOf, memberPods, ownedByAnother } from './cluster-kube';
import type { PodLike } from './cluster-kube';
import { ANSWER_POLL_MS, delay } from './etcd-membership';
import { dialAt } from './member-addresses';
import type { DialTarget } from './member-addresses';
import { passesLearnerReadiness } from './member-readiness';
import { learnerToRestart } from '../contracts/learner-restart';
import { confirmWorthAsking, NoLeaderKnown, noLeaderKnown, quorumGoneMeanwhile } from './leader-evidence';

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

/** Set on a claim by the scheduler when its class binds on first consumer: the node its volume is made on. */
const SELECTED_NODE_ANNOTATION = 'volume.kubernetes.io/selected-node';

/** The first value any of `calls` resolves to, all asked at once: one dead member costs no more than a live one's answer. */
async function firstOf<T>(calls: Promise<T>[]): Promise<T> {
  if (calls.length === 0) throw new Error('no member Pod to ask');
  try {
    return await Promise.any(calls);
  } catch (err) {
    throw err instanceof AggregateError ? (err.errors[0] as unknown) : err;
  }
}

/**
 * How the etcd container last exited, when it keeps exiting (CrashLoopBackOff): the kubelet's termination message
 * is the last 2048 bytes of its log, which a panic's stack trace fills before etcd's own words are reached (a full
 * volume said nothing then), so the previous run's log tail replaces it when it can be read. Read only for a
 * container in back-off, so a healthy cluster costs no log reads.
 */
async function lastExitOf(
  kube: KubeObjects,
  namespace: string,
  pod: string,
  status:
    | {
        state?: { waiting?: { reason?: string } };
        lastState?: { terminated?: { exitCode?: number; message?: string } };
      }
    | undefined,
): Promise<{ exitCode?: number; message?: string } | undefined> {
  const last = status?.lastState?.terminated;
  if (!last || status?.state?.waiting?.reason !== 'CrashLoopBackOff' || !kube.previousLog) return last;
  const log = await kube.previousLog(namespace, pod, 'etcd').catch(() => undefined);
  return log?.trim() ? { ...last, message: log } : last;
}

export interface ObservationDeps {
  kube: KubeObjects;
  etcd: EtcdAdmin;
  imageFor: (version: string) => string | undefined;
  /** A learner's readiness checks at its Pod's address (member-readiness.ts); the tests fake it. */
  learnerReadiness?: (podIP: string, timeoutMs: number) => Promise<boolean>;
}

/** The init containers of a member Pod that wait, for memberProblem: an image the kubelet cannot pull stops etcd too. */
function initProblems(p: PodLike): Pick<ProblemPod, 'init'> {
  const init = (p.status?.initContainerStatuses ?? []).flatMap((c) => {
    const waiting = c.state?.waiting;
    if (!waiting) return [];
    const image = p.spec?.initContainers?.find((x) => x.name === c.name)?.image;
    return [{ name: c.name, waiting, ...(image ? { image } : {}) }];
  });
  return init.length > 0 ? { init } : {};
}

/**
 * Reads Pods, claims and etcd's member list and per-member status; never changes anything. With `spec`,
 * also whether each Pod matches the spec's template and each claim's size (rollouts).
 */
export async function observeCluster(
  deps: ObservationDeps,
  input: { ref: ClusterRef; version: string; spec?: EtcdClusterSpec },
): Promise<ClusterObservation> {
  const { kube, etcd } = deps;
  const learnerReadiness = deps.learnerReadiness ?? passesLearnerReadiness;
  const { ref } = input;
  const versionKnown = deps.imageFor(input.version) !== undefined;
  // With the spec, each Pod is compared with the template it asks for (rollouts); without, nothing is said of it.
  const image = input.spec ? memberImage(input.spec, deps.imageFor) : undefined;
  // A CA bundle that cannot be read now (a Secret being replaced) leaves Pods unjudged rather than all out of date.
  const tlsHash = input.spec ? await memberTLSHash(kube, ref, input.spec).catch(() => undefined) : undefined;
  const template =
    input.spec && image && tlsHash
      ? podTemplate({
          ref,
          spec: input.spec,
          image,
          ...(tlsHash.caHash ? { tlsCAHash: tlsHash.caHash } : {}),
        })
      : undefined;
  const [pods, claims] = await Promise.all([
    memberPods(kube, ref),
    kube.list<
      KubernetesObject & {
        metadata?: { deletionTimestamp?: unknown; annotations?: Record<string, string> };
        spec?: { storageClassName?: string };
        status?: { phase?: string };
      }
    >('v1', 'PersistentVolumeClaim', ref.namespace, `${Labels.cluster}=${ref.name}`),
  ]);
  const kube_: Map<string, KubeMemberObservation> = new Map();
  /** Each member Pod's address: the only way observation reaches a member (member-addresses.ts). */
  const podIPs = new Map<string, string>();
  const lostRaftLog = new Set<string>();
  const problemPods = new Map<string, ProblemPod>();
  const entry = (name: string) => {
    let e = kube_.get(name);
    if (!e) kube_.set(name, (e = { name }));
    return e;
  };
  for (const p of pods) {
    const name = p.metadata?.labels?.[Labels.member];
    if (!name) continue;
    const statuses = p.status?.containerStatuses ?? [];
    const etcdStatus = statuses.find((c) => c.name === 'etcd') ?? statuses[0];
    const waiting = etcdStatus?.state?.waiting;
    // The kubelet keeps the tail of a failed etcd's log as its termination message (FallbackToLogsOnError).
    const exitedLosingData =
      reportsLostRaftLog(etcdStatus?.state?.terminated?.message) ||
      reportsLostRaftLog(etcdStatus?.lastState?.terminated?.message);
    if (exitedLosingData) lostRaftLog.add(name);
    const restoreStatus = p.status?.initContainerStatuses?.find((c) => c.name === RESTORE_CONTAINER);
    const restoreFailure = restoreFailureOf(restoreStatus);
    const restored = restoredPointOf(restoreStatus);
    const etcdImage = p.spec?.containers?.find((c) => c.name === 'etcd')?.image;
    const podVersion = etcdVersionOfImage(etcdImage);
    const lastTerminated = await lastExitOf(kube, ref.namespace, p.metadata?.name ?? name, etcdStatus);
    problemPods.set(name, {
      name: p.metadata?.name ?? name,
      ...(isoOf(p.metadata?.creationTimestamp)
        ? { creationTimestamp: isoOf(p.metadata?.creationTimestamp) }
        : {}),
      conditions: (p.status?.conditions ?? []).map((c) => ({
        type: c.type,
        status: c.status,
        ...(c.reason ? { reason: c.reason } : {}),
        ...(c.message ? { message: c.message } : {}),
        ...(c.lastTransitionTime ? { lastTransitionTime: isoOf(c.lastTransitionTime) } : {}),
      })),
      etcd: {
        ...(etcdImage ? { image: etcdImage } : {}),
        ...(waiting ? { waiting } : {}),
        ...(lastTerminated ? { lastTerminated } : {}),
      },
      ...initProblems(p),
    });
    if (p.status?.podIP) podIPs.set(name, p.status.podIP);
    const podInitial = initialMembersOfAnnotation(p.metadata?.annotations?.[Annotations.initialMembers]);
    if (podInitial) entry(name).initialMembers = podInitial;
    entry(name).pod = {
      ...(restoreFailure ? { restoreFailure } : {}),
      ...(restored ? { restored } : {}),
      ...(podVersion ? { version: podVersion } : {}),
      phase: (p.status?.phase ?? 'Pending') as NonNullable<KubeMemberObservation['pod']>['phase'],
      ready: p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
      terminating: Boolean(p.metadata?.deletionTimestamp) || ownedByAnother(ref, p),
      ...(waiting?.reason ? { waitingReason: waiting.reason } : {}),
      restartCount: etcdStatus?.restartCount ?? 0,
      uid: p.metadata?.uid ?? '',
      ...(template && input.spec
        ? { template: templateObservation(p.metadata?.annotations, template, input.spec) }
        : {}),
    };
  }
  // A restart onto the spec's template would put a member on its CA bundles: only judged when one is due.
  const due = [...kube_.values()].filter((k) => k.pod?.template?.upToDate === false);
  if (input.spec?.tls && due.length > 0) {
    const trust = await readTLSTrust(kube, ref, input.spec).catch(() => undefined);
    if (trust && !trust.trusted) {
      for (const k of due) if (k.pod?.template) k.pod.template.untrusted = trust.message;
    }
  }
  const classes = input.spec ? await readStorageClasses(kube, claims as ClaimLike[]) : undefined;
  const problemClaims = new Map<string, ProblemClaim>();
  for (const c of claims) {
    const name = c.metadata?.labels?.[Labels.member];
    if (!name) continue;
    const className = c.spec?.storageClassName;
    problemClaims.set(name, {
      name: c.metadata?.name ?? claimName(name),
      ...(c.status?.phase ? { phase: c.status.phase } : {}),
      ...(isoOf(c.metadata?.creationTimestamp)
        ? { creationTimestamp: isoOf(c.metadata?.creationTimestamp) }
        : {}),
      ...(className ? { storageClassName: className } : {}),
      ...(className && classes ? { classExists: classes.get(className) !== undefined } : {}),
      ...(className && classes?.get(className)?.bindsOnFirstConsumer ? { bindsOnFirstConsumer: true } : {}),
      ...(c.metadata?.annotations?.[SELECTED_NODE_ANNOTATION]
        ? { selectedNode: c.metadata.annotations[SELECTED_NODE_ANNOTATION] }
        : {}),
    });
    // The claim's record outlives the Pod's: it is the one read when both exist (they are written alike).
    const claimInitial = initialMembersOfAnnotation(c.metadata?.annotations?.[Annotations.initialMembers]);
    if (claimInitial) entry(name).initialMembers = claimInitial;
    const restartedLearner = c.metadata?.annotations?.[Annotations.restartedLearner];
    entry(name).claim = {
      ...(restartedLearner ? { restartedLearner } : {}),
      terminating: Boolean(c.metadata?.deletionTimestamp) || ownedByAnother(ref, c),
      dataLost:
        c.metadata?.annotations?.[Annotations.dataLost] === 'true' ||
        // etcd itself said so: its log was gone or cut short when it restarted on this claim.
        lostRaftLog.has(name),
      ...(classes ? { storage: claimStorageOf(c as ClaimLike, classes) } : {}),
    };
  }

  const now = Date.now();
  for (const k of kube_.values()) {
    if (k.pod?.terminating) continue;
    const problem = memberProblem(problemPods.get(k.name), problemClaims.get(k.name), now);
    if (problem) k.problem = problem;
  }

  // A member is asked at its Pod's address, so only once its Pod has one (member-addresses.ts): its name is not
  // looked up before it exists.
  const reach = (name: string) => {
    const url = memberClientURL(ref, name);
    const dial = dialAt(url, podIPs.get(name));
    return dial ? { url, dial } : undefined;
  };
  const endpoints = [...kube_.values()]
    .filter((k) => k.pod && !k.pod.terminating)
    .flatMap((k) => {
      const at = reach(k.name);
      return at ? [{ ...at, name: k.name }] : [];
    });
  const statusTimeout = (name: string, isLearner: boolean) =>
    isLearner || kube_.get(name)?.pod?.ready ? OBSERVE_STATUS_TIMEOUT_MS : NOT_READY_STATUS_TIMEOUT_MS;
  let etcdView: ClusterObservation['etcd'];
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
        async (i) => {
          const e = endpoints[i];
          if (!e) return undefined;
          return etcd.status(e.url, statusTimeout(e.name, false), e.dial);
        },
        () => answered,
        delay,
      );
      return Promise.race([list, leaderless]);
    };
    const isReady = (p: PodLike) =>
      p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
    const readinessOf = (list: PodLike[]) =>
      list
        .filter((p) => !p.metadata?.deletionTimestamp && !ownedByAnother(ref, p))
        .map((p) => ({ ready: isReady(p), role: p.metadata?.labels?.[Labels.role] }));
    const listed = await listRound(true).catch(async (err: unknown) => {
      if (etcdRefused || !confirmWorthAsking(readinessOf(pods), err instanceof NoLeaderKnown)) throw err;
      let done = false;
      const confirm = delay(OBSERVE_CONFIRM_MS)
        .then(() => listRound(false))
        .finally(() => {
          done = true;
        });
      // Members are given their status deadline by the readiness just read: a member whose Pod the kubelet has
      // marked not Ready since the look began is not waited on for a full second.
      let readyNow = new Set<string>();
      const gone = quorumGoneMeanwhile({
        readiness: async () => {
          const now = (await memberPods(kube, ref)).filter(
            (p) => !p.metadata?.deletionTimestamp && !ownedByAnother(ref, p),
          );
          readyNow = new Set(
            now.flatMap((p) => (isReady(p) ? [p.metadata?.labels?.[Labels.member] ?? ''] : [])),
          );
          return readinessOf(now);
        },
        leaders: () =>
          Promise.all(
            endpoints.map((e) =>
              etcd
                .status(
                  e.url,
                  readyNow.has(e.name) ? OBSERVE_STATUS_TIMEOUT_MS : NOT_READY_STATUS_TIMEOUT_MS,
                  e.dial,
                )
                .catch(() => undefined),
            ),
          ),
        done: () => done,
        pause: delay,
        pollMs: ANSWER_POLL_MS,
      });
      return Promise.race([confirm, gone]);
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
        const podIP = podIPs.get(name);
        const ready =
          base.isLearner &&
          base.started &&
          podIP !== undefined &&
          (await learnerReadiness(podIP, LEARNER_READINESS_TIMEOUT_MS));
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
    etcdView = {
      clusterId: listed.clusterId,
      ...(leaderId ? { leaderId } : {}),
      members: members.map(({ leaderId: _l, ...m }) => m),
      ...(alarms ? { alarms } : {}),
    };
  } catch {
    etcdView = undefined;
  }
  // What cert-manager issued against the operator's copies that members mount (only with an issuerRef).
  const issuedTLS = input.spec
    ? await observeIssuedTLS(kube, ref, input.spec).catch(() => undefined)
    : undefined;
  return {
    ...(etcdView ? { etcd: etcdView } : {}),
    ...(!etcdView && etcdRefused ? { etcdRefused } : {}),
    ...(issuedTLS ? { issuedTLS } : {}),
    kube: [...kube_.values()].sort((a, b) => a.name.localeCompare(b.name)),
    versionKnown,
  };
}

/** The activities that only read the cluster. */
export function createObservationActivities(deps: ObservationDeps) {
  return {
    /**
     * Reads Pods, claims and etcd's member list and per-member status; never changes anything. With `spec`,
     * also whether each Pod matches the spec's template and each claim's size (rollouts).
     */
    observeCluster: (input: {
      ref: ClusterRef;
      version: string;
      spec?: EtcdClusterSpec;
    }): Promise<ClusterObservation> => observeCluster(deps, input),

    /**
     * Returns once the members that answer (etcd lists them as started and their status answers) differ
     * from `answering`, or after `maxMs`: an operation waiting for a member to come up hears of it within a
     * poll. Only reads, like observeCluster, which it repeats.
     */
    async awaitAnswerChange(input: {
      ref: ClusterRef;
      version: string;
      answering: string[];
      maxMs: number;
      /** The learner the look before this wait found waiting on its own publish (contracts/learner-restart.ts). */
      learnerToRestart?: string;
    }): Promise<'changed' | 'unchanged'> {
      const until = Date.now() + input.maxMs;
      const before = [...input.answering].sort().join(',');
      let candidate: string | undefined;
      for (;;) {
        heartbeat();
        const observation = await observeCluster(deps, input);
        const now = (observation.etcd?.members ?? [])
          .filter((m) => m.started && m.reachable)
          .map((m) => m.name)
          .sort()
          .join(',');
        // A member Pod that cannot run (image, crash loop, scheduling, claim) is news too: the wait says why.
        if (now !== before || observation.kube.some((k) => k.problem)) return 'changed';
        // A learner found waiting on its own publish is restarted by the next step, not waited out. Seen in two polls
        // in a row: a learner that was only slow to answer one status (a busy machine) is not news.
        const restartable = learnerToRestart(observation)?.id;
        if (restartable !== input.learnerToRestart) {
          if (restartable === undefined || restartable === candidate) return 'changed';
          candidate = restartable;
        } else {
          candidate = undefined;
        }
        if (Date.now() + ANSWER_POLL_MS > until) return 'unchanged';
        await delay(ANSWER_POLL_MS);
      }
    },
  };
}
