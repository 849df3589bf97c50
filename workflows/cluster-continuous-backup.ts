// The cluster workflow's part in spec.backup.continuous: keep the archiver's Deployment, read the store, and decide
// status.backup, the ContinuousBackup condition and the Events to tell (continuous-backup-status.ts backupOutcome).
import { proxyActivities } from '@temporalio/workflow';
import type { ContinuousBackupActivities } from '../activities/continuous-backup-activities';
import type { ContinuousBackupReport } from '../contracts/continuous-backup';
import { BACKUP_CONDITION } from '../crds/conditions';
import type { Condition, EtcdClusterSpec } from '../crds/etcd-cluster';
import { CONTINUOUS_BACKUP_DEFAULTS } from '../crds/etcd-cluster';
import { ActivityKinds } from './activity-kinds';
import type { ClusterRunState } from './cluster-run-state';
import { clusterActs as acts } from './cluster-run-state';
import { backupOutcome } from './continuous-backup-status';

const backupActs = proxyActivities<ContinuousBackupActivities>(ActivityKinds.entityCallBounded);

export async function keepContinuousBackup(s: ClusterRunState, spec: EtcdClusterSpec): Promise<void> {
  let report: ContinuousBackupReport;
  try {
    report = await backupActs.keepContinuousBackup({ ref: s.ref, spec });
  } catch {
    return;
  }
  const now = Date.now();
  const deployedAt =
    report.deployment === 'created' || report.deployment === 'replaced' ? now : (s.backup?.deployedAt ?? now);
  const outcome = backupOutcome({
    report,
    maxLagSeconds: spec.backup?.continuous?.maxLagSeconds ?? CONTINUOUS_BACKUP_DEFAULTS.maxLagSeconds,
    now,
    deployedAt,
    // What status says now: the condition and gaps last written, so a flip or a new gap is told once.
    previous: {
      ...(s.status?.backup ? { backup: s.status.backup } : {}),
      ...prevBackupCondition(s),
    },
  });
  s.backup = { deployedAt, outcome };
  for (const e of outcome.events) await acts.recordEvent({ ref: s.ref, ...e });
}

function prevBackupCondition(s: ClusterRunState): { condition?: Condition } {
  const c = s.status?.conditions?.find((x) => x.type === BACKUP_CONDITION);
  return c ? { condition: c } : {};
}
