// Where a rebuild from a backup starts (the continuous backup's newest point, else the newest snapshot that did not
// fail its check) and the planner's gate on a quorum lost for good with no member left to recover from.
//
// Pure and sandbox-safe. Nothing here acts: without the user's approval naming this cluster's uid the answer is a
// wait whose message says what a rebuild would start from and what it gives up; with no backup at all it says
// plainly that there is nothing to approve. The Rebuild operation (workflows/operations/rebuild.ts) acts.
import type { BackupPoint, LossFindings } from '../contracts/quorum-loss';
import { approvalFor, judgeApproval } from './quorum-loss';
import type { QuorumLossVerdict } from './quorum-loss';

/** The backup point a rebuild restores: the continuous backup at its newest point, or one EtcdSnapshot. */
export type RebuildSource =
  | { kind: 'Continuous'; revision: number; time?: string }
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
