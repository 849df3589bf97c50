// The cluster as it is now, read and never changed: Pods, claims, and etcd's view (etcd-observation.ts) (observeCluster), and a wait for the set of answering members to change (awaitAnswerChange).
import type { KubernetesObject } from '@kubernetes/client-node';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { Annotations, Labels } from '../crds/labels';
import { claimName, memberClientURL } from '../crds/names';
import type { EtcdAdmin } from './etcd-admin';
import type { KubeObjects } from './kube-objects';
import type { ClusterObservation, KubeMemberObservation } from '../contracts/observation';
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
import { observeIssuedTLS } from './issued-tls';
import type { ClusterRef } from '../contracts/cluster-ref';
import { heartbeat } from './heartbeat';
import { isoOf, memberPods, ownedByAnother } from './cluster-kube';
import type { PodLike } from './cluster-kube';
import { ANSWER_POLL_MS, delay } from './etcd-membership';
import { dialAt } from './member-addresses';
import { passesLearnerReadiness } from './member-readiness';
import { learnerToRestart } from '../contracts/learner-restart';
import type { NamedReadiness } from './etcd-observation';
import { observeEtcd } from './etcd-observation';

/** Set on a claim by the scheduler when its class binds on first consumer: the node its volume is made on. */
const SELECTED_NODE_ANNOTATION = 'volume.kubernetes.io/selected-node';

/** The kubelet's readiness of the live member Pods (not being deleted, not a former cluster's), by member name. */
function podReadiness(ref: ClusterRef, pods: PodLike[]): NamedReadiness[] {
  return pods
    .filter((p) => !p.metadata?.deletionTimestamp && !ownedByAnother(ref, p))
    .map((p) => ({
      name: p.metadata?.labels?.[Labels.member] ?? '',
      ready: p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
      role: p.metadata?.labels?.[Labels.role],
    }));
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
  const look = await observeEtcd({
    ref,
    etcd,
    endpoints,
    reach,
    podIP: (name) => podIPs.get(name),
    learnerReadiness,
    readiness: podReadiness(ref, pods),
    readinessNow: async () => podReadiness(ref, await memberPods(kube, ref)),
  });
  // What cert-manager issued against the operator's copies that members mount (only with an issuerRef).
  const issuedTLS = input.spec
    ? await observeIssuedTLS(kube, ref, input.spec).catch(() => undefined)
    : undefined;
  return {
    ...(look.etcd ? { etcd: look.etcd } : {}),
    ...(!look.etcd && look.etcdRefused ? { etcdRefused: look.etcdRefused } : {}),
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
