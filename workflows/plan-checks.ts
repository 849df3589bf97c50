// The pieces both of the planner's chains share: a named check, a wait, running a chain, the checks that
// apply with or without etcd's member list (a stuck Pod, the upgrade path's refusal).
import { Reasons } from '../crds/conditions';
import { ordinalFor, podLive } from './cluster-state';
import type { Decision, Desired, KubeMemberView, Observed, Step, WaitReason } from './plan-types';
import { upgradePath } from './upgrade-path';

/** One named check of a chain: a step when it has an opinion, undefined to let the next check decide. */
export type Check<C> = { name: string; run: (c: C) => Step | undefined };

export const wait = (reason: WaitReason, message: string): Step => ({ kind: 'Wait', reason, message });

/** The first check with an opinion decides; its name travels with the step. */
export function runChain<C>(chain: Check<C>[], context: C): Decision {
  for (const check of chain) {
    const step = check.run(context);
    if (step) return { check: check.name, step };
  }
  throw new Error('plan: the last check of a chain always decides');
}

/**
 * A Pod that never ran etcd (its image cannot be pulled, or it was never scheduled) while the spec now asks
 * for another image or template: the user fixed the spec, so the stuck Pod goes and is started again from it.
 * Deleting it costs nothing: its etcd never started in it, and its claim (the member's data) is kept.
 */
export function replaceStuckPod(
  desired: Desired,
  kube: readonly KubeMemberView[],
  neverAnswered = false,
): Step | undefined {
  if (!desired.versionKnown) return undefined;
  // A crash-looping etcd did run: only the seed of a cluster that never answered may go (it formed nothing).
  const replaceable = (reason: string | undefined) =>
    reason === Reasons.ImagePullFailed ||
    reason === Reasons.PodUnschedulable ||
    (neverAnswered && reason === Reasons.MemberCrashLooping);
  const stuck = kube
    .filter((k) => podLive(k) && replaceable(k.problem?.reason))
    .filter(
      (k) =>
        k.pod?.template?.upToDate === false ||
        (desired.version !== undefined && k.pod?.version !== undefined && k.pod.version !== desired.version),
    )
    .sort((a, b) => ordinalFor(desired.cluster, a.name) - ordinalFor(desired.cluster, b.name))[0];
  return stuck && { kind: 'ReplacePod', member: stuck.name, why: stuck.problem?.message ?? 'it cannot run' };
}

/** The path rules' refusal of spec.version given what members run and their Pods' images, if they refuse it. */
export function upgradeRefusal(desired: Desired, observed: Observed): string | undefined {
  if (desired.version === undefined) return undefined;
  const running = [
    ...(observed.etcd?.members ?? []).map((m) => m.version),
    ...observed.kube.filter((k) => podLive(k)).map((k) => k.pod?.version),
  ];
  const path = upgradePath(running, desired.version);
  return path.kind === 'refused' ? path.message : undefined;
}

/** Whether the step starts an etcd process, which needs an image for spec.version. */
export function startsPod(step: Step): boolean {
  return ['Bootstrap', 'AddMember', 'RecreatePod', 'Resume'].includes(step.kind);
}
