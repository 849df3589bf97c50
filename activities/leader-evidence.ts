// What a look may conclude when etcd's linearizable member list goes unanswered: members asked their own status say
// whether any of them knows a leader (noLeaderKnown), and the kubelet's readiness says whether one more round is worth
// asking (confirmWorthAsking) or the look can end at once (quorumGoneMeanwhile). Read by etcd-observation.ts.

/**
 * How long a look waits on the member list before it also asks each member whether it knows a leader. A quorum
 * answers the list within milliseconds; only a list still unanswered after this costs status calls.
 */
export const LIST_PATIENCE_MS = 150;

/** One member's answer to its status, as far as leadership goes: undefined when it did not answer in time. */
export type LeaderAnswer = { leaderId: string } | undefined;

/**
 * Pure: whether the answers prove that no member knows a leader. Every member must have settled (answered or
 * failed), at least one must have answered, and none may name a leader (etcd says 0 for none). A member list
 * needs a leader to be answered, so waiting out its deadline then only delays what the look will say. Members
 * that all fail to answer (killed, frozen, refusing TLS) prove nothing: the list is waited on as before.
 */
export function provesNoLeader(answers: readonly LeaderAnswer[]): boolean {
  const answered = answers.filter((a): a is { leaderId: string } => a !== undefined);
  return answered.length > 0 && answered.every((a) => a.leaderId === '' || a.leaderId === '0');
}

/**
 * Rejects once `ask` (each member's status, each within its own deadline) proves that no member knows a leader;
 * otherwise never settles, so the list's own answer or deadline decides. Asks nothing before `patience` or once
 * `answered()` says the list was answered.
 */
export async function noLeaderKnown(
  members: number,
  ask: (index: number) => Promise<LeaderAnswer>,
  answered: () => boolean,
  patience: (ms: number) => Promise<void>,
): Promise<never> {
  await patience(LIST_PATIENCE_MS);
  if (!answered() && members > 0) {
    const answers = await Promise.all(
      Array.from({ length: members }, (_, i) => ask(i).catch(() => undefined)),
    );
    if (!answered() && provesNoLeader(answers)) throw new NoLeaderKnown(answers.filter(Boolean).length);
  }
  return new Promise<never>(() => undefined);
}

/** The member list was not waited out: the members that answered their status know no leader. */
export class NoLeaderKnown extends Error {
  constructor(answered: number) {
    super(`no member knows a leader (${answered} answered their status)`);
    this.name = 'NoLeaderKnown';
  }
}

/** The kubelet's view of the member Pods a look asks: live (not terminating) ones, their role label, readiness. */
export interface PodReadiness {
  ready: boolean;
  /** The Pod's role label: learners are never Ready (their /readyz fails), so they are not counted as voters. */
  role: string | undefined;
}

/**
 * Pure: whether an unanswered member list is asked once more (OBSERVE_CONFIRM_MS later) before the look says no
 * member answers. One unanswered round is not proof that quorum is lost while the kubelet finds members Ready: a
 * leader restarting (a rollout, a CA stage) leaves the list unanswered for about an election. Asked again:
 * - after a round that timed out or failed, while any member Pod is Ready (killed members are not Ready, so their
 *   loss is said without a second round);
 * - after a round cut short because no member knew a leader, only while a majority of the voters' Pods are Ready:
 *   with most voters' Pods not Ready and the rest leaderless, quorum is gone in the kubelet's view and in etcd's.
 * Pods carry the role label once the operator knows them as voters; while none does, every Pod counts as a voter.
 */
export function confirmWorthAsking(pods: readonly PodReadiness[], cutShort: boolean): boolean {
  if (!pods.some((p) => p.ready)) return false;
  if (!cutShort) return true;
  const labelled = pods.filter((p) => p.role === 'voter');
  const voters = labelled.length > 0 ? labelled : pods.filter((p) => p.role !== 'learner');
  const ready = voters.filter((p) => p.ready).length;
  return ready > voters.length / 2;
}

/**
 * While a look waits on an unanswered member list (either round): rejects with QuorumGone as soon as the kubelet,
 * read afresh every `pollMs`, finds most voters' Pods not Ready (confirmWorthAsking says a confirmation is not worth
 * asking) and no member that answers knows a leader. Never settles otherwise; asks nothing once `done()`, so a list
 * answered within `pollMs` costs nothing. A look that began while one of two frozen members' Pods was still Ready so
 * ends when the kubelet marks the second not Ready, instead of waiting out its rounds.
 */
export async function quorumGoneMeanwhile(deps: {
  readiness: () => Promise<PodReadiness[]>;
  leaders: () => Promise<LeaderAnswer[]>;
  done: () => boolean;
  pause: (ms: number) => Promise<void>;
  pollMs: number;
}): Promise<never> {
  while (!deps.done()) {
    await deps.pause(deps.pollMs);
    if (deps.done()) break;
    const pods = await deps.readiness().catch(() => undefined);
    if (!pods || confirmWorthAsking(pods, true)) continue;
    const answers = await deps.leaders();
    if (!deps.done() && provesNoLeader(answers)) throw new QuorumGone(answers.filter(Boolean).length);
  }
  return new Promise<never>(() => undefined);
}

/** Most voters' Pods are not Ready and the members that answer know no leader: no second round is asked. */
export class QuorumGone extends Error {
  constructor(answered: number) {
    super(`most voters' Pods are not Ready and no member knows a leader (${answered} answered their status)`);
    this.name = 'QuorumGone';
  }
}
