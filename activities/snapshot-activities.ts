// The snapshot workflow's side effects, one idempotent effect per activity: check, pick a source, run the agent's Job, read its result, write status.
//
// Invariant: no activity input, result or error carries a credential; the Secret is only checked for its
// keys here, and reaches the agent through the Job's secretKeyRefs.
import type { KubernetesObject } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { FailureTypes } from '../crds/conditions';
import type { EtcdClusterSpec, EtcdClusterStatus } from '../crds/etcd-cluster';
import { tlsSecretNames } from '../crds/tls-names';
import { API_VERSION, ETCD_CLUSTER } from '../crds/etcd-cluster';
import type { EtcdSnapshotSpec, EtcdSnapshotStatus, SnapshotArtifact } from '../crds/etcd-snapshot';
import { ETCD_SNAPSHOT } from '../crds/etcd-snapshot';
import { memberClientURL } from '../crds/names';
import type { EtcdAdmin } from './etcd-admin';
import type { KubeObjects } from './kube-objects';
import type { AgentResult } from '../contracts/agent-result';
import { parseAgentResult } from '../contracts/agent-result';
import type { SnapshotEventRecorder } from './snapshot-events';
import type { SnapshotRef } from './snapshot-manifests';
import { AGENT_CONTAINER, jobPlacement, snapshotJob, snapshotJobName } from './snapshot-manifests';
import { pickSnapshotSource } from './snapshot-source';
import { verifyJob, verifyJobName } from './snapshot-verify-manifests';
import type { RestoreActivities } from './restore-activities';
import { createRestoreActivities } from './restore-activities';
import { recordOrDrop } from './event-recorder';
import type { SnapshotJobObservation } from '../contracts/snapshot';
import type { EventReason } from '../contracts/event-reasons';

export interface SnapshotActivityDeps {
  kube: KubeObjects;
  etcd: EtcdAdmin;
  events: SnapshotEventRecorder;
  /** The project's image, which runs the agent. */
  agentImage: string;
}

/** What the checks before a Job found: the cluster's uid and the member to stream from, or why none answers. */
export interface SnapshotPreparation {
  clusterUid: string;
  /** Client URL of the chosen member; absent while no voter answers (not ready: the workflow waits). */
  endpoint?: string;
  member?: string;
  why: string;
}

interface JobLike extends KubernetesObject {
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}
interface PodLike extends KubernetesObject {
  status?: {
    containerStatuses?: { name: string; state?: { terminated?: { exitCode?: number; message?: string } } }[];
  };
}

const REQUIRED_SECRET_KEYS = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'];
/** hashkv reads the member's whole key history: more than a status call, bounded all the same. */
const SOURCE_HASH_TIMEOUT_MS = 20_000;
const MEMBER_STATUS_TIMEOUT_MS = 2000;

const snapshotObjectRef = (s: SnapshotRef) => ({
  apiVersion: API_VERSION,
  kind: ETCD_SNAPSHOT.kind,
  namespace: s.namespace,
  name: s.name,
  plural: ETCD_SNAPSHOT.plural,
});
const jobRef = (s: SnapshotRef, name: string) => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  namespace: s.namespace,
  name,
});

/**
 * The merge patch that makes the object's status `next`. A JSON merge patch keeps fields it does not name, so the
 * figures of an earlier check that this one did not measure (a re-check that found the object missing) are nulled,
 * not left beside the new verdict.
 */
export function snapshotStatusPatch(
  current: EtcdSnapshotStatus | undefined,
  next: EtcdSnapshotStatus,
): { status: Record<string, unknown> } {
  const before = current?.verification;
  const after = next.verification;
  if (!before || !after) return { status: { ...next } };
  const cleared = Object.fromEntries(
    Object.keys(before)
      .filter((k) => !(k in after))
      .map((k) => [k, null]),
  );
  return { status: { ...next, verification: { ...cleared, ...after } } };
}

/** The agent's result in a terminated container's message; undefined when there is none or it is garbled. */
export function agentResultOf(message: string | undefined): AgentResult | undefined {
  if (!message?.trim()) return undefined;
  try {
    return parseAgentResult(message);
  } catch {
    return undefined;
  }
}

export function createSnapshotActivities(deps: SnapshotActivityDeps) {
  const { kube, etcd } = deps;
  /** The EtcdCluster a snapshot names (undefined once deleted): its status for the checks, its spec for placement. */
  const readCluster = (snapshot: SnapshotRef, spec: EtcdSnapshotSpec) =>
    kube.read<KubernetesObject & { spec?: Partial<EtcdClusterSpec>; status?: EtcdClusterStatus }>({
      apiVersion: API_VERSION,
      kind: ETCD_CLUSTER.kind,
      namespace: snapshot.namespace,
      name: spec.clusterRef.name,
    });

  return {
    // Restore's preparation needs the same image and objects; served from here so the worker registers it with these.
    ...createRestoreActivities({ kube, agentImage: deps.agentImage }),

    /**
     * The checks before any Job: the cluster exists and is Available, the destination claim or the
     * credentials Secret exists; then asks each voter for its status and picks a healthy follower.
     */
    async prepareSnapshot(input: {
      snapshot: SnapshotRef;
      spec: EtcdSnapshotSpec;
    }): Promise<SnapshotPreparation> {
      const { snapshot, spec } = input;
      const ns = snapshot.namespace;
      const clusterName = spec.clusterRef.name;
      const cluster = await readCluster(snapshot, spec);
      if (!cluster) {
        throw ApplicationFailure.nonRetryable(
          `EtcdCluster ${ns}/${clusterName} does not exist`,
          FailureTypes.ClusterNotAvailable,
        );
      }
      const available = cluster.status?.conditions?.find((c) => c.type === 'Available');
      if (available?.status !== 'True') {
        throw ApplicationFailure.nonRetryable(
          `EtcdCluster ${ns}/${clusterName} is not Available (${available ? `${available.reason}: ${available.message}` : 'no status yet'})`,
          FailureTypes.ClusterNotAvailable,
        );
      }
      const { pvc, s3 } = spec.destination;
      if (pvc) {
        const claim = await kube.read({
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          namespace: ns,
          name: pvc.claimName,
        });
        if (!claim) {
          throw ApplicationFailure.nonRetryable(
            `the destination PersistentVolumeClaim ${ns}/${pvc.claimName} does not exist`,
            FailureTypes.DestinationNotFound,
          );
        }
      }
      if (s3) {
        const secretName = s3.credentialsSecretRef.name;
        const secret = await kube.read<KubernetesObject & { data?: Record<string, string> }>({
          apiVersion: 'v1',
          kind: 'Secret',
          namespace: ns,
          name: secretName,
        });
        // Only the key names are looked at; the values never leave this function.
        const missing = REQUIRED_SECRET_KEYS.filter((k) => !secret?.data?.[k]);
        if (!secret || missing.length > 0) {
          throw ApplicationFailure.nonRetryable(
            secret
              ? `the Secret ${ns}/${secretName} lacks ${missing.join(' and ')}`
              : `the credentials Secret ${ns}/${secretName} does not exist`,
            FailureTypes.CredentialsNotFound,
          );
        }
      }

      const ref = { namespace: ns, name: clusterName };
      const voters = (cluster.status?.members ?? []).filter((m) => m.role === 'voter');
      const candidates = await Promise.all(
        voters.map(async (m) => {
          try {
            const s = await etcd.status(memberClientURL(ref, m.name), MEMBER_STATUS_TIMEOUT_MS);
            return {
              name: m.name,
              isLearner: s.isLearner,
              reachable: true,
              leader: s.id === s.leaderId,
              raftIndex: BigInt(s.raftIndex || '0'),
            };
          } catch {
            return { name: m.name, isLearner: false, reachable: false, leader: false };
          }
        }),
      );
      const choice = pickSnapshotSource(candidates);
      return {
        clusterUid: cluster.metadata?.uid ?? '',
        ...(choice.member ? { member: choice.member, endpoint: memberClientURL(ref, choice.member) } : {}),
        why: choice.member ? `${choice.member}, ${choice.why}` : choice.why,
      };
    },

    /** Creates the Job of one attempt; a retry finds the Job it created before by its name. */
    async createSnapshotJob(input: {
      snapshot: SnapshotRef;
      spec: EtcdSnapshotSpec;
      attempt: number;
      endpoint: string;
    }): Promise<{ jobName: string; created: boolean }> {
      // With client TLS the agent presents the operator's client certificate, mounted from its Secret; with
      // spec.auth its env refers to the root Secret (by name only).
      const cluster = await readCluster(input.snapshot, input.spec);
      const clientTLSSecret = tlsSecretNames(cluster?.spec ?? {}, input.spec.clusterRef.name).operator;
      const authSecretName = cluster?.spec?.auth?.rootSecretRef?.name;
      const job = snapshotJob({
        snapshot: input.snapshot,
        attempt: input.attempt,
        image: deps.agentImage,
        endpoint: input.endpoint,
        destination: input.spec.destination,
        cluster: input.spec.clusterRef.name,
        ...(clientTLSSecret ? { clientTLSSecret } : {}),
        ...(authSecretName ? { authSecretName } : {}),
        placement: jobPlacement(cluster?.spec, input.spec.jobPlacement),
        ...(cluster?.spec ? { metadata: cluster.spec } : {}),
      });
      const outcome = await kube.createIfAbsent(job as KubernetesObject);
      return { jobName: job.metadata.name, created: outcome === 'created' };
    },

    /** Reads one attempt's Job and, once it finished, the agent's result from its newest Pod's termination message. */
    async readSnapshotJob(input: {
      snapshot: SnapshotRef;
      jobName: string;
    }): Promise<SnapshotJobObservation> {
      const job = await kube.read<JobLike>(jobRef(input.snapshot, input.jobName));
      if (!job) return { state: 'absent' };
      const done = job.status?.conditions?.find(
        (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
      );
      if (!done) return { state: 'running' };
      const pods = await kube.list<PodLike>(
        'v1',
        'Pod',
        input.snapshot.namespace,
        `job-name=${input.jobName}`,
      );
      const newestFirst = [...pods].sort((a, b) =>
        String(b.metadata?.creationTimestamp ?? '').localeCompare(
          String(a.metadata?.creationTimestamp ?? ''),
        ),
      );
      let result: AgentResult | undefined;
      for (const pod of newestFirst) {
        const agent = pod.status?.containerStatuses?.find((c) => c.name === AGENT_CONTAINER);
        result = agentResultOf(agent?.state?.terminated?.message);
        if (result) break;
      }
      return {
        state: 'finished',
        succeeded: done.type === 'Complete',
        ...(result ? { result } : {}),
        jobMessage: [done.reason, done.message].filter(Boolean).join(': '),
      };
    },

    /**
     * The source member's hashkv at the snapshot's revision, asked right after the upload so a verification can
     * compare. Never fails the snapshot: an answer it cannot get is returned as the reason why.
     */
    async readSourceHash(input: {
      endpoint: string;
      member: string;
      revision: number;
    }): Promise<{ hash: number; compactRevision: number } | { why: string }> {
      try {
        return await etcd.hashKV(input.endpoint, input.revision, SOURCE_HASH_TIMEOUT_MS);
      } catch (e) {
        const text = e instanceof Error ? e.message.split('\n')[0] : String(e);
        return { why: `hashkv of member ${input.member} at revision ${input.revision} failed: ${text}` };
      }
    },

    /** Creates the verification Job of one run; a retry (or a restarted worker) finds the Job it created by its name. */
    async createVerifyJob(input: {
      snapshot: SnapshotRef;
      spec: EtcdSnapshotSpec;
      artifact: SnapshotArtifact;
      run: number;
    }): Promise<{ jobName: string; created: boolean }> {
      // Placed as the snapshot Job is; a cluster deleted since leaves the EtcdSnapshot's own jobPlacement.
      const cluster = await readCluster(input.snapshot, input.spec);
      const job = verifyJob({
        snapshot: input.snapshot,
        spec: input.spec,
        artifact: input.artifact,
        hashRevision: input.artifact.revision,
        run: input.run,
        image: deps.agentImage,
        placement: jobPlacement(cluster?.spec, input.spec.jobPlacement),
        ...(cluster?.spec ? { metadata: cluster.spec } : {}),
      });
      const outcome = await kube.createIfAbsent(job as KubernetesObject);
      return { jobName: job.metadata.name, created: outcome === 'created' };
    },

    /** Deletes one verification run's Job and its Pods; a Job already gone counts as deleted. */
    async deleteVerifyJob(input: { snapshot: SnapshotRef; run: number }): Promise<'deleted' | 'absent'> {
      return kube.deleteIfPresent(jobRef(input.snapshot, verifyJobName(input.snapshot.name, input.run)));
    },

    /** Deletes one attempt's Job and its Pods; a Job already gone counts as deleted. */
    async deleteSnapshotJob(input: {
      snapshot: SnapshotRef;
      attempt: number;
    }): Promise<'deleted' | 'absent'> {
      return kube.deleteIfPresent(
        jobRef(input.snapshot, snapshotJobName(input.snapshot.name, input.attempt)),
      );
    },

    /** Writes the whole status through the status subresource, only while the object is the one the workflow serves. */
    async writeSnapshotStatus(input: {
      snapshot: SnapshotRef;
      status: EtcdSnapshotStatus;
    }): Promise<'written' | 'snapshot-gone'> {
      const current = await kube.read<KubernetesObject & { status?: EtcdSnapshotStatus }>(
        snapshotObjectRef(input.snapshot),
      );
      if (!current || current.metadata?.uid !== input.snapshot.uid) return 'snapshot-gone';
      await kube.mergePatch(
        snapshotObjectRef(input.snapshot),
        snapshotStatusPatch(current.status, input.status),
        'status',
      );
      return 'written';
    },

    /** An Event on the EtcdSnapshot; one the apiserver refuses is dropped rather than blocking the snapshot. */
    async recordSnapshotEvent(input: {
      snapshot: SnapshotRef;
      type: 'Normal' | 'Warning';
      reason: EventReason;
      message: string;
    }): Promise<'recorded' | 'dropped'> {
      return recordOrDrop(() =>
        deps.events.record({
          involved: { kind: ETCD_SNAPSHOT.kind, ...input.snapshot },
          type: input.type,
          reason: input.reason,
          message: input.message,
        }),
      );
    },
  };
}

/** The snapshot workflow's activities; the restore ones served beside them are typed by RestoreActivities. */
export type SnapshotActivities = Omit<ReturnType<typeof createSnapshotActivities>, keyof RestoreActivities>;
