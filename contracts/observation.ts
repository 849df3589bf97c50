// What observeCluster reports: Kubernetes' and etcd's views of one cluster, as plain serialisable data.
import type { ClaimStorageObservation, PodTemplateObservation } from './rollout';
import type { MemberProblem } from './member-problems';
import type { IssuedTLSObservation } from './issued-tls';

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';

/** The Pod and claim labelled with one member name, either possibly absent. */
export interface KubeMemberObservation {
  name: string;
  /** What keeps this member from running that the user must act on, in the kubelet's or scheduler's words (activities/member-problems.ts). */
  problem?: MemberProblem;
  /**
   * The initial members its claim (else its Pod) says it was started with, when the cluster's initial members
   * started together (the etcd.conductor.dev/initial-members annotation); absent on a seed started alone or a joiner.
   */
  initialMembers?: string[];
  pod?: {
    phase: PodPhase;
    ready: boolean;
    terminating: boolean;
    uid: string;
    restartCount: number;
    /** e.g. ErrImagePull or CrashLoopBackOff, when the container waits (`problem` says what it means for the user). */
    waitingReason?: string;
    /** The seed's `restore` init container failed on its latest run (agent reason and message). */
    restoreFailure?: { reason: string; message: string; permanent: boolean };
    /** The seed's `restore` init container succeeded: the revision (and, from a continuous backup, the time) it reached. */
    restored?: { revision?: number; time?: string };
    /** The etcd version of the etcd container's image, when its tag names one (what it runs after a restart). */
    version?: string;
    /** Only when observed with a spec: whether the Pod was rendered from the spec's template (rollouts). */
    template?: PodTemplateObservation;
  };
  /**
   * dataLost: the claim carries the etcd.conductor.dev/data-lost annotation, or the member's etcd last
   * exited reporting its raft log lost (it restarted on a wiped claim).
   */
  claim?: {
    terminating: boolean;
    dataLost: boolean;
    /** The etcd member id of the learner whose Pod the operator restarted on this claim (contracts/learner-restart.ts). */
    restartedLearner?: string;
    /** Only when observed with a spec: its size and whether its StorageClass lets it grow (rollouts). */
    storage?: ClaimStorageObservation;
  };
}

/** One member as etcd's member list and the member's own status describe it. */
export interface EtcdMemberObservation {
  /** Decimal uint64 member id. */
  id: string;
  /** The operator's name for it, derived from its peer URL (etcd reports no name until it has started). */
  name: string;
  isLearner: boolean;
  /** etcd lists a name for it: the process has joined at least once. */
  started: boolean;
  reachable: boolean;
  /**
   * A learner etcd lists as started whose client port does not answer while its own readiness checks (a
   * linearizable read among them) pass: it waits on its own publish, which a leader snapshot already held
   * (contracts/learner-restart.ts). Asked only of started learners that do not answer.
   */
  awaitingOwnPublish?: boolean;
  raftIndex?: string;
  /** The newest revision it applied (the last revision the operator saw, for a later lost window). */
  revision?: string;
  version?: string;
  /** Bytes of its database file and of the part in use (Maintenance.Status), when it answered. */
  dbSize?: number;
  dbSizeInUse?: number;
}

/** etcd's view, present only when a linearizable member list succeeded (so a quorum answered). */
export interface EtcdObservation {
  clusterId: string;
  leaderId?: string;
  members: EtcdMemberObservation[];
  /** Alarms etcd has raised (Maintenance.Alarm GET), e.g. NOSPACE; absent when the question was not answered. */
  alarms?: { memberId: string; alarm: string }[];
}

export interface ClusterObservation {
  etcd?: EtcdObservation;
  /**
   * Every member that was asked refused the operator's TLS client certificate (or the operator refused theirs):
   * no answer says nothing about quorum then. The TLS error, in words; absent when any member answered or failed otherwise.
   */
  etcdRefused?: string;
  /** The Secrets cert-manager issues for spec.tls and the operator's copies of them; absent without an issuerRef. */
  issuedTLS?: IssuedTLSObservation;
  kube: KubeMemberObservation[];
  /** Whether an image is known for the requested etcd version. */
  versionKnown: boolean;
}
