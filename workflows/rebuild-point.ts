// Where a rebuild from a backup starts (the continuous backup's newest point, else the newest snapshot that did not
// fail its check), the planner's gate on a quorum lost for good with no member left to recover from, and the gate on
// a rollback in place (spec.rollback, approved by the approve-rollback annotation naming the uid).
//
// Pure and sandbox-safe. Nothing here acts: without the user's approval naming this cluster's uid the answer is a
// wait whose message says what a rebuild would start from and what it gives up; with no backup at all it says
// plainly that there is nothing to approve. The Rebuild operation (workflows/operations/rebuild.ts) acts.
import type { BackupPoint, LossFindings } from '../contracts/quorum-loss';
import type { EtcdClusterRollback } from '../crds/etcd-cluster';
import type { EtcdView } from './plan-types';
import { Annotations } from '../crds/labels';
import { approvalFor, judgeApproval } from './quorum-loss';
import type { QuorumLossVerdict } from './quorum-loss';

/** The backup point a rebuild restores: the continuous backup at its newest point, or one EtcdSnapshot. */
export type RebuildSource =
  | { kind: 'Continuous'; revision: number; time?: string }
  /** An exact point of the cluster's own continuous backup (a rollback): exactly one of revision or time. */
  | { kind: 'PointInTime'; revision?: number; time?: string }
  | { kind: 'Snapshot'; snapshot: string; revision: number; takenAt: string };

/** Why a rebuild happens: a quorum lost with no survivor, or a rollback the user asked for. */
export type RebuildReason = 'QuorumLoss' | 'Rollback';

/**
 * The newest point a rebuild can start from: with spec.backup.continuous and a point status.backup said is safe,
 * the archive's newest point (the restore takes whatever the store holds by then, at least that revision); else
 * the newest snapshot that succeeded and did not fail its check. Undefined when there is none.
 */
export function newestBackupPoint(
  findings: Pick<LossFindings, 'continuous' | 'restorable'>,
): RebuildSource | undefined {
  const c = findings.continuous;
  if (c) return { kind: 'Continuous', revision: c.revision, ...(c.time ? { time: c.time } : {}) };
  const s = findings.restorable;
  if (s) return { kind: 'Snapshot', snapshot: s.snapshot, revision: s.revision, takenAt: s.takenAt };
  return undefined;
}

/** A backup point in words, for messages and Events. */
export function describeSource(source: RebuildSource): string {
  if (source.kind === 'Continuous') {
    return `the continuous backup's newest point (at least revision ${source.revision}${source.time ? `, safe at ${source.time}` : ''})`;
  }
  if (source.kind === 'PointInTime') {
    return source.revision !== undefined
      ? `revision ${source.revision} of the continuous backup`
      : `the continuous backup's point at ${source.time ?? '?'}`;
  }
  if (!source.takenAt) return `snapshot ${source.snapshot}`;
  return `snapshot ${source.snapshot} at revision ${source.revision}, taken ${source.takenAt}`;
}

function failedCheckLine(backup: BackupPoint | undefined, restorable: BackupPoint | undefined): string {
  if (!backup || backup.snapshot === restorable?.snapshot) return '';
  return `; snapshot ${backup.snapshot} (revision ${backup.revision}) failed its check and is not used`;
}

/** What the planner decides on a permanent loss with no survivor: wait (with what to do), or rebuild. */
export type RebuildGate =
  | { kind: 'Wait'; message: string; refused?: { value: string; message: string } }
  | { kind: 'Rebuild'; reason: 'QuorumLoss'; source: RebuildSource; gone: string[] };

/**
 * The planner's answer to a quorum lost for good with no member keeping its data: never an action without the
 * approval naming this cluster's uid; with it, a rebuild from the newest backup point. No backup: nothing to
 * approve, and the message says so. The message's first part (up to ': ') names the members gone, so it is
 * told as an Event once per loss (cluster-quorum-loss.ts).
 */
export function rebuildGate(input: {
  cluster: string;
  uid: string;
  approval?: string;
  verdict: Extract<QuorumLossVerdict, { kind: 'Permanent' }>;
  findings?: LossFindings;
}): RebuildGate {
  const { cluster, uid, verdict, findings } = input;
  const gone = verdict.gone.map((g) => g.name);
  const head = `all ${verdict.members.length} members lost their data for good (${gone.join(', ')}), so no member is left to recover from`;
  const detail = verdict.gone.map((g) => `${g.name}: ${g.why}`).join('; ');
  if (!findings) return { kind: 'Wait', message: `${head}: ${detail}; the backup is not looked at yet` };
  const source = newestBackupPoint(findings);
  const skipped = failedCheckLine(findings.backup, findings.restorable);
  if (!source && findings.snapshotsUnread !== undefined) {
    return {
      kind: 'Wait',
      message: `${head}: ${detail}; the cluster's EtcdSnapshots could not be listed (${findings.snapshotsUnread}), so the newest backup point cannot be told yet; looking again`,
    };
  }
  if (!source) {
    return {
      kind: 'Wait',
      message: `${head}: ${detail}; there is no backup of this cluster (no continuous backup point, no EtcdSnapshot that succeeded${skipped ? ' and passed its check' : ''})${skipped}, so there is nothing to rebuild from and nothing to approve: the data is gone; delete the EtcdCluster and create it again (empty, or with spec.bootstrap.restore from another backup)`,
    };
  }
  const plan = `approving rebuilds the cluster in place from ${describeSource(source)}: one member starts from it, keeping the cluster's name, Services and Secrets, then the cluster grows back to spec.replicas; writes after that point are given up${skipped}`;
  const ask = `nothing is done until approved: kubectl etcd approve-recovery ${cluster} (or kubectl annotate etcdcluster ${cluster} ${approvalFor(uid)})`;
  const approval = judgeApproval(input.approval, uid);
  if (approval.kind === 'Approved') return { kind: 'Rebuild', reason: 'QuorumLoss', source, gone };
  if (approval.kind === 'Refused') {
    return {
      kind: 'Wait',
      message: `${head}: ${approval.message}; ${detail}; ${plan}; ${ask}`,
      refused: { value: approval.value, message: approval.message },
    };
  }
  return { kind: 'Wait', message: `${head}: ${detail}; ${plan}; ${ask}` };
}

/** What spec.rollback asks for, as a backup point (a named snapshot's revision and time are read when it is restored). */
export function rollbackSource(rollback: EtcdClusterRollback): RebuildSource | undefined {
  const p = rollback.pointInTime;
  if (p?.revision !== undefined) return { kind: 'PointInTime', revision: p.revision };
  if (p?.time !== undefined) return { kind: 'PointInTime', time: p.time };
  if (rollback.snapshotRef)
    return { kind: 'Snapshot', snapshot: rollback.snapshotRef.name, revision: 0, takenAt: '' };
  return undefined;
}

/** A rollback to start now, or why none starts (nothing asked, not approved, or the cluster not healthy yet). */
export type RollbackGate =
  | { kind: 'None'; why: string }
  | {
      kind: 'Rollback';
      step: { kind: 'Rebuild'; reason: 'Rollback'; source: RebuildSource; gone: string[] };
    };

/**
 * A rollback starts only when spec.rollback names a point, the approve-rollback annotation is this cluster's uid,
 * and the cluster is healthy: etcd answers and every member it lists is a started, reachable voter, as many as
 * spec.replicas (a rollback replaces every member's data: it is not the way out of another problem, which the
 * planner handles first). An approval for another uid approves nothing.
 */
export function rollbackGate(input: {
  uid: string;
  replicas: number;
  rollback?: EtcdClusterRollback;
  approval?: string;
  etcd?: Pick<EtcdView, 'members'>;
}): RollbackGate {
  const { rollback, etcd } = input;
  if (!rollback) return { kind: 'None', why: 'spec.rollback is not set' };
  const approval = judgeApproval(input.approval, input.uid, Annotations.approveRollback);
  if (approval.kind === 'None') return { kind: 'None', why: 'not approved' };
  if (approval.kind === 'Refused') return { kind: 'None', why: approval.message };
  const source = rollbackSource(rollback);
  if (!source) return { kind: 'None', why: 'spec.rollback names no point' };
  if (!etcd) return { kind: 'None', why: 'etcd does not answer: a rollback waits for a healthy cluster' };
  const healthy = etcd.members.filter((m) => m.started && m.reachable && !m.isLearner);
  if (healthy.length !== etcd.members.length || healthy.length !== input.replicas || input.replicas === 0) {
    return {
      kind: 'None',
      why: `${healthy.length} of ${input.replicas} members are healthy voters: a rollback waits for a healthy cluster`,
    };
  }
  return { kind: 'Rollback', step: { kind: 'Rebuild', reason: 'Rollback', source, gone: [] } };
}
