// Plans a rolling version upgrade one member at a time: followers first by ordinal, the leader last after handing leadership to an upgraded voter.
//
// Pure and sandbox-safe; plan.ts calls it as one named check of its chain. Invariants: a member goes down
// only while every member is healthy and Ready (so quorum survives the restart), and only after the member
// restarted before it serves the new version and has caught up with the leader.
import { Reasons } from '../crds/conditions';
import { upgradePath } from './upgrade-path';
import { caughtUp, isServing, nextOneAtATime } from './cluster-state';

/** One etcd member with what an upgrade needs to know of it. */
export interface UpgradeMemberView {
  id: string;
  name: string;
  ordinal: number;
  isLearner: boolean;
  /** Started, answers, and its Pod is live. */
  healthy: boolean;
  /** Its Pod is Ready: for a voter, etcd's /readyz passed, which includes a linearizable read. */
  ready: boolean;
  /** The version the running process reports. */
  version?: string;
  /** The version of its Pod's image: what it runs after a restart. */
  podVersion?: string;
  raftIndex?: string;
}

export interface UpgradeVersions {
  from: string;
  to: string;
}

/** Delete the member's Pod so that it comes back (same claim, same member id) on the spec's image. */
export interface UpgradeMemberStep extends UpgradeVersions {
  kind: 'UpgradeMember';
  member: string;
  id: string;
}

export interface UpgradeLeaderStep {
  kind: 'MoveLeader';
  from: { name: string; id: string };
  to: { name: string; id: string };
  reason: 'Upgrade';
  upgrade: UpgradeVersions;
}

export type UpgradeWaitReason = typeof Reasons.UpgradePathRefused | typeof Reasons.MemberNotReady;

export type UpgradeDecision =
  UpgradeMemberStep | UpgradeLeaderStep | { kind: 'Wait'; reason: UpgradeWaitReason; message: string };

/** The versions members run or will run after a restart; what the path rules judge. */
export function runningVersions(members: readonly UpgradeMemberView[]): string[] {
  return members.flatMap((m) => [m.version, m.podVersion].filter((v): v is string => v !== undefined));
}

const byOrdinal = (a: UpgradeMemberView, b: UpgradeMemberView) => a.ordinal - b.ordinal;

/**
 * The next upgrade step, or undefined when no member's Pod runs another version than `target`. A member
 * whose Pod image is unknown (no version in its tag) is never counted as pending: nothing can be said of it.
 */
export function planUpgrade(input: {
  target: string;
  leaderId?: string;
  members: readonly UpgradeMemberView[];
}): UpgradeDecision | undefined {
  const { target, leaderId } = input;
  const members = [...input.members].sort(byOrdinal);
  const pending = members.filter((m) => m.podVersion !== undefined && m.podVersion !== target);
  if (pending.length === 0) return undefined;

  const path = upgradePath(runningVersions(members), target);
  if (path.kind === 'refused')
    return { kind: 'Wait', reason: Reasons.UpgradePathRefused, message: path.message };

  const leader = members.find((m) => m.id === leaderId);
  const wait = (message: string): UpgradeDecision => ({
    kind: 'Wait',
    reason: Reasons.MemberNotReady,
    message,
  });
  const upgraded = members.filter((m) => m.podVersion === target);
  // The member restarted last must serve the new version and be in sync before the next one goes down.
  for (const m of upgraded) {
    if (!m.healthy || !m.ready) return wait(`member ${m.name} restarted on ${target}, starting`);
    if (m.version !== target)
      return wait(`member ${m.name} restarted on ${target}, still reports ${m.version ?? '?'}`);
    if (!caughtUp(m, leader)) {
      return wait(
        `member ${m.name} restarted on ${target}, catching up (raft index ${m.raftIndex ?? '?'} of ${leader?.raftIndex ?? '?'})`,
      );
    }
  }
  // Taking a member down is safe only when every other member answers: then quorum survives the restart.
  const unready = members.find((m) => !isServing(m));
  if (unready)
    return wait(`${unready.name} is not ready; the upgrade takes no member down until every member is`);

  // Followers first by ordinal, the leader last: an upgraded voter takes over first, so the leader, restarted
  // last, rejoins a cluster already led by the new version.
  const step = nextOneAtATime({ pending, leaderId, successors: upgraded });
  if (!step) return undefined;
  const next = step.kind === 'MoveLeader' ? step.from : step.member;
  const versions = { from: next.podVersion ?? '?', to: target };
  if (step.kind === 'MoveLeader') {
    return {
      kind: 'MoveLeader',
      from: { name: step.from.name, id: step.from.id },
      to: { name: step.to.name, id: step.to.id },
      reason: 'Upgrade',
      upgrade: versions,
    };
  }
  return { kind: 'UpgradeMember', member: next.name, id: next.id, ...versions };
}
