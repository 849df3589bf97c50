// Gates a rolling downgrade one minor down on etcd's downgrade API: enable it, wait for etcd to move its cluster and storage versions, then let the roll proceed, and wait for etcd to finish.
//
// Pure and sandbox-safe; plan.ts calls it as the check `downgradeGate` just before `upgradeMembers`, which
// does the roll (followers first, the leader last, same gates as an upgrade). Invariant: no member is
// restarted on a lower minor while etcd's cluster version, or any member's storage version, is still above
// that minor: a 3.5 binary refuses to join a cluster whose version is 3.6 (etcd.io/docs/v3.6/downgrades/
// downgrade_3_6, steps 3-4: validate, enable, confirm the storage version migrated, then roll).
import { Reasons } from '../crds/conditions';
import type { UpgradeMemberView } from './upgrade-plan';
import { parseVersion } from './upgrade-path';
import type { Version } from './upgrade-path';
import type { DowngradeObservation } from '../contracts/downgrade';

export type { DowngradeObservation };

/** Enable etcd's downgrade to `to`'s minor: Validate, then Enable (each safe to repeat). */
export interface EnableDowngradeStep {
  kind: 'EnableDowngrade';
  /** The version members run now, e.g. 3.6.16. */
  from: string;
  /** spec.version, e.g. 3.5.35. */
  to: string;
  /** What etcd's API takes: `3.5.0`. */
  targetVersion: string;
}

export type DowngradeWaitReason = typeof Reasons.WaitingForClusterVersion | typeof Reasons.MemberNotReady;

export type DowngradeGateDecision =
  EnableDowngradeStep | { kind: 'Wait'; reason: DowngradeWaitReason; message: string };

const minorText = (v: Pick<Version, 'major' | 'minor'>) => `${v.major}.${v.minor}`;
const above = (v: Version, target: Version) =>
  v.major > target.major || (v.major === target.major && v.minor > target.minor);

/** Whether moving from `from` to `to` lowers the minor: a Downgrade operation rather than an Upgrade. */
export function lowersMinor(from: string, to: string): boolean {
  const a = parseVersion(from);
  const b = parseVersion(to);
  return a !== undefined && b !== undefined && a.major === b.major && a.minor > b.minor;
}

/** The version etcd's downgrade API takes for a target: its minor with patch 0 (`3.5.35` -> `3.5.0`). */
export function downgradeTargetVersion(target: string): string | undefined {
  const v = parseVersion(target);
  return v ? `${minorText(v)}.0` : undefined;
}

/**
 * The downgrade's own step or wait, or undefined when the roll may go on (or there is no downgrade).
 *
 * Without an observation (the cluster workflow plans without one) a cluster whose every member runs a higher
 * minor than the target needs the downgrade enabled first: that step starts the Downgrade operation, which
 * observes etcd and asks again. With one, etcd's cluster and storage versions decide.
 *
 * A chain read top to bottom: the roll done (wait for etcd to end the downgrade), etcd's versions (roll, wait,
 * or go on), the members' health (wait, or enable).
 */
export function planDowngradeGate(input: {
  target: string;
  members: readonly UpgradeMemberView[];
  observation?: DowngradeObservation;
}): DowngradeGateDecision | undefined {
  const target = parseVersion(input.target);
  const targetVersion = downgradeTargetVersion(input.target);
  if (!target || !targetVersion) return undefined;
  const higher = input.members.filter((m) => {
    const v = parseVersion(m.podVersion);
    return v !== undefined && above(v, target);
  });
  const gate: Gate = { ...input, targetText: input.target, target, targetVersion, higher };
  if (higher.length === 0) return afterRoll(gate);
  const byVersions = byClusterVersion(gate);
  return byVersions === GO_ON ? enableWhenReady(gate) : byVersions;
}

/** What each link of planDowngradeGate's chain reads. */
interface Gate {
  members: readonly UpgradeMemberView[];
  observation?: DowngradeObservation;
  /** spec.version as written, e.g. 3.5.35. */
  targetText: string;
  target: Version;
  /** What etcd's API takes: `3.5.0`. */
  targetVersion: string;
  /** The members whose Pods run a higher minor than the target. */
  higher: readonly UpgradeMemberView[];
}

/** A link's answer that the next link decides. */
const GO_ON = 'go on';

const wait = (reason: DowngradeWaitReason, message: string): DowngradeGateDecision => ({
  kind: 'Wait',
  reason,
  message,
});

/** Whether some member runs the target minor (or lower) already. */
const runsTargetMinor = (g: Gate) =>
  g.members.some((m) => {
    const v = parseVersion(m.version);
    return v !== undefined && !above(v, g.target);
  });

/**
 * Every Pod runs the target minor. etcd ends the downgrade itself once every member runs it; the operation
 * waits for that so "done" means etcd says so, not only the Pods.
 */
function afterRoll(g: Gate): DowngradeGateDecision | undefined {
  const allOnTarget = g.members.every((m) => m.version === undefined || m.version === g.targetText);
  if (g.observation?.enabled === true && allOnTarget) {
    return wait(
      Reasons.WaitingForClusterVersion,
      `every member runs ${g.targetText}; waiting for etcd to finish the downgrade to ${minorText(g.target)}`,
    );
  }
  return undefined;
}

/** etcd's cluster and storage versions: roll on (undefined), wait, or GO_ON to the health check and enable. */
function byClusterVersion(g: Gate): DowngradeGateDecision | undefined | typeof GO_ON {
  const { observation, target, targetVersion } = g;
  const clusterVersion = parseVersion(observation?.clusterVersion);
  if (!observation || !clusterVersion) {
    // Without etcd's word, the versions members run tell: while one runs the target minor the cluster
    // version is that minor already (a rollback of an unfinished upgrade), so no enable is needed.
    if (runsTargetMinor(g)) return undefined;
    if (observation) return wait(Reasons.MemberNotReady, "no member reports etcd's cluster version yet");
    return GO_ON;
  }
  if (above(clusterVersion, target)) {
    if (observation.enabled !== true) return GO_ON;
    return wait(
      Reasons.WaitingForClusterVersion,
      `downgrade to ${minorText(target)} enabled; waiting for etcd to move the cluster version from ${observation.clusterVersion} to ${targetVersion}`,
    );
  }
  // A cluster version at the target minor with no downgrade enabled and no member running that minor is an
  // upgrade etcd has not finished: the leader raises the cluster version only a few seconds after the last
  // member restarted. Rolling now would put a 3.5 binary into what is about to be a 3.6 cluster, which it
  // cannot join (seen in the bench: a downgrade asked for right after an upgrade). Wait for etcd, then enable.
  if (observation.enabled !== true && !runsTargetMinor(g)) {
    return wait(
      Reasons.WaitingForClusterVersion,
      `every member runs ${minorText(parseVersion(g.higher[0]?.version) ?? clusterVersion)} but etcd's cluster version is still ${observation.clusterVersion}; waiting for etcd to finish the upgrade before enabling the downgrade`,
    );
  }
  const unmigrated = Object.entries(observation.storageVersions)
    .filter(([, s]) => {
      const v = parseVersion(s);
      return v !== undefined && above(v, target);
    })
    .sort(([a], [b]) => a.localeCompare(b));
  const first = unmigrated[0];
  if (!first) return undefined;
  return wait(
    Reasons.WaitingForClusterVersion,
    `the cluster version is ${observation.clusterVersion}; waiting for etcd to migrate the storage version of ${first[0]} (${first[1]}) to ${targetVersion}`,
  );
}

/** etcd's guide: "the running cluster must be healthy" before the downgrade is enabled. */
function enableWhenReady(g: Gate): DowngradeGateDecision {
  const unready = [...g.members]
    .sort((a, b) => a.ordinal - b.ordinal)
    .find((m) => !m.healthy || (!m.isLearner && !m.ready));
  if (unready) {
    return wait(
      Reasons.MemberNotReady,
      `${unready.name} is not ready; the downgrade is enabled only while every member is`,
    );
  }
  const from = g.higher.map((m) => m.podVersion).sort()[0] ?? '?';
  return { kind: 'EnableDowngrade', from, to: g.targetText, targetVersion: g.targetVersion };
}
