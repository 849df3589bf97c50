// The side effects of a recovery from a permanent quorum loss: ask each survivor about itself (no quorum needed),
// find the newest snapshot, replace a survivor's Pod started with --force-new-cluster by a plain one, wait for the
// rebuilt member to answer alone, and use up the user's approval.
//
// Each is idempotent: reads change nothing; the Pod delete is preconditioned on its uid and skips a plain Pod; the
// approval's removal is a merge patch that is a no-op once the annotation is gone.
import type { KubernetesObject } from '@kubernetes/client-node';
import { API_VERSION } from '../crds/etcd-cluster';
import type { EtcdSnapshot } from '../crds/etcd-snapshot';
import { ETCD_SNAPSHOT } from '../crds/etcd-snapshot';
import { Annotations } from '../crds/labels';
import { memberClientURL } from '../crds/names';
import type { ClusterRef } from '../contracts/cluster-ref';
import type { BackupPoint, LossFindings, SurvivorProbe } from '../contracts/quorum-loss';
import type { EtcdAdmin } from './etcd-admin';
import type { KubeObjects } from './kube-objects';
import { clusterObjectRef, memberPods } from './cluster-kube';
import { ANSWER_POLL_MS, delay } from './etcd-membership';
import { heartbeat } from './heartbeat';
import { FORCE_NEW_CLUSTER_ANNOTATION } from './member-manifests';
import { deleteMemberPodUnlessDone } from './member-pod-restart';

/**
 * A survivor that does not answer its status within this long, twice in a row, counts as silent for this look. One
 * slow answer (a name lookup or a busy node) is not news: status would say "does not answer" and take it back at
 * the next look, two writes for nothing.
 */
const PROBE_TIMEOUT_MS = 2000;

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The newest EtcdSnapshot of this cluster that stored an artifact (highest revision, then newest), if any. */
export function newestBackup(
  snapshots: readonly EtcdSnapshot[],
  cluster: string,
  restorableOnly = false,
): BackupPoint | undefined {
  const failedCheck = (s: EtcdSnapshot) =>
    s.status?.conditions?.some((c) => c.type === 'Verified' && c.status === 'False') === true;
  const stored = snapshots.filter(
    (s) =>
      s.spec.clusterRef.name === cluster &&
      s.status?.phase === 'Succeeded' &&
      s.status.artifact &&
      !(restorableOnly && failedCheck(s)),
  );
  const best = [...stored].sort((a, b) => {
    const x = a.status?.artifact;
    const y = b.status?.artifact;
    return (y?.revision ?? 0) - (x?.revision ?? 0) || (y?.takenAt ?? '').localeCompare(x?.takenAt ?? '');
  })[0];
  const artifact = best?.status?.artifact;
  if (!best || !artifact) return undefined;
  const verified = best.status?.conditions?.find((c) => c.type === 'Verified')?.status;
  return {
    snapshot: best.metadata.name,
    revision: artifact.revision,
    takenAt: artifact.takenAt,
    uri: artifact.uri,
    ...(verified ? { verified } : {}),
  };
}

export function createQuorumRecoveryActivities(deps: { kube: KubeObjects; etcd: EtcdAdmin }) {
  const { kube, etcd } = deps;
  return {
    /**
     * What each surviving member says of itself (Maintenance.Status answers without a quorum: its member id, the
     * newest revision it applied, its raft index) and the newest snapshot of the cluster. Only reads.
     */
    async probeQuorumLoss(input: { ref: ClusterRef; survivors: string[] }): Promise<LossFindings> {
      const { ref } = input;
      const survivors = await Promise.all(
        input.survivors.map(async (name): Promise<SurvivorProbe> => {
          try {
            // Unauthenticated: with spec.auth a token needs a quorum, which is what is missing.
            const ask = etcd.statusWithoutAuth?.bind(etcd) ?? etcd.status.bind(etcd);
            const url = memberClientURL(ref, name);
            const s = await ask(url, PROBE_TIMEOUT_MS).catch(() => ask(url, PROBE_TIMEOUT_MS));
            return {
              name,
              answered: true,
              id: s.id,
              revision: s.revision,
              raftIndex: s.raftIndex,
              isLearner: s.isLearner,
            };
          } catch (err) {
            return { name, answered: false, error: errorText(err).slice(0, 200) };
          }
        }),
      );
      let snapshots: EtcdSnapshot[];
      try {
        snapshots = await kube.list<EtcdSnapshot & KubernetesObject>(
          API_VERSION,
          ETCD_SNAPSHOT.kind,
          ref.namespace,
          '',
        );
      } catch (err) {
        // Not "no snapshot": the workflow keeps what an earlier look found (withEarlierAnswers).
        return { survivors, snapshotsUnread: errorText(err).slice(0, 200) };
      }
      const backup = newestBackup(snapshots, ref.name);
      const restorable = newestBackup(snapshots, ref.name, true);
      return { survivors, ...(backup ? { backup } : {}), ...(restorable ? { restorable } : {}) };
    },

    /**
     * Deletes the member's Pod unless it is the one wanted (`forced`: started with --force-new-cluster, or a plain
     * one); `absent` once no Pod is left, so the next Pod can be created. The claim and the data stay.
     */
    async replaceMemberPod(input: {
      ref: ClusterRef;
      member: string;
      want: 'forced' | 'plain';
    }): Promise<'deleted' | 'absent' | 'done'> {
      return deleteMemberPodUnlessDone(kube, input.ref, input.member, (pod) => {
        const forced = pod.metadata?.annotations?.[FORCE_NEW_CLUSTER_ANNOTATION] === 'true';
        return input.want === 'forced' ? forced : !forced;
      });
    },

    /** Member Pods started with --force-new-cluster (what a halted recovery must replace with plain ones). */
    async forcedMembers(input: { ref: ClusterRef }): Promise<string[]> {
      const pods = await memberPods(kube, input.ref);
      return pods
        .filter((p) => p.metadata?.annotations?.[FORCE_NEW_CLUSTER_ANNOTATION] === 'true')
        .map((p) => p.metadata?.name ?? '')
        .filter((n) => n !== '')
        .sort();
    },

    /**
     * Polls the member until it answers a linearizable member list on its own (a cluster of one after
     * --force-new-cluster) for at most `maxMs`: its member list and the revision it serves, or why not yet.
     */
    async awaitSoleMember(input: {
      ref: ClusterRef;
      member: string;
      maxMs: number;
    }): Promise<{ members: string[]; clusterId: string; revision: string } | { waiting: string }> {
      const endpoint = memberClientURL(input.ref, input.member);
      const until = Date.now() + input.maxMs;
      let last: string;
      for (;;) {
        heartbeat();
        try {
          const listed = await etcd.listMembersWithHeader([endpoint], PROBE_TIMEOUT_MS);
          const status = await etcd.status(endpoint, PROBE_TIMEOUT_MS);
          return {
            members: listed.members.map((m) => m.id).sort(),
            clusterId: listed.clusterId,
            revision: status.revision,
          };
        } catch (err) {
          last = errorText(err).slice(0, 200);
        }
        if (Date.now() + ANSWER_POLL_MS * 5 > until) return { waiting: last };
        await delay(ANSWER_POLL_MS * 5);
      }
    },

    /** Whether the EtcdCluster's status says Available=True (the snapshot workflow streams only from such a cluster). */
    async clusterAvailable(input: { ref: ClusterRef }): Promise<boolean> {
      const current = await kube.read<
        KubernetesObject & { status?: { conditions?: { type: string; status: string }[] } }
      >(clusterObjectRef(input.ref));
      return current?.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True') === true;
    },

    /** Removes the approval annotation: an approval is used once, and a later loss needs a new one. */
    async removeRecoveryApproval(input: {
      ref: ClusterRef;
      /** Which approval: approve-recovery (the default) or approve-rollback. */
      approval?: 'recovery' | 'rollback';
    }): Promise<'removed' | 'absent'> {
      const key = input.approval === 'rollback' ? Annotations.approveRollback : Annotations.approveRecovery;
      const current = await kube.read<KubernetesObject>(clusterObjectRef(input.ref));
      if (!current || current.metadata?.uid !== input.ref.uid) return 'absent';
      if (current.metadata?.annotations?.[key] === undefined) return 'absent';
      await kube.mergePatch(clusterObjectRef(input.ref), {
        metadata: { annotations: { [key]: null } },
      });
      return 'removed';
    },
  };
}
