// Whether a lost quorum can come back by itself (members down, their data kept: wait) or is lost for good (too
// many members' data is gone for the rest ever to form a quorum), what a recovery would start from, whether the
// user's approval holds, and the window of acknowledged writes a recovery gives up.
//
// Pure and sandbox-safe. Nothing here acts: the planner turns a permanent loss into a wait until the user's
// approval names this cluster's uid (plan-without-etcd.ts), and only then into a RecoverQuorum step.
import type { BackupPoint, LossFindings, SurvivorProbe } from '../contracts/quorum-loss';
import { Annotations } from '../crds/labels';
import type { StorageMedium } from '../crds/etcd-cluster';
import { ordinalFor, podLive, quorum } from './cluster-state';
import type { KubeMemberView, Observed } from './plan-types';

export type { BackupPoint, LossFindings, SurvivorProbe } from '../contracts/quorum-loss';

/** A member whose data is gone for good, and how the operator knows. */
export interface GoneMember {
  name: string;
  why: string;
}

/**
 * - NotJudged:  nothing to judge (etcd answers, the cluster never formed, it is paused, members refuse the
 *               operator's TLS so nothing is known, or no member was ever recorded);
 * - Temporary:  a quorum of the members etcd last listed still has its data: they come back when their Pods
 *               run again, so the operator waits and never acts on it;
 * - Permanent:  fewer than a quorum of them have their data: the cluster cannot form a quorum again by itself.
 */
export type QuorumLossVerdict =
  | { kind: 'NotJudged'; why: string }
  | { kind: 'Temporary'; members: string[]; survivors: string[]; gone: GoneMember[] }
  | { kind: 'Permanent'; members: string[]; survivors: string[]; gone: GoneMember[] };

/**
 * Why a member's data is gone for good, or undefined while it is kept. A Pod that is down, crash-looping or
 * unschedulable keeps its data on its claim (its node may come back): that is never "gone"; deleting the claim,
 * or marking it with the data-lost annotation, is how a person says it is.
 */
export function whyDataGone(k: KubeMemberView | undefined, medium: StorageMedium): string | undefined {
  if (medium === 'Memory') {
    return podLive(k) ? undefined : 'its Pod is gone, and its Memory volume with it';
  }
  if (!k?.claim) return 'its claim was deleted';
  if (k.claim.terminating) return 'its claim is being deleted';
  if (k.claim.dataLost) {
    return `its claim is marked ${Annotations.dataLost} or its etcd reported its raft log lost`;
  }
  return undefined;
}

/** Whether the quorum that does not answer now is lost for good, from the members etcd last listed and their objects. */
export function judgeQuorumLoss(
  desired: { cluster: string; replicas: number; medium: StorageMedium },
  observed: Pick<Observed, 'etcd' | 'etcdRefused' | 'kube' | 'recorded'>,
): QuorumLossVerdict {
  if (observed.etcd) return { kind: 'NotJudged', why: 'etcd answers a linearizable member list' };
  if (observed.etcdRefused !== undefined) {
    return { kind: 'NotJudged', why: 'members refuse the TLS handshake: nothing is known of their quorum' };
  }
  const { recorded } = observed;
  if (recorded.clusterId === undefined) return { kind: 'NotJudged', why: 'the cluster never formed' };
  if (recorded.paused || desired.replicas === 0) return { kind: 'NotJudged', why: 'the cluster is paused' };
  const members = [...recorded.members].sort(
    (a, b) => ordinalFor(desired.cluster, a) - ordinalFor(desired.cluster, b) || a.localeCompare(b),
  );
  if (members.length === 0) return { kind: 'NotJudged', why: 'no member was ever recorded' };
  const kube = new Map(observed.kube.map((k) => [k.name, k]));
  const gone: GoneMember[] = [];
  const survivors: string[] = [];
  for (const name of members) {
    const why = whyDataGone(kube.get(name), desired.medium);
    if (why) gone.push({ name, why });
    else survivors.push(name);
  }
  const kind = survivors.length >= quorum(members.length) ? 'Temporary' : 'Permanent';
  return { kind, members, survivors, gone };
}

/** Where a recovery starts from. */
export type RecoverySource =
  { kind: 'Member'; member: string; id: string; revision: string } | { kind: 'None'; why: string };

const big = (s: string | undefined) => BigInt(s && /^\d+$/.test(s) ? s : '0');

/**
 * The survivor with the newest data: the highest applied revision, then the highest raft index, then the
 * lowest ordinal. A learner never votes and may lack committed entries, so it is chosen only when no voter
 * answers. A survivor that does not answer its status cannot be judged: the choice waits for every survivor
 * (a member chosen while a newer one is only slow to start would give up the newer one's writes).
 */
export function chooseRecoverySource(
  cluster: string,
  survivors: readonly string[],
  probes: readonly SurvivorProbe[],
): RecoverySource {
  if (survivors.length === 0) {
    return { kind: 'None', why: 'no member survives with its data' };
  }
  const byName = new Map(probes.map((p) => [p.name, p]));
  const silent = survivors.filter((n) => !byName.get(n)?.answered);
  if (silent.length > 0) {
    const said = silent.map((n) => `${n}${byName.get(n)?.error ? ` (${byName.get(n)?.error})` : ''}`);
    return {
      kind: 'None',
      why: `surviving member ${said.join(', ')} does not answer its status, so the newest data cannot be told yet`,
    };
  }
  const answered = survivors.map((n) => byName.get(n)).filter((p): p is SurvivorProbe => p !== undefined);
  const rank = (p: SurvivorProbe) => (p.isLearner ? 1 : 0);
  const best = [...answered].sort(
    (a, b) =>
      rank(a) - rank(b) ||
      (big(b.revision) > big(a.revision) ? 1 : big(b.revision) < big(a.revision) ? -1 : 0) ||
      (big(b.raftIndex) > big(a.raftIndex) ? 1 : big(b.raftIndex) < big(a.raftIndex) ? -1 : 0) ||
      ordinalFor(cluster, a.name) - ordinalFor(cluster, b.name),
  )[0];
  if (!best?.id || best.revision === undefined) {
    return { kind: 'None', why: 'no surviving member reported its member id and revision' };
  }
  return { kind: 'Member', member: best.name, id: best.id, revision: best.revision };
}

/**
 * A look's findings with the gaps of a slow look filled from the one before: a survivor that does not answer now but
 * answered then keeps that answer, marked `earlier` (without a quorum its data cannot have moved on, and a survivor
 * whose data is lost is no survivor any more); snapshots that could not be listed keep the backup points found then.
 * Status then says the same thing twice instead of "does not answer" and back on a busy node's one slow answer.
 * The marked answer is shown, never acted on: recoveryGate waits for a fresh one.
 */
export function withEarlierAnswers(now: LossFindings, before: LossFindings | undefined): LossFindings {
  if (!before) return now;
  const earlier = new Map(before.survivors.filter((p) => p.answered).map((p) => [p.name, p]));
  const survivors = now.survivors.map((p) => {
    const then = earlier.get(p.name);
    if (p.answered || !then) return p;
    const { error: _error, ...answer } = then;
    return { ...answer, earlier: true as const };
  });
  if (now.snapshotsUnread === undefined) return { ...now, survivors };
  const { backup, restorable } = before;
  return { ...now, survivors, ...(backup ? { backup } : {}), ...(restorable ? { restorable } : {}) };
}

/** What the approval annotation says for this cluster. */
export type ApprovalVerdict =
  { kind: 'None' } | { kind: 'Approved' } | { kind: 'Refused'; value: string; message: string };

/** The approval the user gives: the annotation with this cluster's uid as its value (a copy for another object is refused). */
export function approvalFor(uid: string): string {
  return `${Annotations.approveRecovery}=${uid}`;
}

export function judgeApproval(
  value: string | undefined,
  uid: string,
  annotation: string = Annotations.approveRecovery,
): ApprovalVerdict {
  if (value === undefined || value === '') return { kind: 'None' };
  if (value.trim() === uid) return { kind: 'Approved' };
  return {
    kind: 'Refused',
    value,
    message: `${annotation} is "${value}", which is not this EtcdCluster's uid ${uid}: refused, nothing was done`,
  };
}

/** The last revision the operator saw the cluster at, and when. */
export interface RevisionSeen {
  revision: string;
  at: string;
}

/**
 * The acknowledged writes a recovery gives up, as well as the operator can know them: the revisions after the
 * recovered one up to the newest it had seen (writes after its last look are not known to it).
 */
export interface LostWindow {
  recoveredRevision: string;
  lastSeenRevision?: string;
  lastSeenAt?: string;
  /** Revisions the cluster had acknowledged that are gone (0 when the operator saw none beyond the recovered one). */
  lostRevisions: string;
  message: string;
}

export function lostWindow(recovered: string, seen: RevisionSeen | undefined): LostWindow {
  if (!seen) {
    return {
      recoveredRevision: recovered,
      lostRevisions: '0',
      message: `recovered at revision ${recovered}; the operator never saw the cluster's revision before the loss, so the writes given up cannot be counted`,
    };
  }
  const lost = big(seen.revision) - big(recovered);
  const lostRevisions = lost > 0n ? lost.toString() : '0';
  const base = {
    recoveredRevision: recovered,
    lastSeenRevision: seen.revision,
    lastSeenAt: seen.at,
    lostRevisions,
  };
  if (lost > 0n) {
    return {
      ...base,
      message: `recovered at revision ${recovered}; revisions ${big(recovered) + 1n}..${seen.revision} (${lostRevisions}), acknowledged by ${seen.at} when the operator last saw the cluster, are gone, and so is anything written after that`,
    };
  }
  return {
    ...base,
    message: `recovered at revision ${recovered}, at or beyond revision ${seen.revision} the operator last saw at ${seen.at}; only writes acknowledged after that look can be gone`,
  };
}

/** The newer of two sightings of the cluster's revision (a member's answer may come from a lagging member). */
export function newerRevision(
  a: RevisionSeen | undefined,
  b: RevisionSeen | undefined,
): RevisionSeen | undefined {
  if (!a) return b;
  if (!b) return a;
  return big(b.revision) >= big(a.revision) ? b : a;
}

/** The highest revision members reported in one observation, when any reported one. */
export function highestRevision(members: readonly { revision?: string }[]): string | undefined {
  let best: string | undefined;
  for (const m of members) {
    if (m.revision === undefined) continue;
    if (best === undefined || big(m.revision) > big(best)) best = m.revision;
  }
  return best;
}

/** What the planner decides on a permanent loss: wait (with what to do), or recover from a survivor. */
export type RecoveryGate =
  | { kind: 'Wait'; message: string; refused?: { value: string; message: string } }
  | { kind: 'Recover'; member: string; id: string; revision: string; gone: string[] };

function backupLine(backup: BackupPoint | undefined, unread?: string): string {
  if (!backup && unread !== undefined) return `the cluster's EtcdSnapshots could not be listed (${unread})`;
  if (!backup) return 'no snapshot of this cluster succeeded';
  const verified =
    backup.verified === 'True' ? ', verified' : backup.verified === 'False' ? ', failed its check' : '';
  return `newest snapshot ${backup.snapshot} at revision ${backup.revision}, taken ${backup.takenAt}${verified}`;
}

function survivorLine(survivors: readonly string[], probes: readonly SurvivorProbe[]): string {
  const byName = new Map(probes.map((p) => [p.name, p]));
  return survivors
    .map((n) => {
      const p = byName.get(n);
      if (!p?.answered) return `${n} (does not answer)`;
      return `${n} at revision ${p.revision ?? '?'}${p.isLearner ? ' (learner)' : ''}`;
    })
    .join(', ');
}

/**
 * The planner's answer to a permanent loss: never an action without the approval naming this cluster's uid;
 * with it, the survivor with the newest data. The wait's message says everything the user needs to decide,
 * and its first part (up to ': ') names the members gone, so it is told as an Event once per loss.
 */
export function recoveryGate(input: {
  cluster: string;
  uid: string;
  approval?: string;
  verdict: Extract<QuorumLossVerdict, { kind: 'Permanent' }>;
  findings?: LossFindings;
}): RecoveryGate {
  const { cluster, uid, verdict, findings } = input;
  const gone = verdict.gone.map((g) => g.name);
  const head = `${gone.length} of ${verdict.members.length} members lost their data for good (${gone.join(', ')}), so a quorum cannot form again`;
  const detail = verdict.gone.map((g) => `${g.name}: ${g.why}`).join('; ');
  const probes = findings?.survivors ?? [];
  const source = chooseRecoverySource(cluster, verdict.survivors, probes);
  const facts = [
    `survivors: ${survivorLine(verdict.survivors, probes)}`,
    findings ? backupLine(findings.backup, findings.snapshotsUnread) : 'the backup is not looked at yet',
  ].join('; ');
  const plan =
    source.kind === 'Member'
      ? `approving rebuilds the cluster from ${source.member} at revision ${source.revision} (etcd --force-new-cluster), then adds fresh members; writes only the lost members had are given up`
      : `no recovery can start yet: ${source.why}`;
  const ask = `nothing is done until approved: kubectl etcd approve-recovery ${cluster} (or kubectl annotate etcdcluster ${cluster} ${approvalFor(uid)})`;
  const approval = judgeApproval(input.approval, uid);
  // Acted on only with every survivor's answer of this look: an earlier one shows what was, not what is.
  const unanswered = verdict.survivors.filter((n) => probes.find((p) => p.name === n)?.earlier);
  if (approval.kind === 'Approved' && source.kind === 'Member' && unanswered.length > 0) {
    return {
      kind: 'Wait',
      message: `${head}: approved, but surviving member ${unanswered.join(', ')} did not answer its status at this look, so the newest data cannot be told yet; ${detail}; ${facts}`,
    };
  }
  if (approval.kind === 'Approved' && source.kind === 'Member') {
    return { kind: 'Recover', member: source.member, id: source.id, revision: source.revision, gone };
  }
  const message = `${head}: ${detail}; ${facts}; ${plan}; ${ask}`;
  if (approval.kind === 'Refused') {
    return {
      kind: 'Wait',
      message: `${head}: ${approval.message}; ${detail}; ${facts}; ${plan}; ${ask}`,
      refused: { value: approval.value, message: approval.message },
    };
  }
  if (approval.kind === 'Approved') {
    return {
      kind: 'Wait',
      message: `${head}: approved, but ${plan}; ${detail}; ${facts}`,
    };
  }
  return { kind: 'Wait', message };
}
