// etcd's membership, changed one idempotent step at a time: add a learner, start its Pod with the member list etcd reports, promote it, move leadership, remove a member.
import { ApplicationFailure } from '@temporalio/common';
import type { KubernetesObject } from '@kubernetes/client-node';
import { FailureTypes } from '../crds/conditions';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { Labels } from '../crds/labels';
import { memberClientURL, memberFromPeerURL } from '../crds/names';
import type { EtcdAdmin } from './etcd-admin';
import { refusedUntilHealthy } from './etcd-admin';
import type { KubeObjects } from './kube-objects';
import type { MemberRole } from './member-manifests';
import { initialCluster, memberPod } from './member-manifests';
import type { RestoreInit } from './restore-manifests';
import { memberImage } from './etcd-images';
import { withRolloutAnnotations } from './rollout-template';
import { peerURLFor } from '../crds/tls-names';
import { prepareMemberTLS } from './etcd-tls';
import type { ClusterRef } from '../contracts/cluster-ref';
import { heartbeat } from './heartbeat';
import { clusterObjectRef, memberPods, ownedByAnother, podRef } from './cluster-kube';
import { callTargets } from './call-targets';
import { syncAdditionalMetadata } from './additional-metadata-sync';

/** How often a step that waits on etcd inside an activity asks again. */
export const ANSWER_POLL_MS = 200;

export const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** How long a removal etcd refuses until its voters are healthy is asked again inside the activity: its 5 s interval. */
export const REMOVE_REFUSED_WAIT_MS = 6000;

/** Client URLs worth asking cluster-wide questions (activities/call-targets.ts). */
export async function clusterCallEndpoints(
  kube: KubeObjects,
  ref: ClusterRef,
  /** Members etcd removed whose Pods are still there (their etcd exits once it learns it): never asked. */
  removed: readonly string[] = [],
): Promise<string[]> {
  const pods = (await memberPods(kube, ref)).map((p) => ({
    name: p.metadata?.name ?? '',
    role: p.metadata?.labels?.[Labels.role],
    going:
      Boolean(p.metadata?.deletionTimestamp) ||
      ownedByAnother(ref, p) ||
      removed.includes(p.metadata?.name ?? ''),
  }));
  return callTargets(pods).map((n) => memberClientURL(ref, n));
}

/** The member's peer URL under the cluster's stored spec.tls (CEL keeps peer TLS fixed for a cluster's life). */
async function peerURLOf(kube: KubeObjects, ref: ClusterRef, member: string): Promise<string> {
  const cluster = await kube.read<KubernetesObject & { spec?: Pick<EtcdClusterSpec, 'tls'> }>(
    clusterObjectRef(ref),
  );
  return peerURLFor(cluster?.spec ?? {}, ref, member);
}

export function createMembershipActivities(deps: {
  kube: KubeObjects;
  etcd: EtcdAdmin;
  imageFor: (version: string) => string | undefined;
}) {
  const { kube, etcd } = deps;
  return {
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
        const endpoints = await clusterCallEndpoints(kube, input.ref);
        const added = await etcd.addLearner(endpoints, await peerURLOf(kube, input.ref, input.member));
        if (added !== 'not-ready') return { id: added.member.id };
        if (Date.now() + ANSWER_POLL_MS > until) {
          return { notReady: 'etcd accepts a new member once every voter has been connected for 5 s' };
        }
        await delay(ANSWER_POLL_MS);
      }
    },

    /**
     * Creates the member's Pod. `seed` starts a new cluster of one, or with `initialMembers` one of a brand-new
     * cluster's initial members, all named in its --initial-cluster; `join` and `restart` take the member list etcd
     * reports now (which must already hold this member), so a Pod created after a crash gets the same flags it would
     * have had.
     */
    async createMemberPod(input: {
      ref: ClusterRef;
      spec: EtcdClusterSpec;
      member: string;
      mode: 'seed' | 'join' | 'restart';
      /** Only for `seed` of a cluster restored from a snapshot (restore activities build it). */
      restore?: RestoreInit;
      /**
       * Only for `seed` of a brand-new cluster whose initial members start together: their names, this one included.
       * The same list for each of them, so etcd derives the same member ids and cluster id on every one.
       */
      initialMembers?: string[];
      /**
       * Only for `restart` in an approved recovery (workflows/operations/recover.ts): etcd starts on its kept data
       * with --force-new-cluster; no member list is asked (no quorum answers one).
       */
      forceNewCluster?: boolean;
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
      const together = mode === 'seed' && input.initialMembers !== undefined;
      if (together && (input.restore || !input.initialMembers?.includes(member))) {
        throw ApplicationFailure.nonRetryable(
          `member ${member} cannot start with initial members ${input.initialMembers?.join(',')}${input.restore ? ' and a restore' : ''}`,
          FailureTypes.MemberMismatch,
        );
      }
      let cluster = together
        ? initialCluster(
            (input.initialMembers ?? []).map((n) => ({ name: n, peerURL: peerURLFor(spec, ref, n) })),
          )
        : `${member}=${peerURLFor(spec, ref, member)}`;
      let role: MemberRole = 'voter';
      if (mode !== 'seed' && !input.forceNewCluster) {
        let members: Awaited<ReturnType<typeof etcd.listMembers>> | undefined;
        try {
          members = await etcd.listMembers(await clusterCallEndpoints(kube, ref));
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
          ...(together ? { initialMembers: input.initialMembers } : {}),
          ...(mode === 'restart' && input.forceNewCluster ? { forceNewCluster: true } : {}),
          ...tlsHash,
        }),
        { ref, spec, image, ...tlsHash },
      );
      const created = await kube.createIfAbsent(pod as KubernetesObject);
      // The Pod carries the spec's additionalMetadata; the cluster's other objects (some made since the last
      // change, e.g. TLS Secrets) are brought to the same spec here, so no path of Pod creation skips them.
      await syncAdditionalMetadata(kube, ref, spec);
      return created;
    },

    /** Promotes a learner once etcd agrees it has caught up; `not-caught-up` lets the workflow wait on a timer. */
    async promoteLearner(input: { ref: ClusterRef; member: string; id: string }) {
      const result = await etcd.promote(await clusterCallEndpoints(kube, input.ref), input.id);
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

    /**
     * MemberRemove. `removed`: members this operation removed before whose Pods it has not deleted yet (they are not
     * asked). etcd's strict reconfiguration check refuses it ("unhealthy cluster") while too few of the voters left
     * would have been connected for its 5 s health interval, as right after a scale-up: the refusal is asked again
     * every ANSWER_POLL_MS for up to REMOVE_REFUSED_WAIT_MS (a Temporal retry came 1 s later, after its back-off), and
     * then passed on for the retry policy.
     */
    async removeMember(input: {
      ref: ClusterRef;
      id: string;
      removed?: string[];
    }): Promise<'removed' | 'not-found'> {
      const until = Date.now() + REMOVE_REFUSED_WAIT_MS;
      for (;;) {
        heartbeat();
        try {
          return await etcd.remove(await clusterCallEndpoints(kube, input.ref, input.removed), input.id);
        } catch (err) {
          if (!refusedUntilHealthy(err) || Date.now() + ANSWER_POLL_MS > until) throw err;
        }
        await delay(ANSWER_POLL_MS);
      }
    },
  };
}
