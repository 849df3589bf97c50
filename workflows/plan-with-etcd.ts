// The planner's chain when etcd answered a linearizable member list (so quorum existed a moment ago): every
// membership change, in the order that keeps quorum (workflows/plan.ts runs it; the rules are cluster-state.ts).
import { Reasons } from '../crds/conditions';
import { planAuth, planAuthRotation } from './auth-plan';
import type { ClusterMember as Member, QuorumEvidence } from './cluster-state';
import {
  canRemove,
  clusterMembers,
  nextOneAtATime,
  learnerCaughtUp,
  nextMemberName,
  ordinalFor,
  quorumEvidence,
  servingView,
  slowVotersMessage,
} from './cluster-state';
import { defragTrigger } from './defrag-plan';
import { learnerToRestart } from '../contracts/learner-restart';
import { planDowngradeGate } from './downgrade-plan';
import type { Check } from './plan-checks';
import { replaceStuckPod, upgradeRefusal, wait } from './plan-checks';
import type { Desired, EtcdView, Observed, RemoveReason, Step } from './plan-types';
import { planRollout, planStorageGrowth } from './rollout-plan';
import { planUpgrade } from './upgrade-plan';

export interface WithEtcd {
  desired: Desired;
  observed: Observed;
  etcd: EtcdView;
  /** Membership target: replicas, but at least one, since pausing shrinks to one member and then stops it. */
  target: number;
  members: Member[];
  voters: Member[];
  learners: Member[];
  leader: Member | undefined;
  /** Whether a quorum holds and what shows it (cluster-state.ts quorumEvidence, the rule status uses too). */
  quorumNow: QuorumEvidence;
}

const byOrdinal = <T extends { ordinal: number }>(a: T, b: T) => a.ordinal - b.ordinal;
const newestFirst = <T extends { ordinal: number }>(a: T, b: T) => b.ordinal - a.ordinal;

function removeOrMoveLeader(c: WithEtcd, candidates: Member[], reason: RemoveReason): Step | undefined {
  const removable = candidates.filter((m) => canRemove(c.members, m.id));
  // Removing the leader forces an election and, in a 2-member cluster, may strand the follower; MoveLeader first
  // so the removal is an ordinary follower removal, and with no healthy voter to take over, no removal at all.
  const step = nextOneAtATime({
    pending: removable,
    leaderId: c.etcd.leaderId,
    successors: c.voters.filter((m) => m.healthy),
    leaderWithoutSuccessor: 'hold',
  });
  if (!step) return undefined;
  if (step.kind === 'MoveLeader') {
    return {
      kind: 'MoveLeader',
      from: { name: step.from.name, id: step.from.id },
      to: { name: step.to.name, id: step.to.id },
      reason,
    };
  }
  return { kind: 'RemoveMember', member: step.member.name, id: step.member.id, reason };
}

export const withEtcdChain: Check<WithEtcd>[] = [
  {
    // First: deleting a Pod whose etcd never started changes no vote, and its fresh Pod may be what quorum needs.
    name: 'replaceStuckPods',
    run: (c) => replaceStuckPod(c.desired, c.observed.kube),
  },
  {
    // Fewer than a quorum of voters known to vote: no membership change is safe (and without quorum none could
    // commit); the only safe help is to run Pods whose data survives, else to wait for the voters.
    name: 'restoreQuorumFirst',
    run: (c) => {
      const q = c.quorumNow;
      if (q.proof === 'votes') return undefined;
      const missing = c.members.filter((m) => m.state === 'podMissing').sort(byOrdinal);
      const voter = missing.find((m) => !m.isLearner) ?? missing[0];
      if (voter) return { kind: 'RecreatePod', member: voter.name, id: voter.id };
      if (c.members.some((m) => m.state === 'terminating')) {
        return wait(Reasons.WaitingForDeletion, 'a member Pod is being deleted; quorum needs it back');
      }
      // The member list answered, so quorum holds and the voters are only slow to answer their status: said as
      // what it is, and waited on as members that do not answer yet (operation-workflow.ts awaitsAnAnswer).
      if (q.holds && c.desired.quorumByMemberList) {
        return wait(
          Reasons.MemberNotReady,
          `${slowVotersMessage(q)}; membership changes wait for the others`,
        );
      }
      return wait(
        Reasons.QuorumLost,
        `${q.voting} of ${q.voters} voters answer, ${q.needed} needed; no membership change can commit`,
      );
    },
  },
  {
    // Remove-before-add when replacing: a fresh member under the old id would claim raft state it lacks.
    // Learners first (removing one never touches quorum), then zombies, then members whose data is lost.
    name: 'removeLostMembers',
    run: (c) => {
      const rank = (m: Member) => (m.isLearner ? 0 : m.state === 'zombie' ? 1 : 2);
      const gone = c.members
        .filter((m) => m.state === 'lost' || m.state === 'zombie')
        .sort((a, b) => rank(a) - rank(b) || a.ordinal - b.ordinal);
      const first = gone[0];
      if (!first) return undefined;
      const reason: RemoveReason = first.state === 'lost' ? 'DataLost' : 'Zombie';
      return (
        removeOrMoveLeader(c, [first], reason) ??
        wait(Reasons.QuorumAtRisk, `${first.name} must be removed, but removing it now would cost quorum`)
      );
    },
  },
  {
    // Scale down prefers what costs least: a learner, then a member that is not healthy, then the newest.
    name: 'scaleDown',
    run: (c) => {
      if (c.members.length <= c.target) return undefined;
      const rank = (m: Member) => (m.isLearner ? 0 : m.healthy ? 2 : 1);
      const candidates = [...c.members].sort((a, b) => rank(a) - rank(b) || newestFirst(a, b));
      return (
        removeOrMoveLeader(c, candidates, 'ScaleDown') ??
        wait(
          Reasons.QuorumAtRisk,
          `no member can be removed without costing quorum (${c.members.length} -> ${c.target})`,
        )
      );
    },
  },
  {
    name: 'recreateMissingPods',
    run: (c) => {
      const m = c.members.filter((x) => x.state === 'podMissing').sort(byOrdinal)[0];
      return m && { kind: 'RecreatePod', member: m.name, id: m.id };
    },
  },
  {
    name: 'waitForTerminatingPods',
    run: (c) => {
      const m = c.members.find((x) => x.state === 'terminating');
      return m && wait(Reasons.WaitingForDeletion, `the Pod of ${m.name} is being deleted`);
    },
  },
  {
    // Only with quorum is the member list linearizable, so a name missing from it really is not a member
    // (a lagging member's view could miss a learner added a moment ago). Objects already being deleted
    // are left alone; their names stay taken until they are gone.
    name: 'deleteOrphans',
    run: (c) => {
      const names = new Set(c.members.map((m) => m.name));
      const orphan = c.observed.kube
        .filter((k) => !names.has(k.name))
        .filter((k) => (k.pod && !k.pod.terminating) || (k.claim && !k.claim.terminating))
        .sort((a, b) => ordinalFor(c.desired.cluster, a.name) - ordinalFor(c.desired.cluster, b.name))[0];
      return orphan && { kind: 'DeleteOrphan', member: orphan.name };
    },
  },
  {
    // A learner is promoted before anything else is added; etcd allows one learner and so do we.
    name: 'promoteLearner',
    run: (c) => {
      const learner = [...c.learners].sort(byOrdinal)[0];
      if (!learner) return undefined;
      if (learner.healthy && learnerCaughtUp(learner.raftIndex, c.leader?.raftIndex)) {
        return { kind: 'PromoteLearner', member: learner.name, id: learner.id };
      }
      // etcd would keep it from answering until its request timeout: restarted, it answers at once.
      const restart = learnerToRestart(c.observed);
      if (restart?.id === learner.id) return { kind: 'RestartLearner', ...restart };
      return wait(
        Reasons.LearnerCatchingUp,
        !learner.started
          ? `learner ${learner.name} is starting`
          : learner.reachable
            ? `learner ${learner.name} at raft index ${learner.raftIndex ?? '?'} of ${c.leader?.raftIndex ?? '?'}`
            : // No index to show, and the leader's own grows: a message that changed with it would rewrite status.
              `learner ${learner.name} does not answer`,
      );
    },
  },
  {
    // Pausing stops the one member left; its claim keeps the data and the cluster id for Resume.
    name: 'pauseLastMember',
    run: (c) => {
      if (c.desired.replicas !== 0 || c.members.length !== 1) return undefined;
      const last = c.members[0];
      return last && { kind: 'Pause', member: last.name };
    },
  },
  {
    // A downgrade below the cluster version restarts nothing until etcd's downgrade is enabled and etcd
    // has moved its cluster and storage versions; then upgradeMembers rolls (workflows/downgrade-plan.ts).
    name: 'downgradeGate',
    run: (c) => {
      if (c.desired.version === undefined) return undefined;
      return planDowngradeGate({
        target: c.desired.version,
        members: upgradeViews(c),
        ...(c.observed.downgrade ? { observation: c.observed.downgrade } : {}),
      });
    },
  },
  {
    // Before scale up, so members added later start on the new version; after learners and pause, which
    // must finish first. Its own waits say which member is restarting (workflows/upgrade-plan.ts).
    name: 'upgradeMembers',
    run: (c) => {
      if (c.desired.version === undefined) return undefined;
      return planUpgrade({
        target: c.desired.version,
        ...(c.etcd.leaderId !== undefined ? { leaderId: c.etcd.leaderId } : {}),
        members: upgradeViews(c),
      });
    },
  },
  {
    // After upgradeMembers: a version change also changes the image and so every Pod's template; the upgrade
    // alone rolls it (its Pods come back on the new template), so nothing is restarted twice. Its own waits
    // say which member is restarting (workflows/rollout-plan.ts).
    name: 'rolloutMembers',
    run: (c) => {
      // A Pod deleted now could not come back: no image, or the path rules refuse the version (plan() holds starts).
      if (!c.desired.versionKnown || upgradeRefusal(c.desired, c.observed) !== undefined) return undefined;
      const kube = new Map(c.observed.kube.map((k) => [k.name, k]));
      return planRollout({
        ...(c.etcd.leaderId !== undefined ? { leaderId: c.etcd.leaderId } : {}),
        belowSize: c.members.length < c.target,
        members: c.members.map((m) => {
          const pod = kube.get(m.name)?.pod;
          return {
            ...servingView(m, pod),
            ...(m.raftIndex !== undefined ? { raftIndex: m.raftIndex } : {}),
            ...(pod?.template ? { template: pod.template } : {}),
          };
        }),
      });
    },
  },
  {
    // "Add a single member, verify it starts correctly, and only then add the next" (etcd runtime reconfiguration guide).
    name: 'waitForUnreadyMembers',
    run: (c) => {
      const m = c.members.filter((x) => !x.healthy).sort(byOrdinal)[0];
      return m && wait(Reasons.MemberNotReady, `${m.name} does not answer yet`);
    },
  },
  {
    // Once every member answers and before any is added: a bootstrapping cluster turns auth on while it is
    // one seed, so members join a cluster that already has it.
    name: 'enableAuth',
    run: (c) => planAuth(c.desired.auth === true, c.observed.auth, c.desired.authUnknownWaits === true),
  },
  {
    name: 'scaleUp',
    run: (c) => {
      if (c.members.length >= c.target) return undefined;
      const used = [...c.members.map((m) => m.name), ...c.observed.kube.map((k) => k.name)];
      return { kind: 'AddMember', member: nextMemberName(c.desired.cluster, used) };
    },
  },
  {
    // Once membership is settled: a changed root password waits for a running upgrade or rollout, and meanwhile
    // the operator keeps using the applied copy, which etcd still accepts.
    name: 'rotateAuth',
    run: (c) => planAuthRotation(c.desired.auth === true, c.observed.auth),
  },
  {
    // Last before converged: a claim that cannot grow must not hold anything else back, and its refusal
    // (a None with its own reason) is what status shows once everything else is done.
    name: 'growStorage',
    run: (c) => {
      if (c.desired.storageSize === undefined || c.desired.medium === 'Memory') return undefined;
      const kube = new Map(c.observed.kube.map((k) => [k.name, k]));
      const decision = planStorageGrowth({
        size: c.desired.storageSize,
        claims: c.members.map((m) => {
          const storage = kube.get(m.name)?.claim?.storage;
          return { member: m.name, ordinal: m.ordinal, ...(storage ? { storage } : {}) };
        }),
      });
      return decision?.kind === 'None' ? { ...decision, converged: convergedMessage(c) } : decision;
    },
  },
  {
    // Last before converged: only a cluster whose membership and versions are settled and whose members
    // all answer is defragmented (workflows/defrag-plan.ts).
    name: 'maintenance',
    run: (c) => {
      const kube = new Map(c.observed.kube.map((k) => [k.name, k]));
      return defragTrigger({
        alarms: c.etcd.alarms ?? [],
        config: c.desired.defrag,
        members: c.members.map((m) => ({
          ...servingView(m, kube.get(m.name)?.pod),
          ...(m.dbSize !== undefined ? { dbSize: m.dbSize } : {}),
          ...(m.dbSizeInUse !== undefined ? { dbSizeInUse: m.dbSizeInUse } : {}),
        })),
      });
    },
  },
  {
    name: 'converged',
    run: (c) => ({
      kind: 'None',
      reason: Reasons.Converged,
      message: convergedMessage(c),
    }),
  },
];

function convergedMessage(c: WithEtcd): string {
  return `${c.voters.length} of ${c.desired.replicas} members healthy`;
}

/** Each member as the upgrade and downgrade planners see it. */
function upgradeViews(c: WithEtcd) {
  const kube = new Map(c.observed.kube.map((k) => [k.name, k]));
  return c.members.map((m) => {
    const pod = kube.get(m.name)?.pod;
    return {
      ...servingView(m, pod),
      ...(m.version !== undefined ? { version: m.version } : {}),
      ...(pod?.version !== undefined ? { podVersion: pod.version } : {}),
      ...(m.raftIndex !== undefined ? { raftIndex: m.raftIndex } : {}),
    };
  });
}

export function withEtcdContext(desired: Desired, observed: Observed, etcd: EtcdView): WithEtcd {
  // Healthy means "votes now" (cluster-state.ts votesNow).
  const members: Member[] = clusterMembers(etcd, observed.kube, desired.cluster, desired.medium);
  const voters = members.filter((m) => !m.isLearner);
  return {
    desired,
    observed,
    etcd,
    target: Math.max(desired.replicas, 1),
    members,
    voters,
    learners: members.filter((m) => m.isLearner),
    leader: members.find((m) => m.id === etcd.leaderId),
    quorumNow: quorumEvidence(etcd, observed.kube),
  };
}
