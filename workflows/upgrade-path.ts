// Decides whether the etcd versions members run may move to spec.version, and if not, names the path to take.
//
// Pure and sandbox-safe. The rules are etcd's upgrade policy (etcd.io/docs/v3.6/upgrades/upgrading-etcd):
// patch changes within a minor, and one minor up at a time; "upgrades that skip a minor version are not
// supported and will likely fail". Down, one minor at a time too (etcd.io/docs/v3.6/downgrades/downgrade_3_6:
// "We only support downgrading one minor version at a time"). While any member still runs the lower minor,
// the cluster version is that minor and members that run the higher one may roll back by binary (a
// rollback); once every member runs the higher minor, the cluster version is that minor and etcd's downgrade
// API must move it down first (a downgrade; workflows/downgrade-plan.ts gates the restarts on it).

export interface Version {
  major: number;
  minor: number;
  patch: number;
}

/** `3.6.16` as numbers; undefined for anything else (a leading v, a suffix, missing parts). */
export function parseVersion(text: string | undefined): Version | undefined {
  const m = /^(\d+)\.(\d+)\.(\d+)$/.exec(text ?? '');
  if (!m) return undefined;
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]) };
}

const formatVersion = (v: Version) => `${v.major}.${v.minor}.${v.patch}`;
const minorOf = (v: Pick<Version, 'major' | 'minor'>) => `${v.major}.${v.minor}`;

/**
 * The lowest patch of a minor that may be upgraded to the next minor, keyed by the lower minor.
 *
 * 3.5 -> 3.6: etcd's guide `upgrades/upgrade_3_6.md` ("Update 3.5") has raised this floor as fixes landed:
 * 3.5.20 (etcd #19557, voters reverting to learners: "too many learner member in cluster"), then 3.5.26
 * (#20793 stale membership in snapshots, and zombie members, etcd blog 2025-12-17), and in its current
 * version 3.5.32, the figure the k3s maintainers cite in k3s-io/k3s discussion #14908 and our
 * /work/shared/notes/etcd-operations.md §3.3. We enforce the current figure.
 */
export const MINIMUM_PATCH_BEFORE_NEXT_MINOR: Readonly<Record<string, number>> = { '3.5': 32 };

/** What moving every member to the target takes. */
export type UpgradePath =
  /** Every member already runs the target. */
  | { kind: 'none' }
  /** `from` lists the versions members run that differ from the target, lowest first. */
  | { kind: 'allowed'; from: string[]; to: string; rollback: boolean; downgrade?: boolean }
  | { kind: 'refused'; from: string[]; to: string; message: string };

const compare = (a: Version, b: Version) => a.major - b.major || a.minor - b.minor || a.patch - b.patch;

/**
 * The path from the versions members run (or will run after a restart) to `target`. Unparseable versions
 * are ignored: a member that does not report one tells us nothing either way.
 */
export function upgradePath(running: readonly (string | undefined)[], targetText: string): UpgradePath {
  const target = parseVersion(targetText);
  const versions = [
    ...new Map(
      running
        .map(parseVersion)
        .filter((v): v is Version => v !== undefined)
        .map((v) => [formatVersion(v), v]),
    ).values(),
  ].sort(compare);
  const from = versions.filter((v) => !target || compare(v, target) !== 0);
  if (from.length === 0) return { kind: 'none' };
  const fromText = from.map(formatVersion);
  const to = targetText;
  if (!target) {
    return { kind: 'refused', from: fromText, to, message: `version ${to} is not major.minor.patch` };
  }
  const refuse = (message: string): UpgradePath => ({ kind: 'refused', from: fromText, to, message });
  // The cluster version is the lowest minor any member runs: only from there does a rollback make sense.
  const lowest = versions[0] as Version;
  let rollback = false;
  let downgrade = false;
  for (const v of from) {
    const step = `${formatVersion(v)} -> ${to}`;
    if (v.major !== target.major) {
      return refuse(
        `${step} changes the major version, which etcd does not support as a rolling upgrade; run ${to} as a new cluster restored from a snapshot`,
      );
    }
    if (v.minor === target.minor) continue;
    if (v.minor > target.minor) {
      if (v.minor !== target.minor + 1) {
        return refuse(
          `downgrade ${step} skips a minor version, which etcd does not support; set version back to ${formatVersion(v)}`,
        );
      }
      // Lower-minor members of a cluster that also runs the higher minor need the same fixes an upgrade
      // needs (the floor below): a downgrade is an upgrade's mixed-version phase run backwards.
      const floor = MINIMUM_PATCH_BEFORE_NEXT_MINOR[minorOf(target)];
      if (floor !== undefined && target.patch < floor) {
        const minimum = `${minorOf(target)}.${floor}`;
        return refuse(
          `downgrade ${step} is refused: a cluster that runs ${minorOf(v)} may only have ${minorOf(target)} members on ${minimum} or later (etcd's upgrade guide); set version to ${minimum} or later`,
        );
      }
      if (lowest.minor === target.minor) rollback = true;
      else downgrade = true;
      continue;
    }
    if (target.minor > v.minor + 1) {
      const next = `${v.major}.${v.minor + 1}`;
      return refuse(
        `${step} skips a minor version, which etcd does not support: upgrade to the newest ${next} patch first, then to ${to}`,
      );
    }
    const floor = MINIMUM_PATCH_BEFORE_NEXT_MINOR[minorOf(v)];
    if (floor !== undefined && v.patch < floor) {
      const minimum = `${minorOf(v)}.${floor}`;
      return refuse(
        `${step} is refused: etcd's upgrade guide requires every ${minorOf(v)} member to run ${minimum} or later before ${minorOf(target)}; set version to ${minimum} (or the newest ${minorOf(v)} patch) first, then to ${to}`,
      );
    }
  }
  return { kind: 'allowed', from: fromText, to, rollback, ...(downgrade ? { downgrade } : {}) };
}
