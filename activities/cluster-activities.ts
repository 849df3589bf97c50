// The cluster's side effects, one idempotent external effect per activity; each looks before it acts.
import { ApplicationFailure } from '@temporalio/common';
import type { KubernetesObject } from '@kubernetes/client-node';
import { FailureTypes, Reasons } from '../crds/conditions';
import type { EtcdClusterSpec, EtcdClusterStatus } from '../crds/etcd-cluster';
import { API_VERSION, ETCD_CLUSTER } from '../crds/etcd-cluster';
import { Annotations, Labels } from '../crds/labels';
import type { EtcdAdmin } from './etcd-admin';
import type { KubeObjects } from './kube-objects';
import type { MemberRole } from './member-manifests';
import { claimName, memberClientURL, memberFromPeerURL } from '../crds/names';
import {
  clientService,
  disruptionBudget,
  initialCluster,
  memberClaim,
  memberPod,
  peerService,
} from './member-manifests';
import type { EventRecorder } from './event-recorder';
import { recordOrDrop } from './event-recorder';
import type {
  ClusterObservation,
  EtcdMemberObservation,
  KubeMemberObservation,
} from '../contracts/observation';
import { reportsLostRaftLog } from './member-failures';
import type { ProblemClaim, ProblemPod } from './member-problems';
import { memberProblem } from './member-problems';
import type { RestoreInit } from './restore-manifests';
import { RESTORE_CONTAINER, restoreFailureOf } from './restore-manifests';
import { etcdVersionOfImage } from './upgrade-images';
import { memberImage } from './etcd-images';
import { createUpgradeActivities } from './upgrade-activities';
import { createRolloutActivities } from './rollout-activities';
import type { ClaimLike } from './rollout-observation';
import { claimStorageOf, readStorageClasses } from './rollout-observation';
import { podTemplate, templateObservation, withRolloutAnnotations } from './rollout-template';
import { peerURLFor } from '../crds/tls-names';
import { memberTLSHash, prepareMemberTLS } from './etcd-tls';
import { readTLSTrust } from './tls-trust';
import { tlsRefusal } from './tls-refusal';
import { observeIssuedTLS, stageIssuedTLS } from './issued-tls';
import type { IssuedTLSStage } from '../contracts/issued-tls';
import { createDefragActivities } from './defrag-activities';
import type { ClusterRef } from '../contracts/cluster-ref';
import type { EventReason } from '../contracts/event-reasons';
import { heartbeat } from './heartbeat';

export interface ActivityDeps {
  kube: KubeObjects;
  etcd: EtcdAdmin;
  events: EventRecorder;
  /** The operator's image for an etcd version (spec.image overrides it: memberImage), or undefined when none is known. */
  imageFor: (version: string) => string | undefined;
  /** Metrics hook: the status on the apiserver before a write and the status written (worker/operator-metrics.ts). */
  onStatusWritten?: (before: EtcdClusterStatus | undefined, after: EtcdClusterStatus) => void;
}

interface PodLike extends KubernetesObject {
  metadata?: KubernetesObject['metadata'] & { deletionTimestamp?: Date | string };
  spec?: { containers?: { name?: string; image?: string }[] };
  status?: {
    phase?: string;
    conditions?: {
      type: string;
      status: string;
      reason?: string;
      message?: string;
      lastTransitionTime?: Date | string;
    }[];
    containerStatuses?: {
      name?: string;
      state?: { waiting?: { reason?: string; message?: string }; terminated?: { message?: string } };
      lastState?: { terminated?: { message?: string; exitCode?: number } };
      restartCount?: number;
    }[];
    initContainerStatuses?: (NonNullable<Parameters<typeof restoreFailureOf>[0]> & { name: string })[];
  };
}

const podRef = (ref: ClusterRef, name: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  namespace: ref.namespace,
  name,
});
const claimRef = (ref: ClusterRef, member: string) => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  namespace: ref.namespace,
  name: claimName(member),
});
const clusterObjectRef = (ref: ClusterRef) => ({
  apiVersion: API_VERSION,
  kind: ETCD_CLUSTER.kind,
  namespace: ref.namespace,
  name: ref.name,
  plural: ETCD_CLUSTER.plural,
});

/**
 * A member that does not answer its status within this long counts as unreachable for this observation.
 * A member that is still starting (its name not yet resolvable, its port not yet open) would otherwise hold
 * every observation for the full call deadline while it joins.
 */
const OBSERVE_STATUS_TIMEOUT_MS = 1000;

/** How often a step that waits on etcd inside an activity asks again. */
const ANSWER_POLL_MS = 200;

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A timestamp from the API (a Date from the client, a string from a raw read) as RFC 3339. */
const isoOf = (t: Date | string | undefined): string | undefined =>
  t === undefined ? undefined : new Date(t).toISOString();

/** The first value any of `calls` resolves to, all asked at once: one dead member costs no more than a live one's answer. */
async function firstOf<T>(calls: Promise<T>[]): Promise<T> {
  if (calls.length === 0) throw new Error('no member Pod to ask');
  try {
    return await Promise.any(calls);
  } catch (err) {
    throw err instanceof AggregateError ? (err.errors[0] as unknown) : err;
  }
}

export function createActivities(deps: ActivityDeps) {
  const { etcd } = deps;
  /** The deps' objects, except that a refusal to adopt a foreign object is also told as an Event on the cluster. */
  const kube: KubeObjects = {
    ...deps.kube,
    async createIfAbsent(obj) {
      try {
        return await deps.kube.createIfAbsent(obj);
      } catch (err) {
        const owner = obj.metadata?.ownerReferences?.find((r) => r.kind === ETCD_CLUSTER.kind);
        if (err instanceof ApplicationFailure && err.type === FailureTypes.ObjectNotOwned && owner) {
          const ref = { namespace: obj.metadata?.namespace ?? '', name: owner.name, uid: owner.uid };
          const message = err.message;
          await recordOrDrop(() =>
            deps.events.record({ ref, type: 'Warning', reason: Reasons.ObjectNotOwned, message }),
          );
        }
        throw err;
      }
    },
  };

  async function memberPods(ref: ClusterRef): Promise<PodLike[]> {
    return kube.list<PodLike>('v1', 'Pod', ref.namespace, `${Labels.cluster}=${ref.name}`);
  }

  /**
   * An object a former EtcdCluster of the same name owns (deleted, then created again): the garbage collector
   * removes it, so it counts as being deleted, never as one of this cluster's members.
   */
  const ownedByAnother = (ref: ClusterRef, o: KubernetesObject) => {
    const owners = (o.metadata?.ownerReferences ?? []).filter((r) => r.kind === ETCD_CLUSTER.kind);
    return owners.length > 0 && !owners.some((r) => r.uid === ref.uid);
  };

  /** Client URLs worth asking cluster-wide questions: voters first, then anything else with a Pod. */
  async function endpointsOf(ref: ClusterRef): Promise<string[]> {
    const pods = (await memberPods(ref)).filter(
      (p) => !p.metadata?.deletionTimestamp && !ownedByAnother(ref, p),
    );
    const voters = pods.filter((p) => p.metadata?.labels?.[Labels.role] === 'voter');
    // Learners refuse cluster RPCs ("rpc not supported for learner"), and the etcd client picks any of its
    // hosts per call: so voters only, and the others only while no Pod is labelled a voter yet.
    const chosen = voters.length > 0 ? voters : pods;
    return chosen
      .map((p) => p.metadata?.name ?? '')
      .filter(Boolean)
      .map((n) => memberClientURL(ref, n));
  }

  /** The member's peer URL under the cluster's stored spec.tls (CEL keeps peer TLS fixed for a cluster's life). */
  async function peerURLOf(ref: ClusterRef, member: string): Promise<string> {
    const cluster = await kube.read<KubernetesObject & { spec?: Pick<EtcdClusterSpec, 'tls'> }>(
      clusterObjectRef(ref),
    );
    return peerURLFor(cluster?.spec ?? {}, ref, member);
  }

  async function observe(input: {
    ref: ClusterRef;
    version: string;
    spec?: EtcdClusterSpec;
  }): Promise<ClusterObservation> {
    const { ref } = input;
    const versionKnown = deps.imageFor(input.version) !== undefined;
    // With the spec, each Pod is compared with the template it asks for (rollouts); without, nothing is said of it.
    const image = input.spec ? memberImage(input.spec, deps.imageFor) : undefined;
    // A CA bundle that cannot be read now (a Secret being replaced) leaves Pods unjudged rather than all out of date.
    const tlsHash = input.spec
      ? await memberTLSHash(kube, ref, input.spec).catch(() => undefined)
      : undefined;
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
      memberPods(ref),
      kube.list<
        KubernetesObject & {
          metadata?: { deletionTimestamp?: unknown };
          spec?: { storageClassName?: string };
          status?: { phase?: string };
        }
      >('v1', 'PersistentVolumeClaim', ref.namespace, `${Labels.cluster}=${ref.name}`),
    ]);
    const kube_: Map<string, KubeMemberObservation> = new Map();
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
      const restoreFailure = restoreFailureOf(
        p.status?.initContainerStatuses?.find((c) => c.name === RESTORE_CONTAINER),
      );
      const etcdImage = p.spec?.containers?.find((c) => c.name === 'etcd')?.image;
      const podVersion = etcdVersionOfImage(etcdImage);
      const lastTerminated = etcdStatus?.lastState?.terminated;
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
      });
      entry(name).pod = {
        ...(restoreFailure ? { restoreFailure } : {}),
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
      });
      entry(name).claim = {
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

    const endpoints = [...kube_.values()]
      .filter((k) => k.pod && !k.pod.terminating)
      .map((k) => memberClientURL(ref, k.name));
    let etcdView: ClusterObservation['etcd'];
    let etcdRefused: string | undefined;
    try {
      // Every member is asked at once, each within its own deadline: a dead or frozen member costs one
      // deadline, not one per member asked before the one that answers.
      const calls = endpoints.map((e) => etcd.listMembersWithHeader([e], OBSERVE_STATUS_TIMEOUT_MS * 3));
      const listed = await firstOf(calls).catch(async (err: unknown) => {
        // Members that all refuse the TLS handshake answer nothing, yet run: said as such, never as lost quorum.
        const settled = await Promise.allSettled(calls);
        etcdRefused = tlsRefusal(
          settled.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : [])),
        );
        throw err;
      });
      const members: (EtcdMemberObservation & { leaderId?: string })[] = await Promise.all(
        listed.members.map(async (m) => {
          const name = memberFromPeerURL(ref, m.peerURLs[0] ?? '') ?? m.name;
          const base = { id: m.id, name, isLearner: m.isLearner, started: m.name !== '' };
          try {
            const s = await etcd.status(memberClientURL(ref, name), OBSERVE_STATUS_TIMEOUT_MS);
            return {
              ...base,
              reachable: true,
              raftIndex: s.raftIndex,
              version: s.version,
              leaderId: s.leaderId,
              dbSize: s.dbSize,
              dbSizeInUse: s.dbSizeInUse,
            };
          } catch {
            return { ...base, reachable: false };
          }
        }),
      );
      const leaderId = members.find((m) => m.leaderId && m.leaderId !== '0')?.leaderId;
      // NOSPACE and CORRUPT live in etcd's alarm list, not in any member's status; an unanswered question
      // leaves `alarms` out rather than claiming there are none.
      const alarms = await firstOf(
        endpoints.map((e) => etcd.alarms([e], OBSERVE_STATUS_TIMEOUT_MS * 3)),
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

  return {
    ...createUpgradeActivities({ kube: deps.kube }),
    ...createRolloutActivities({ kube: deps.kube }),
    ...createDefragActivities({ etcd: deps.etcd }),

    /**
     * Reads Pods, claims and etcd's member list and per-member status; never changes anything. With `spec`,
     * also whether each Pod matches the spec's template and each claim's size (rollouts).
     */
    observeCluster: (input: {
      ref: ClusterRef;
      version: string;
      spec?: EtcdClusterSpec;
    }): Promise<ClusterObservation> => observe(input),

    /** The headless peer Service, the voters-only client Service and the PodDisruptionBudget. */
    async ensureClusterObjects(input: { ref: ClusterRef; voters: number }): Promise<void> {
      const { ref, voters } = input;
      await kube.createIfAbsent(peerService(ref));
      await kube.createIfAbsent(clientService(ref));
      const pdb = disruptionBudget(ref, voters);
      if ((await kube.createIfAbsent(pdb)) === 'exists') {
        await kube.mergePatch(
          { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', namespace: ref.namespace, name: ref.name },
          { spec: { minAvailable: pdb.spec.minAvailable } },
        );
      }
    },

    async createMemberClaim(input: {
      ref: ClusterRef;
      spec: EtcdClusterSpec;
      member: string;
    }): Promise<void> {
      if (input.spec.storage.medium === 'Memory') return;
      await kube.createIfAbsent(memberClaim(input));
    },

    /**
     * MemberAddAsLearner with the member's derived peer URL; a retry finds the member it added before.
     * `notReady` says etcd refuses new members for now (a voter joined moments ago): wait and plan again.
     */
    /**
     * MemberAddAsLearner. etcd refuses it until every voter has been connected for its 5 s health interval;
     * with `waitMs` the refusal is asked again every ANSWER_POLL_MS for that long, so the member is added
     * within a poll of etcd accepting it (a workflow timer would overshoot by its own resolution).
     */
    async addLearner(input: {
      ref: ClusterRef;
      member: string;
      waitMs?: number;
    }): Promise<{ id: string } | { notReady: string }> {
      const until = Date.now() + (input.waitMs ?? 0);
      for (;;) {
        heartbeat();
        const endpoints = await endpointsOf(input.ref);
        const added = await etcd.addLearner(endpoints, await peerURLOf(input.ref, input.member));
        if (added !== 'not-ready') return { id: added.member.id };
        if (Date.now() + ANSWER_POLL_MS > until) {
          return { notReady: 'etcd accepts a new member once every voter has been connected for 5 s' };
        }
        await delay(ANSWER_POLL_MS);
      }
    },

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
    }): Promise<'changed' | 'unchanged'> {
      const until = Date.now() + input.maxMs;
      const before = [...input.answering].sort().join(',');
      for (;;) {
        heartbeat();
        const observation = await observe(input);
        const now = (observation.etcd?.members ?? [])
          .filter((m) => m.started && m.reachable)
          .map((m) => m.name)
          .sort()
          .join(',');
        // A member Pod that cannot run (image, crash loop, scheduling, claim) is news too: the wait says why.
        if (now !== before || observation.kube.some((k) => k.problem)) return 'changed';
        if (Date.now() + ANSWER_POLL_MS > until) return 'unchanged';
        await delay(ANSWER_POLL_MS);
      }
    },

    /**
     * Creates the member's Pod. `seed` starts a new cluster of one; `join` and `restart` take the member list
     * etcd reports now (which must already hold this member), so a Pod created after a crash gets the same
     * flags it would have had.
     */
    async createMemberPod(input: {
      ref: ClusterRef;
      spec: EtcdClusterSpec;
      member: string;
      mode: 'seed' | 'join' | 'restart';
      /** Only for `seed` of a cluster restored from a snapshot (restore activities build it). */
      restore?: RestoreInit;
    }): Promise<'created' | 'exists'> {
      const { ref, spec, member, mode } = input;
      const image = memberImage(spec, deps.imageFor);
      if (!image) {
        throw ApplicationFailure.nonRetryable(
          `no etcd image is known for version ${spec.version}`,
          FailureTypes.UnknownVersion,
        );
      }
      const tls = await prepareMemberTLS(kube, ref, spec);
      let cluster = `${member}=${peerURLFor(spec, ref, member)}`;
      let role: MemberRole = 'voter';
      if (mode !== 'seed') {
        let members: Awaited<ReturnType<typeof etcd.listMembers>> | undefined;
        try {
          members = await etcd.listMembers(await endpointsOf(ref));
        } catch (err) {
          // A restart on kept data needs no member list: etcd ignores the --initial-* flags once its data dir
          // exists. That is what resuming a paused cluster (no member runs, so nobody to ask) relies on.
          if (mode === 'join') throw err;
        }
        if (members) {
          const self = members.find((m) => m.peerURLs.includes(peerURLFor(spec, ref, member)));
          if (!self) {
            throw ApplicationFailure.nonRetryable(
              `etcd does not list member ${member}; it must be added before its Pod starts`,
              FailureTypes.MemberMismatch,
            );
          }
          role = self.isLearner ? 'learner' : 'voter';
          cluster = initialCluster(
            members.map((m) => ({
              name: memberFromPeerURL(ref, m.peerURLs[0] ?? '') ?? m.name,
              peerURL: m.peerURLs[0] ?? '',
            })),
          );
        }
      }
      // The template hash (activities/rollout-template.ts) lets later observations tell whether the Pod is out of date;
      // the CA hash is part of the template, so a CA change rolls members (etcd reads its trusted CAs at start only).
      const tlsHash = tls.caHash ? { tlsCAHash: tls.caHash } : {};
      const pod = withRolloutAnnotations(
        memberPod({
          ref,
          spec,
          member,
          role,
          image,
          initialClusterState: mode === 'seed' ? 'new' : 'existing',
          initialCluster: cluster,
          ...(mode === 'seed' && input.restore ? { restore: input.restore } : {}),
          ...tlsHash,
        }),
        { ref, spec, image, ...tlsHash },
      );
      return kube.createIfAbsent(pod as KubernetesObject);
    },

    /** Promotes a learner once etcd agrees it has caught up; `not-caught-up` lets the workflow wait on a timer. */
    async promoteLearner(input: { ref: ClusterRef; member: string; id: string }) {
      const result = await etcd.promote(await endpointsOf(input.ref), input.id);
      if (result === 'promoted') {
        await kube.mergePatch(podRef(input.ref, input.member), {
          metadata: { labels: { [Labels.role]: 'voter' } },
        });
      }
      return result;
    },

    /**
     * Moves leadership from the member at `from` to member `toId`. Safe to repeat: a retry that finds the target
     * leading is done, and one that finds a third member leading moves nothing (the operation plans again).
     */
    async moveLeader(input: {
      ref: ClusterRef;
      from: string;
      toId: string;
    }): Promise<'moved' | 'already-leader' | 'not-leader'> {
      return etcd.moveLeader(memberClientURL(input.ref, input.from), input.toId);
    },

    async removeMember(input: { ref: ClusterRef; id: string }): Promise<'removed' | 'not-found'> {
      return etcd.remove(await endpointsOf(input.ref), input.id);
    },

    async deleteMemberPod(input: { ref: ClusterRef; member: string }): Promise<'deleted' | 'absent'> {
      return kube.deleteIfPresent(podRef(input.ref, input.member));
    },

    async deleteMemberClaim(input: { ref: ClusterRef; member: string }): Promise<'deleted' | 'absent'> {
      return kube.deleteIfPresent(claimRef(input.ref, input.member));
    },

    /**
     * Whether the EtcdCluster this workflow serves is going away: gone, being deleted, or replaced by a new
     * object of the same name. Compensation that needs members skips itself then (the members go with it).
     */
    async clusterGoingAway(input: { ref: ClusterRef }): Promise<boolean> {
      const current = await kube.read<KubernetesObject>(clusterObjectRef(input.ref));
      return (
        !current || current.metadata?.uid !== input.ref.uid || Boolean(current.metadata?.deletionTimestamp)
      );
    },

    /** Writes status through the status subresource; the workflow calls it only when status changed. */
    async writeStatus(input: {
      ref: ClusterRef;
      status: EtcdClusterStatus;
    }): Promise<'written' | 'cluster-gone'> {
      const current = await kube.read<KubernetesObject>(clusterObjectRef(input.ref));
      if (!current || current.metadata?.uid !== input.ref.uid) return 'cluster-gone';
      // A merge patch keeps fields it does not mention: a finished operation must be cleared explicitly.
      const patch = { currentOperation: null, lastOperation: null, ...input.status };
      await kube.mergePatch(clusterObjectRef(input.ref), { status: patch }, 'status');
      deps.onStatusWritten?.((current as { status?: EtcdClusterStatus }).status, input.status);
      return 'written';
    },

    /**
     * Takes one stage of moving cert-manager's TLS changes into the operator's copies (workflows/issued-tls-plan.ts),
     * judged again on the Secrets as they are now; returns the copies it changed (none: already done).
     */
    async stageIssuedTLS(input: {
      ref: ClusterRef;
      spec: EtcdClusterSpec;
      stage: IssuedTLSStage;
    }): Promise<string[]> {
      return stageIssuedTLS(kube, input.ref, input.spec, input.stage);
    },

    /** A Kubernetes Event on the EtcdCluster, so `kubectl describe` tells what the operator did. */
    async recordEvent(input: {
      ref: ClusterRef;
      type: 'Normal' | 'Warning';
      reason: EventReason;
      message: string;
    }) {
      return recordOrDrop(() => deps.events.record(input));
    },
  };
}

export type ClusterActivities = ReturnType<typeof createActivities>;
