// An in-memory Kubernetes and etcd for workflow tests: implements the real activity signatures, so a signature change breaks the tests.
//
// The model is small on purpose: members, Pods and claims by member name, one leader, learners that catch up
// after a number of observations. It follows the rules the real activities rely on: a join Pod needs the
// member in etcd's list, membership changes need a quorum, etcd allows one learner, retries find earlier work.
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { AuthActivities } from '../../activities/auth-activities';
import type { ClusterActivities } from '../../activities/cluster-activities';
import type { DefragScheduleActivities } from '../../activities/defrag-schedule-activities';
import type { DowngradeActivities } from '../../activities/downgrade-activities';
import type {
  ClusterObservation,
  EtcdMemberObservation,
  KubeMemberObservation,
} from '../../contracts/observation';
import { FailureTypes } from '../../crds/conditions';
import type { EtcdClusterSpec, EtcdClusterStatus } from '../../crds/etcd-cluster';
import type { AuthObservation } from '../../contracts/auth';
import type { DowngradeObservation } from '../../contracts/downgrade';
import type { BackupPoint, SurvivorProbe } from '../../contracts/quorum-loss';

export interface FakeMember {
  id: string;
  name: string;
  isLearner: boolean;
  /** The member's process has run once (etcd lists its name). */
  started: boolean;
  /** Observations of this learner since its Pod started; it reports the leader's raft index once caught up. */
  observedAsLearner: number;
}

export interface FakePod {
  uid: string;
  mode: 'seed' | 'join' | 'restart';
  /** spec.version when the Pod was created: the version its member runs. */
  version: string;
  /** fakeTemplateHash of the spec the Pod was created from (rollouts). */
  template: string;
  /** JSON of the podLabels/podAnnotations/additionalMetadata applied to it. */
  metadata: string;
  /** A brand-new cluster's initial members it started with together (its annotation). */
  initialMembers?: string[];
}

/** The fake's stand-in for the rendered-Pod hash: the Pod-affecting fields of the spec, without user metadata. */
export function fakeTemplateHash(spec: EtcdClusterSpec): string {
  return JSON.stringify([spec.version, spec.options ?? {}, spec.resources ?? {}, spec.affinity ?? null]);
}
const fakeMetadata = (spec: EtcdClusterSpec) =>
  JSON.stringify([spec.podLabels ?? {}, spec.podAnnotations ?? {}, spec.additionalMetadata ?? {}]);

export interface FakeClaim {
  dataLost: boolean;
  /** spec.resources.requests.storage. */
  size: string;
  /** A brand-new cluster's initial members it was made for (its annotation). */
  initialMembers?: string[];
  /** The learner (member id) restarted once on it (the etcd.conductor.dev/restarted-learner annotation). */
  restartedLearner?: string;
}

export interface FakeClusterOptions {
  /** Observations a started learner needs before its raft index reaches the leader's (default 1). */
  catchUpAfterObservations?: number;
  /** etcd versions that have an image (default: every version). */
  knownVersions?: string[];
  /** MemberAdd calls etcd refuses as "unhealthy cluster" after each promotion (its health interval; default 0). */
  refusedAddsAfterPromotion?: number;
  /** How a pre-upgrade EtcdSnapshot ends (default Succeeded), after one read that finds it Running. */
  preUpgradeSnapshot?: 'Succeeded' | 'Failed';
  /** This member stops answering once a Pod of it is recreated (mode restart): a restart that never comes back. */
  unreachableAfterRestart?: string;
  /** StorageClass of every claim and whether it allows expansion (default: no class at all). */
  storageClass?: { name: string; allowVolumeExpansion: boolean };
  /** Temporal refuses every defrag schedule with this reason (as applyDefragSchedule's InvalidSchedule failure). */
  refuseDefragSchedule?: string;
  /** Keeping a defrag schedule fails for another reason (a permission the operator lacks), without retries. */
  failDefragSchedule?: string;
  /**
   * A Pod a rollout deletes is still seen terminating by the next observation, and goes away while that
   * observation reads: this is called then (the watcher's signal), and awaited before the observation returns.
   */
  rolledPodGoneDuringLook?: () => Promise<void>;
  /** Awaited before each look an operation workflow takes: a test holds an operation's looks while it changes the world. */
  beforeOperationLook?: () => Promise<void>;
  /** The newest EtcdSnapshot of the cluster that the quorum-loss probe finds (default: none). */
  backup?: BackupPoint;
  /**
   * A learner's first Pod (mode join) applies a snapshot that holds its own publish (contracts/learner-restart.ts): it
   * passes its readiness checks and does not answer until its Pod is restarted; with 'always', not even then.
   */
  learnersAwaitOwnPublish?: true | 'always';
}

/** Every activity the workflows call: the cluster's, etcd's downgrade API and spec.auth's. */
export type FakeActivities = ClusterActivities &
  DowngradeActivities &
  AuthActivities &
  DefragScheduleActivities;

export interface ActivityCall {
  name: keyof FakeActivities;
  input: unknown;
}

export type FakeCluster = ReturnType<typeof createFakeCluster>;

const LEADER_RAFT_INDEX = 1000n;

export function createFakeCluster(options: FakeClusterOptions = {}) {
  const members = new Map<string, FakeMember>();
  const pods = new Map<string, FakePod>();
  const claims = new Map<string, FakeClaim>();
  /** Pre-upgrade EtcdSnapshots by name, with how often each was read. */
  const snapshotReads = new Map<string, number>();
  const unreachable = new Set<string>();
  /** Learners waiting on their own publish (learnersAwaitOwnPublish): started, ready, and not answering. */
  const awaitingPublish = new Set<string>();
  const neverCatchUp = new Set<string>();
  let learnersNeverCatchUp = false;
  let addsRefused = 0;
  let memberAdds = 0;
  let clusterId: string | undefined;
  let leaderId: string | undefined;
  let nextId = 0x1000;
  let nextPodUid = 1;
  let clusterObjectGone = false;
  let clusterUid: string | undefined;
  /** Database sizes by member name (absent: the observation reports none); NOSPACE alarms by member id. */
  const dbSizes = new Map<string, { dbSize: number; dbSizeInUse: number }>();
  const alarms: { memberId: string; alarm: string }[] = [];
  /** What a compaction leaves in use on every member (default: what is in use now). */
  let liveBytes: number | undefined;
  /** Each defragmentation with the member that led at that moment. */
  const defrags: { member: string; leader?: string }[] = [];
  const calls: ActivityCall[] = [];
  /** Members whose Pod runs etcd with --force-new-cluster. */
  const forcedPods = new Set<string>();
  /** The revision each member applied (default 100): what status and the quorum-loss probe report. */
  const revisions = new Map<string, number>();
  const revisionOf = (name: string) => revisions.get(name) ?? 100;
  /** Temporal Schedules the defrag schedule keeps: id -> cron. */
  const temporalSchedules = new Map<string, string>();
  const statusWrites: EtcdClusterStatus[] = [];
  const events: { type: string; reason: string; message: string }[] = [];
  const clusterObjects: { peerService: boolean; clientService: boolean; pdbMinAvailable?: number } = {
    peerService: false,
    clientService: false,
  };

  const ordinal = (name: string) => Number(/-(\d+)$/.exec(name)?.[1] ?? Number.MAX_SAFE_INTEGER);
  const byOrdinal = (a: FakeMember, b: FakeMember) => ordinal(a.name) - ordinal(b.name);
  const memberById = (id: string) => [...members.values()].find((m) => m.id === id);
  /** A member answers when its process runs: a Pod exists, and no fault cuts it off. */
  const answers = (m: FakeMember) =>
    m.started && pods.has(m.name) && !unreachable.has(m.name) && !awaitingPublish.has(m.name);
  const voters = () => [...members.values()].filter((m) => !m.isLearner);
  const hasQuorum = () => {
    const v = voters();
    return v.length > 0 && v.filter(answers).length >= Math.floor(v.length / 2) + 1;
  };
  const requireQuorum = (what: string) => {
    // A plain Error: etcd without quorum is transient, the activity's retry policy acts.
    if (!hasQuorum()) throw new Error(`${what}: etcd has no quorum`);
  };
  const currentLeader = (): FakeMember | undefined => {
    if (!hasQuorum()) return undefined;
    const held = leaderId !== undefined ? memberById(leaderId) : undefined;
    if (held && !held.isLearner && answers(held)) return held;
    const next = voters().filter(answers).sort(byOrdinal)[0];
    leaderId = next?.id;
    return next;
  };
  const caughtUp = (m: FakeMember) =>
    !learnersNeverCatchUp &&
    !neverCatchUp.has(m.name) &&
    m.observedAsLearner >= (options.catchUpAfterObservations ?? 1);
  const record = <K extends keyof FakeActivities>(name: K, input: unknown) => {
    calls.push({ name, input });
  };
  const checkRef = (ref: { uid: string }) => {
    clusterUid ??= ref.uid;
  };

  /** etcd's downgrade job: the target it was enabled for (`3.5.0`), until every member runs that minor. */
  let downgradeTarget: string | undefined;
  /** etcd's auth: the root user, its root role, and whether auth is on. */
  const auth = { rootUser: false, rootRole: false, enabled: false };
  /** While set, etcd answers its member list but not its auth status (a call that timed out). */
  let authUnanswered = false;
  const minorOf = (v: string | undefined) => {
    const m = /^(\d+)\.(\d+)\./.exec(v ?? '');
    return m ? { text: `${m[1]}.${m[2]}.0`, rank: Number(m[1]) * 1000 + Number(m[2]) } : undefined;
  };
  /** etcd's cluster version: the downgrade target while one is enabled, else the lowest minor a Pod runs. */
  const clusterVersion = (): string | undefined => {
    if (downgradeTarget) return downgradeTarget;
    const minors = [...pods.values()].map((p) => minorOf(p.version)).filter((m) => m !== undefined);
    return minors.sort((a, b) => a.rank - b.rank)[0]?.text;
  };

  /** Pods a rollout deleted that the next observation still sees terminating (rolledPodGoneDuringLook). */
  const lingering = new Map<string, FakePod>();

  /** What observeCluster sees; `terminating` Pods are still there, going away (rolledPodGoneDuringLook). */
  const observe = (
    input: Parameters<FakeActivities['observeCluster']>[0],
    terminating: ReadonlySet<string>,
  ): ClusterObservation => {
    const names = new Set([...pods.keys(), ...claims.keys()]);
    const kube: KubeMemberObservation[] = [...names].sort().map((name) => {
      const k: KubeMemberObservation = { name };
      const pod = pods.get(name);
      const member = members.get(name);
      if (pod) {
        k.pod = {
          phase: 'Running',
          // A learner fails /readyz by design; a voter is Ready when it answers.
          ready:
            !terminating.has(name) &&
            member !== undefined &&
            !member.isLearner &&
            answers(member) &&
            hasQuorum(),
          terminating: terminating.has(name),
          uid: pod.uid,
          restartCount: 0,
          version: pod.version,
          ...(input.spec
            ? {
                template: {
                  upToDate: pod.template === fakeTemplateHash(input.spec),
                  changed: pod.template === fakeTemplateHash(input.spec) ? [] : ['options'],
                  hash: fakeTemplateHash(input.spec),
                  metadataCurrent: pod.metadata === fakeMetadata(input.spec),
                },
              }
            : {}),
        };
      }
      const claim = claims.get(name);
      const initialMembers = claim?.initialMembers ?? pod?.initialMembers;
      if (initialMembers) k.initialMembers = [...initialMembers];
      const sc = options.storageClass;
      if (claim) {
        k.claim = {
          terminating: false,
          dataLost: claim.dataLost,
          ...(claim.restartedLearner ? { restartedLearner: claim.restartedLearner } : {}),
          ...(input.spec
            ? {
                storage: {
                  requested: claim.size,
                  ...(sc ? { storageClassName: sc.name } : {}),
                  expansion: !sc ? 'NoStorageClass' : sc.allowVolumeExpansion ? 'Allowed' : 'ClassForbids',
                },
              }
            : {}),
        };
      }
      return k;
    });
    const versionKnown = options.knownVersions?.includes(input.version) ?? true;
    const leader = currentLeader();
    if (!leader || clusterId === undefined) return { kube, versionKnown };
    const etcdMembers: EtcdMemberObservation[] = [...members.values()].sort(byOrdinal).map((m) => {
      const reachable = answers(m) && !terminating.has(m.name);
      if (m.isLearner && reachable) m.observedAsLearner += 1;
      const raftIndex = !m.isLearner || caughtUp(m) ? LEADER_RAFT_INDEX : 0n;
      return {
        id: m.id,
        name: m.name,
        isLearner: m.isLearner,
        started: m.started,
        reachable,
        ...(!reachable && m.isLearner && awaitingPublish.has(m.name) && pods.has(m.name)
          ? { awaitingOwnPublish: true }
          : {}),
        ...(reachable
          ? {
              raftIndex: String(raftIndex),
              revision: String(revisionOf(m.name)),
              version: pods.get(m.name)?.version ?? input.version,
            }
          : {}),
        ...(reachable ? (dbSizes.get(m.name) ?? {}) : {}),
      };
    });
    const observation: ClusterObservation = {
      etcd: {
        clusterId,
        leaderId: leader.id,
        members: etcdMembers,
        ...(alarms.length > 0 ? { alarms: structuredClone(alarms) } : {}),
      },
      kube,
      versionKnown,
    };
    return observation;
  };

  const activities: FakeActivities = {
    async observeCluster(input) {
      record('observeCluster', input);
      checkRef(input.ref);
      // Only the operation's own look sees them go (the cluster workflow looks too, at other moments).
      const byOperation = (Context.current().info.workflowExecution?.workflowId ?? '').includes('/op/');
      if (byOperation) await options.beforeOperationLook?.();
      const gone = byOperation ? [...lingering.keys()] : [];
      for (const name of gone) pods.set(name, lingering.get(name) as FakePod);
      for (const name of gone) lingering.delete(name);
      try {
        return observe(input, new Set(gone));
      } finally {
        for (const name of gone) pods.delete(name);
        if (gone.length > 0) await options.rolledPodGoneDuringLook?.();
      }
    },

    // The fake world moves on at each observation, so a wait for an answer is always over at once.
    async awaitAnswerChange(input) {
      record('awaitAnswerChange', input);
      checkRef(input.ref);
      return 'changed';
    },

    async ensureClusterObjects(input) {
      record('ensureClusterObjects', input);
      clusterObjects.peerService = true;
      clusterObjects.clientService = true;
      clusterObjects.pdbMinAvailable = Math.floor(Math.max(input.voters, 1) / 2) + 1;
    },

    async createMemberClaim(input) {
      record('createMemberClaim', input);
      if (input.spec.storage.medium === 'Memory') return;
      if (!claims.has(input.member))
        claims.set(input.member, {
          dataLost: false,
          size: String(input.spec.storage.size),
          ...(input.initialMembers ? { initialMembers: [...input.initialMembers] } : {}),
        });
    },

    async addLearner(input) {
      record('addLearner', input);
      const existing = members.get(input.member);
      if (existing) return { id: existing.id };
      requireQuorum('MemberAddAsLearner');
      if ([...members.values()].some((m) => m.isLearner)) {
        throw new Error('etcdserver: too many learner members in cluster');
      }
      if (addsRefused > 0) {
        addsRefused -= 1;
        return { notReady: 'etcd accepts a new member once every voter has been connected for 5 s' };
      }
      memberAdds += 1;
      const id = String(nextId++);
      members.set(input.member, {
        id,
        name: input.member,
        isLearner: true,
        started: false,
        observedAsLearner: 0,
      });
      return { id };
    },

    async createMemberPod(input) {
      record('createMemberPod', input);
      const { member, mode } = input;
      if (options.knownVersions && !options.knownVersions.includes(input.spec.version)) {
        throw ApplicationFailure.nonRetryable(
          `no etcd image is known for version ${input.spec.version}`,
          FailureTypes.UnknownVersion,
        );
      }
      // A restart on kept data needs no member list (etcd ignores --initial-* then): without a quorum, or with
      // --force-new-cluster, the real activity starts the Pod without asking.
      if (mode === 'join' || (mode === 'restart' && !input.forceNewCluster && hasQuorum())) {
        requireQuorum('MemberList');
        if (!members.has(member)) {
          throw ApplicationFailure.nonRetryable(
            `etcd does not list member ${member}; it must be added before its Pod starts`,
            FailureTypes.MemberMismatch,
          );
        }
      }
      if (pods.has(member)) return 'exists';
      if (input.forceNewCluster) {
        // etcd --force-new-cluster: the member keeps its data and id, every other member is dropped.
        const self = members.get(member);
        if (self) {
          for (const other of [...members.keys()]) if (other !== member) members.delete(other);
          self.isLearner = false;
          leaderId = self.id;
        }
        forcedPods.add(member);
      }
      pods.set(member, {
        uid: `pod-uid-${nextPodUid++}`,
        mode,
        version: input.spec.version,
        template: fakeTemplateHash(input.spec),
        metadata: fakeMetadata(input.spec),
        ...(mode === 'seed' && input.initialMembers ? { initialMembers: [...input.initialMembers] } : {}),
      });
      if (mode === 'restart' && member === options.unreachableAfterRestart) unreachable.add(member);
      if (mode === 'join' && options.learnersAwaitOwnPublish) awaitingPublish.add(member);
      if (mode === 'restart' && options.learnersAwaitOwnPublish !== 'always') awaitingPublish.delete(member);
      if (mode === 'seed' && input.restore) {
        // A seed restored from a backup starts a new cluster of one: no member of an earlier cluster is in it.
        members.clear();
        leaderId = undefined;
      }
      const m = members.get(member);
      if (m) {
        m.started = true;
      } else if (mode === 'seed' && input.initialMembers) {
        // --initial-cluster naming every initial member: each is a voter from the start, and the cluster answers
        // once a quorum of them runs.
        for (const name of input.initialMembers) {
          if (members.has(name)) continue;
          const id = String(nextId++);
          members.set(name, { id, name, isLearner: false, started: name === member, observedAsLearner: 0 });
          clusterId ??= `cluster-${id}`;
        }
      } else if (mode === 'seed') {
        // --initial-cluster-state new on an empty data dir: a cluster of one.
        const id = String(nextId++);
        members.set(member, { id, name: member, isLearner: false, started: true, observedAsLearner: 0 });
        clusterId ??= `cluster-${id}`;
        leaderId = id;
      }
      return 'created';
    },

    async promoteLearner(input) {
      record('promoteLearner', input);
      requireQuorum('MemberPromote');
      const m = memberById(input.id);
      if (!m) return 'not-found';
      if (!m.isLearner) return 'promoted';
      if (!answers(m) || !caughtUp(m)) return 'not-caught-up';
      m.isLearner = false;
      addsRefused = options.refusedAddsAfterPromotion ?? 0;
      return 'promoted';
    },

    async moveLeader(input) {
      record('moveLeader', input);
      const target = memberById(input.toId);
      if (target && leaderId === target.id) return 'already-leader' as const;
      if (!target || target.isLearner || !answers(target))
        throw new Error('etcdserver: bad leader transferee');
      leaderId = target.id;
      return 'moved' as const;
    },

    async removeMember(input) {
      record('removeMember', input);
      const m = memberById(input.id);
      if (!m) return 'not-found';
      requireQuorum('MemberRemove');
      members.delete(m.name);
      if (leaderId === m.id) leaderId = undefined;
      return 'removed';
    },

    async deleteMemberPod(input) {
      record('deleteMemberPod', input);
      forcedPods.delete(input.member);
      return pods.delete(input.member) ? 'deleted' : 'absent';
    },

    async stopLearnerPod(input) {
      record('stopLearnerPod', input);
      const claim = claims.get(input.member);
      if (claim) claim.restartedLearner = input.id;
      const pod = pods.get(input.member);
      if (pod?.uid !== input.podUid) return 'gone';
      pods.delete(input.member);
      return 'stopped';
    },

    async probeQuorumLoss(input) {
      record('probeQuorumLoss', input);
      checkRef(input.ref);
      const survivors = input.survivors.map((name): SurvivorProbe => {
        const m = members.get(name);
        if (!m || !answers(m)) return { name, answered: false, error: 'connection refused' };
        return {
          name,
          answered: true,
          id: m.id,
          revision: String(revisionOf(name)),
          raftIndex: String(LEADER_RAFT_INDEX),
          isLearner: m.isLearner,
        };
      });
      const restorable = options.backup?.verified === 'False' ? undefined : options.backup;
      return {
        survivors,
        ...(options.backup ? { backup: options.backup } : {}),
        ...(restorable ? { restorable } : {}),
      };
    },

    // Deleted at once in the fake: the first call deletes ('deleted'), the next finds it 'absent'.
    async replaceMemberPod(input) {
      record('replaceMemberPod', input);
      if (!pods.has(input.member)) return 'absent';
      if (forcedPods.has(input.member) === (input.want === 'forced')) return 'done';
      pods.delete(input.member);
      forcedPods.delete(input.member);
      return 'deleted';
    },

    async forcedMembers(input) {
      record('forcedMembers', input);
      return [...forcedPods].sort();
    },

    async awaitSoleMember(input) {
      record('awaitSoleMember', input);
      const m = members.get(input.member);
      if (!m || !answers(m) || !hasQuorum()) return { waiting: 'connection refused' };
      return {
        members: [...members.values()].map((x) => x.id).sort(),
        clusterId: clusterId ?? '',
        revision: String(revisionOf(input.member)),
      };
    },

    async removeRecoveryApproval(input) {
      record('removeRecoveryApproval', input);
      return 'removed' as const;
    },

    // What status would say: the cluster answers with a quorum.
    async clusterAvailable(input) {
      record('clusterAvailable', input);
      return hasQuorum();
    },

    async deleteMemberPodForUpgrade(input) {
      record('deleteMemberPodForUpgrade', input);
      const pod = pods.get(input.member);
      if (!pod) return 'absent';
      if (pod.version === input.version) return 'already-upgraded';
      pods.delete(input.member);
      return 'deleted';
    },

    async deleteMemberPodForRollout(input) {
      record('deleteMemberPodForRollout', input);
      const pod = pods.get(input.member);
      if (!pod) return 'absent';
      if (pod.template === input.hash) return 'already-rolled';
      pods.delete(input.member);
      if (options.rolledPodGoneDuringLook) lingering.set(input.member, pod);
      return 'deleted';
    },

    async patchMemberPodMetadata(input) {
      record('patchMemberPodMetadata', input);
      const pod = pods.get(input.member);
      if (!pod) return 'absent';
      if (pod.metadata === fakeMetadata(input.spec)) return 'current';
      pod.metadata = fakeMetadata(input.spec);
      return 'patched';
    },

    async expandMemberClaim(input) {
      record('expandMemberClaim', input);
      const claim = claims.get(input.member);
      if (!claim) return { result: 'absent' };
      if (claim.size === input.size) return { result: 'already' };
      if (!options.storageClass?.allowVolumeExpansion) return { result: 'refused', message: 'no expansion' };
      claim.size = input.size;
      return { result: 'expanded' };
    },

    async createPreUpgradeSnapshot(input) {
      record('createPreUpgradeSnapshot', input);
      if (snapshotReads.has(input.name)) return 'exists';
      snapshotReads.set(input.name, 0);
      return 'created';
    },

    async readPreUpgradeSnapshot(input) {
      record('readPreUpgradeSnapshot', input);
      const reads = snapshotReads.get(input.name);
      if (reads === undefined) return { phase: 'Failed', reason: 'SnapshotDeleted', message: 'gone' };
      snapshotReads.set(input.name, reads + 1);
      if (reads === 0) return { phase: 'Running', message: 'streaming from main-0' };
      return options.preUpgradeSnapshot === 'Failed'
        ? { phase: 'Failed', reason: 'BucketNotFound', message: 'bucket etcd does not exist' }
        : { phase: 'Succeeded', uri: `s3://etcd/${input.name}.db` };
    },

    async deleteMemberClaim(input) {
      record('deleteMemberClaim', input);
      return claims.delete(input.member) ? 'deleted' : 'absent';
    },

    async clusterGoingAway(input) {
      record('clusterGoingAway', input);
      return clusterObjectGone || (clusterUid !== undefined && input.ref.uid !== clusterUid);
    },

    async writeStatus(input) {
      record('writeStatus', input);
      checkRef(input.ref);
      if (clusterObjectGone || input.ref.uid !== clusterUid) return 'cluster-gone';
      statusWrites.push(structuredClone(input.status));
      return 'written';
    },

    async defragmentMember(input) {
      record('defragmentMember', input);
      const m = members.get(input.member);
      if (!m || !answers(m)) throw new Error(`dial ${input.member}: connection refused`);
      const leader = leaderId !== undefined ? memberById(leaderId)?.name : undefined;
      defrags.push({ member: input.member, ...(leader ? { leader } : {}) });
      const before = dbSizes.get(input.member);
      if (!before) return { member: input.member };
      const after = { dbSize: before.dbSizeInUse, dbSizeInUse: before.dbSizeInUse };
      dbSizes.set(input.member, after);
      return { member: input.member, before, after };
    },

    async compactToCurrentRevision(input) {
      record('compactToCurrentRevision', input);
      requireQuorum('Compact');
      if (liveBytes !== undefined) {
        for (const [name, size] of dbSizes) dbSizes.set(name, { ...size, dbSizeInUse: liveBytes });
      }
      return { revision: '1234', alreadyCompacted: false };
    },

    async disarmNoSpace(input) {
      record('disarmNoSpace', input);
      requireQuorum('AlarmDisarm');
      const ids = alarms.filter((a) => a.alarm === 'NOSPACE').map((a) => a.memberId);
      alarms.splice(0, alarms.length, ...alarms.filter((a) => a.alarm !== 'NOSPACE'));
      return ids;
    },

    async stageIssuedTLS(input) {
      record('stageIssuedTLS', input);
      return [];
    },

    async issueAutoTLS(input) {
      record('issueAutoTLS', input);
      return undefined;
    },

    async recordEvent(input) {
      record('recordEvent', input);
      events.push({ type: input.type, reason: input.reason, message: input.message });
      return 'recorded' as const;
    },

    // etcd ends a downgrade by itself once every member runs the target minor; 3.6 members migrate their
    // storage version to the cluster version at once.
    async observeDowngrade(input) {
      record('observeDowngrade', input);
      const target = minorOf(downgradeTarget);
      if (target && [...pods.values()].every((p) => minorOf(p.version)?.rank === target.rank))
        downgradeTarget = undefined;
      const cluster = clusterVersion();
      const storageVersions: Record<string, string> = {};
      for (const name of input.members) {
        const v = minorOf(pods.get(name)?.version);
        if (cluster && v && v.rank >= 3006) storageVersions[name] = cluster;
      }
      const observation: DowngradeObservation = {
        ...(cluster ? { clusterVersion: cluster } : {}),
        storageVersions,
        enabled: downgradeTarget !== undefined,
      };
      return observation;
    },

    async enableDowngrade(input) {
      record('enableDowngrade', input);
      requireQuorum('Downgrade');
      if (downgradeTarget) return 'already-enabled';
      const at = minorOf(clusterVersion());
      if (at && at.rank <= (minorOf(input.targetVersion)?.rank ?? -1)) return 'already-at-target';
      downgradeTarget = input.targetVersion;
      return 'enabled';
    },

    async observeAuth(input) {
      record('observeAuth', input);
      const observation: AuthObservation = !hasQuorum()
        ? { etcd: { state: 'unknown', message: 'no voter answers' } }
        : authUnanswered
          ? { etcd: { state: 'unknown', message: 'etcd did not answer about auth: deadline exceeded' } }
          : auth.enabled
            ? { etcd: { state: 'enabled' } }
            : { etcd: { state: 'disabled', rootUser: auth.rootUser, rootRole: auth.rootRole } };
      return observation;
    },

    async addRootUser(input) {
      record('addRootUser', input);
      requireQuorum('UserAdd');
      if (auth.rootUser) return 'exists';
      auth.rootUser = true;
      return 'added';
    },

    async grantRootRole(input) {
      record('grantRootRole', input);
      requireQuorum('UserGrantRole');
      if (!auth.rootUser) throw new Error('etcdserver: user name not found');
      auth.rootRole = true;
    },

    async enableAuth(input) {
      record('enableAuth', input);
      requireQuorum('AuthEnable');
      if (!auth.rootUser || !auth.rootRole) throw new Error('etcdserver: root user does not have root role');
      auth.enabled = true;
    },
    async rotateRootPassword(input) {
      // The fake keeps no passwords (observeAuth reports no applied copy, so no plan asks for this): it only records.
      record('rotateRootPassword', input);
      requireQuorum('UserChangePassword');
      return 'recorded';
    },
    // The defrag schedule's Temporal Schedules, by id, with the cron each runs (the real ones: e2e).
    async applyDefragSchedule(input) {
      record('applyDefragSchedule', input);
      if (options.refuseDefragSchedule !== undefined) {
        throw ApplicationFailure.nonRetryable(
          `Temporal refused spec.maintenance.defrag.schedule "${input.schedule}": ${options.refuseDefragSchedule}`,
          'InvalidSchedule',
        );
      }
      if (options.failDefragSchedule !== undefined)
        throw ApplicationFailure.nonRetryable(options.failDefragSchedule, 'PermissionDenied');
      const outcome = temporalSchedules.has(input.scheduleId) ? 'updated' : 'created';
      temporalSchedules.set(input.scheduleId, input.schedule);
      return outcome;
    },
    async deleteDefragSchedule(input) {
      record('deleteDefragSchedule', input);
      return temporalSchedules.delete(input.scheduleId) ? 'deleted' : 'absent';
    },
  };

  return {
    activities,
    calls,
    statusWrites,
    events,
    clusterObjects,
    /** The status the EtcdCluster would show now (the last write). */
    get status(): EtcdClusterStatus | undefined {
      return statusWrites[statusWrites.length - 1];
    },
    /** etcd's member list, lowest ordinal first. */
    members: (): FakeMember[] => [...members.values()].sort(byOrdinal).map((m) => ({ ...m })),
    voterNames: (): string[] =>
      voters()
        .sort(byOrdinal)
        .map((m) => m.name),
    learnerNames: (): string[] => [...members.values()].filter((m) => m.isLearner).map((m) => m.name),
    podNames: (): string[] => [...pods.keys()].sort(),
    /** Members whose Pod runs with --force-new-cluster. */
    forcedPodNames: (): string[] => [...forcedPods].sort(),
    claimNames: (): string[] => [...claims.keys()].sort(),
    /** Each claim's requested size, by member name. */
    claimSizes: (): Record<string, string> =>
      Object.fromEntries([...claims.entries()].sort().map(([n, c]) => [n, c.size])),
    /** Each Pod's uid, by member name: a restarted member has a new one. */
    podUids: (): Record<string, string> =>
      Object.fromEntries([...pods.entries()].sort().map(([n, p]) => [n, p.uid])),
    callsOf: (name: keyof FakeActivities) => calls.filter((c) => c.name === name),
    /** Whether etcd has auth on. */
    authEnabled: (): boolean => auth.enabled,
    /** The target of etcd's downgrade job while one is enabled. */
    downgradeEnabledFor: (): string | undefined => downgradeTarget,
    /** MemberAdd calls etcd accepted. */
    memberAdds: (): number => memberAdds,

    /** The defrag Temporal Schedules that exist: id -> cron. */
    temporalSchedules: (): Record<string, string> => Object.fromEntries(temporalSchedules),
    /** Each defragmentation in order, with who led then. */
    defrags: () => defrags.map((d) => ({ ...d })),
    dbSize: (member: string) => dbSizes.get(member),
    /** Sets a member's database size and in-use size as its status reports them. */
    setDbSize(member: string, dbSize: number, dbSizeInUse: number) {
      dbSizes.set(member, { dbSize, dbSizeInUse });
    },
    /** etcd raises NOSPACE for this member; a compaction leaves `live` bytes in use on every member. */
    raiseNoSpace(member: string, live?: number) {
      const m = members.get(member);
      if (m) alarms.push({ memberId: m.id, alarm: 'NOSPACE' });
      if (live !== undefined) liveBytes = live;
    },
    alarms: () => alarms.map((a) => ({ ...a })),

    faults: {
      /** The member's process stops answering (network cut, hung process); its Pod stays. */
      makeUnreachable(member: string) {
        unreachable.add(member);
      },
      makeReachable(member: string) {
        unreachable.delete(member);
      },
      /** The member's Pod and claim are deleted for good (kubectl delete pvc, pod): its data is gone. */
      wipeMember(member: string) {
        pods.delete(member);
        claims.delete(member);
        forcedPods.delete(member);
      },
      /** The revision this member applied (default 100). */
      setRevision(member: string, revision: number) {
        revisions.set(member, revision);
      },
      /** The member's Pod is deleted from outside (node lost, kubectl delete); its claim stays. */
      deletePod(member: string) {
        pods.delete(member);
      },
      /** The member's claim is annotated etcd.conductor.dev/data-lost. */
      markDataLost(member: string) {
        const claim = claims.get(member);
        if (claim) claim.dataLost = true;
      },
      /** This member, or with no name every learner, never reaches the leader's raft index. */
      learnerNeverCatchesUp(member?: string) {
        if (member === undefined) learnersNeverCatchUp = true;
        else neverCatchUp.add(member);
      },
      /** etcd answers its member list but not its auth status, until authAnswers(). */
      authUnanswered() {
        authUnanswered = true;
      },
      authAnswers() {
        authUnanswered = false;
      },
      learnersCatchUp() {
        learnersNeverCatchUp = false;
        neverCatchUp.clear();
      },
      /**
       * What an operator killed in the middle of starting a brand-new cluster's initial members together leaves: every
       * claim with the membership, Pods for `withPods` only (each started), and etcd's list of those members.
       */
      interruptedBootstrap(initialMembers: string[], withPods: string[], spec: EtcdClusterSpec) {
        for (const name of initialMembers) {
          claims.set(name, { dataLost: false, size: String(spec.storage.size), initialMembers });
          const id = String(nextId++);
          members.set(name, { id, name, isLearner: false, started: false, observedAsLearner: 0 });
          clusterId ??= `cluster-${id}`;
        }
        for (const name of withPods) {
          pods.set(name, {
            uid: `pod-uid-${nextPodUid++}`,
            mode: 'seed',
            version: spec.version,
            template: fakeTemplateHash(spec),
            metadata: fakeMetadata(spec),
            initialMembers,
          });
          const m = members.get(name);
          if (m) m.started = true;
        }
      },
      /** The EtcdCluster object is gone: status writes answer cluster-gone. */
      deleteClusterObject() {
        clusterObjectGone = true;
      },
      /**
       * The EtcdCluster is created again under the same name with a new uid, after the garbage collector took
       * everything the old one owned: no member, Pod or claim is left.
       */
      recreateClusterObject(uid: string) {
        clusterObjectGone = false;
        clusterUid = uid;
        members.clear();
        pods.clear();
        claims.clear();
        leaderId = undefined;
        clusterId = undefined;
      },
    },
  };
}
