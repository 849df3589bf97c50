// Downgrade: enable etcd's downgrade to the lower minor, restart members one by one on it (leader last), and let etcd finish the job.
import { proxyActivities } from '@temporalio/workflow';
import type { DowngradeActivities } from '../../activities/downgrade-activities';
import { ActivityKinds } from '../activity-kinds';
import { observeDowngradeIfDue } from '../downgrade-steps';
import type { OperationModule } from './operation-module';

// etcd's downgrade API (activities/downgrade-activities.ts).
const downgradeActs = proxyActivities<DowngradeActivities>(ActivityKinds.operationStep);

export const downgrade: OperationModule = {
  type: 'Downgrade',
  summarize: (ref, _from, _to, first) => {
    const v =
      first?.kind === 'UpgradeMember' || first?.kind === 'EnableDowngrade'
        ? first
        : first?.kind === 'MoveLeader' && first.reason === 'Upgrade'
          ? first.upgrade
          : undefined;
    return v ? `downgrade ${ref} ${v.from} -> ${v.to}` : `downgrade ${ref}`;
  },
  // Rolls like an upgrade; a rollback of an unfinished upgrade has a patch-only member too.
  alsoContinues: ['RecreatePod', 'UpgradeMember'],
  compensation: 'restartStoppedMember',
  snapshotBefore: ['UpgradeMember', 'MoveLeader', 'EnableDowngrade'],
  changesVersions: true,
  // The planner gates each restart on etcd's downgrade job (enabled, cluster version moved).
  async observe({ ref, spec }, observation) {
    const downgrade = await observeDowngradeIfDue(downgradeActs, ref, spec, observation);
    return downgrade ? { downgrade } : {};
  },
};
