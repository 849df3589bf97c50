// Plans a config rollout one member at a time: Pod metadata patched in place, out-of-date members restarted followers first and the leader last, claims grown where their class allows.
//
// Pure and sandbox-safe; plan.ts calls it as named checks of its chain (after upgradeMembers, so a version
// change, which also changes the image and so the template, is rolled by the Upgrade alone). The gates are
// the upgrade's: a member goes down only while every member is healthy and Ready, and only after the member
// restarted before it is healthy, Ready and caught up with the leader.
import { Reasons } from '../crds/conditions';
import { parseQuantity, quantityLess } from '../crds/quantity';
import type { ClaimStorageObservation, PodTemplateObservation } from '../contracts/rollout';
import { caughtUp, isServing, nextOneAtATime } from './cluster-state';

export type { ClaimStorageObservation, PodTemplateObservation };

/** One etcd member with what a rollout needs to know of it. */
export interface RolloutMemberView {
  id: string;
  name: string;
  ordinal: number;
  isLearner: boolean;
  /** Started, answers, and its Pod is live. */
  healthy: boolean;
  /** Its Pod is Ready. */
  ready: boolean;
  raftIndex?: string;
  /** Absent when the observation did not compare the Pod (no spec, no image): nothing is rolled then. */
  template?: PodTemplateObservation;
}

/** Delete the member's Pod so that RecreatePod starts it again (same claim, same member id) on the spec's template. */
export interface RolloutMemberStep {
  kind: 'RolloutMember';
  member: string;
  id: string;
  /** The template hash the restarted Pod carries; the delete is skipped when the Pod already does. */
  hash: string;
  /** Readable names of what changed, e.g. ['options']. */
  changed: string[];
}

/** Hand leadership to a rolled voter before the leader itself is restarted (last). */
export interface RolloutLeaderStep {
  kind: 'MoveLeader';
  from: { name: string; id: string };
  to: { name: string; id: string };
  reason: 'Rollout';
  changed: string[];
}

/** Patch the spec's user metadata (additionalMetadata, podLabels/podAnnotations on top) onto the member's running Pod, and additionalMetadata onto the cluster's other objects: no restart. */
export interface UpdateMemberMetadataStep {
  kind: 'UpdateMemberMetadata';
  member: string;
}

/** Patch the member's claim to ask for spec.storage.size (its StorageClass allows volume expansion). */
export interface ExpandClaimStep {
  kind: 'ExpandClaim';
  member: string;
  from: string;
  to: string;
}

export type RolloutDecision =
  | RolloutMemberStep
  | RolloutLeaderStep
  | UpdateMemberMetadataStep
  | {
      kind: 'Wait';
      reason: typeof Reasons.MemberNotReady | typeof Reasons.TLSTrustBroken;
      message: string;
    };

const byOrdinal = (a: { ordinal: number }, b: { ordinal: number }) => a.ordinal - b.ordinal;

/**
 * The next rollout step, or undefined when every member's Pod matches the spec. Metadata comes first: a
 * patch disturbs nothing, so it neither waits for readiness nor for the restarts to finish.
 */
export function planRollout(input: {
  leaderId?: string;
  members: readonly RolloutMemberView[];
  /**
   * Fewer members than the spec asks for (a scale up, or the replacement of a member a Memory restart lost, is
   * due): restarts wait until it is added, so none runs one member short. Metadata is patched regardless.
   */
  belowSize?: boolean;
}): RolloutDecision | undefined {
  const { leaderId } = input;
  const members = [...input.members].sort(byOrdinal);
  const metadata = members.find((m) => m.template && !m.template.metadataCurrent && m.healthy);
  if (metadata) return { kind: 'UpdateMemberMetadata', member: metadata.name };
  if (input.belowSize) return undefined;

  const pending = members.filter((m) => m.template?.upToDate === false);
  if (pending.length === 0) return undefined;
  // A member restarted on CA bundles that do not trust the cluster's certificates could talk to no one.
  const untrusted = pending.find((m) => m.template?.untrusted)?.template?.untrusted;
  if (untrusted) return { kind: 'Wait', reason: Reasons.TLSTrustBroken, message: untrusted };
  const wait = (message: string): RolloutDecision => ({
    kind: 'Wait',
    reason: Reasons.MemberNotReady,
    message,
  });
  const leader = members.find((m) => m.id === leaderId);
  const rolled = members.filter((m) => m.template?.upToDate === true);
  // The member restarted last must answer, be Ready and be in sync before the next one goes down.
  for (const m of rolled) {
    if (!isServing(m)) return wait(`member ${m.name} restarted with the new spec, starting`);
    if (!caughtUp(m, leader)) {
      return wait(
        `member ${m.name} restarted with the new spec, catching up (raft index ${m.raftIndex ?? '?'} of ${leader?.raftIndex ?? '?'})`,
      );
    }
  }
  // Taking a member down is safe only when every other member answers: then quorum survives the restart.
  const unready = members.find((m) => !isServing(m));
  if (unready)
    return wait(`${unready.name} is not ready; the rollout takes no member down until every member is`);

  // Followers first by ordinal, the leader last, after a rolled voter takes over.
  const step = nextOneAtATime({ pending, leaderId, successors: rolled });
  const next = step?.kind === 'MoveLeader' ? step.from : step?.member;
  if (!step || !next?.template) return undefined;
  const changed = next.template.changed;
  if (step.kind === 'MoveLeader') {
    return {
      kind: 'MoveLeader',
      from: { name: step.from.name, id: step.from.id },
      to: { name: step.to.name, id: step.to.id },
      reason: 'Rollout',
      changed,
    };
  }
  return { kind: 'RolloutMember', member: next.name, id: next.id, hash: next.template.hash, changed };
}

export type StorageDecision =
  ExpandClaimStep | { kind: 'None'; reason: typeof Reasons.StorageExpansionRefused; message: string };

const refusalText: Record<Exclude<ClaimStorageObservation['expansion'], 'Allowed'>, string> = {
  NoStorageClass: 'has no StorageClass',
  ClassForbids: 'has a StorageClass without allowVolumeExpansion',
  ClassNotFound: 'names a StorageClass that does not exist (or the operator may not read)',
};

/**
 * Grows each member's claim to `size`, lowest ordinal first, where its StorageClass allows expansion. Where
 * none that still needs growing can grow, says why and leaves the claims alone: Kubernetes refuses to grow
 * such a claim, and the member keeps working on the size it has. Undefined when every claim is big enough.
 */
export function planStorageGrowth(input: {
  size: string;
  claims: readonly { member: string; ordinal: number; storage?: ClaimStorageObservation }[];
}): StorageDecision | undefined {
  if (parseQuantity(input.size) === undefined) return undefined;
  const small = [...input.claims]
    .sort(byOrdinal)
    .filter((c) => c.storage?.requested !== undefined && quantityLess(c.storage.requested, input.size));
  const growable = small.find((c) => c.storage?.expansion === 'Allowed');
  if (growable?.storage?.requested !== undefined) {
    return { kind: 'ExpandClaim', member: growable.member, from: growable.storage.requested, to: input.size };
  }
  if (small.length === 0) return undefined;
  const why = small.map((c) => {
    const s = c.storage;
    const text = s && s.expansion !== 'Allowed' ? refusalText[s.expansion] : 'cannot grow';
    return `data-${c.member} (${s?.requested ?? '?'}) ${text}${s?.storageClassName ? ` (${s.storageClassName})` : ''}`;
  });
  return {
    kind: 'None',
    reason: Reasons.StorageExpansionRefused,
    message: `spec.storage.size ${input.size} is not applied: ${why.join('; ')}; Kubernetes grows only claims whose StorageClass allows volume expansion`,
  };
}

/** The static summary of a Rollout operation from its first step, e.g. "roll out default/main: options changed". */
export function summarizeRollout(
  ref: string,
  first: RolloutMemberStep | RolloutLeaderStep | UpdateMemberMetadataStep | ExpandClaimStep | undefined,
): string {
  if (!first) return `roll out ${ref}`;
  switch (first.kind) {
    case 'RolloutMember':
    case 'MoveLeader':
      return `roll out ${ref}: ${first.changed.join(', ')} changed`;
    case 'UpdateMemberMetadata':
      return `roll out ${ref}: labels/annotations changed`;
    case 'ExpandClaim':
      return `roll out ${ref}: storage ${first.from} -> ${first.to}`;
  }
}

/** One line per rollout step for the Temporal UI's current details and status.currentOperation.step. */
export function describeRolloutStep(
  step: RolloutMemberStep | RolloutLeaderStep | UpdateMemberMetadataStep | ExpandClaimStep,
): string {
  switch (step.kind) {
    case 'RolloutMember':
      return `restart member ${step.member} with the new spec (${step.changed.join(', ')} changed): delete its Pod, keep its claim`;
    case 'MoveLeader':
      return `move leadership from ${step.from.name} to ${step.to.name}, which runs the new spec, before restarting ${step.from.name}`;
    case 'UpdateMemberMetadata':
      return `patch labels/annotations onto the Pod of ${step.member} (no restart)`;
    case 'ExpandClaim':
      return `grow the claim of ${step.member} from ${step.from} to ${step.to}`;
  }
}
