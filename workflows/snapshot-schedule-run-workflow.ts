// One run of an EtcdSnapshotSchedule, started by its Temporal Schedule: create an EtcdSnapshot, wait for it to finish, prune what retention drops.
//
// Invariant: pruning happens after this run's snapshot finished, so "the newest successful snapshot is
// never pruned" counts it; a run that cannot see its schedule any more (deleted) does nothing.
import { proxyActivities, setCurrentDetails, sleep, workflowInfo } from '@temporalio/workflow';
import type { ScheduleActivities } from '../activities/snapshot-schedule-activities';
import { isFinished } from '../crds/etcd-snapshot';
import type { ScheduleRunInput } from '../contracts/messages';
import { retentionVerdict } from './retention';
import { ActivityKinds } from './activity-kinds';

const acts = proxyActivities<ScheduleActivities>(ActivityKinds.entityCall);

/** How often the run looks at its snapshot, and for how long at most before pruning anyway. */
const PHASE_CHECK_MS = 5_000;
const MAX_WAIT_MS = 2 * 3_600_000;

/** `<schedule>-<yyyymmddhhmmss>` in UTC: sortable, readable, and the same on a retried activity. */
export function scheduledSnapshotName(schedule: string, at: Date): string {
  const stamp = at.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return `${schedule.slice(0, 253 - stamp.length - 1)}-${stamp}`;
}

const GONE = 'the EtcdSnapshotSchedule is gone; nothing to do';

export async function snapshotScheduleRunWorkflow(input: ScheduleRunInput): Promise<string> {
  const { schedule } = input;
  const current = await acts.readSchedule({ schedule });
  if (current === 'gone') return GONE;
  const { spec } = current;
  const startedAt = workflowInfo().startTime;
  const name = scheduledSnapshotName(schedule.name, startedAt);
  const details = (line: string) => setCurrentDetails(`**${schedule.namespace}/${name}**\n\n${line}`);

  const created = await acts.createScheduledSnapshot({
    schedule,
    name,
    clusterName: spec.clusterRef.name,
    destination: spec.destination,
    ...(spec.jobPlacement ? { jobPlacement: spec.jobPlacement } : {}),
  });
  // Deleted since the read above (Session 27's rehearsal: a run started as its test deleted the namespace retried
  // the create for ever). Recorded results before this value existed never equal it, so their replay is unchanged.
  if (created === 'schedule-gone') return GONE;
  await acts.writeScheduleStatus({
    schedule,
    status: { lastScheduleTime: startedAt.toISOString(), lastSnapshot: name },
  });

  let phase = await acts.readSnapshotPhase({ namespace: schedule.namespace, name });
  for (
    let waited = 0;
    phase !== 'gone' && !isFinished(phase) && waited < MAX_WAIT_MS;
    waited += PHASE_CHECK_MS
  ) {
    details(`snapshot ${phase ?? 'Pending'}`);
    await sleep(PHASE_CHECK_MS);
    phase = await acts.readSnapshotPhase({ namespace: schedule.namespace, name });
  }

  const snapshots = await acts.listScheduleSnapshots({ schedule });
  const verdict = retentionVerdict(snapshots, spec.retention, new Date());
  for (const p of verdict.prune) {
    details(`pruning ${p.name}: ${p.why}`);
    const outcome = await acts.pruneSnapshot({
      schedule,
      name: p.name,
      ...(p.uri ? { uri: p.uri } : {}),
      destination: spec.destination,
      ...(spec.jobPlacement ? { jobPlacement: spec.jobPlacement } : {}),
    });
    await acts.recordScheduleEvent({
      schedule,
      type: 'Normal',
      reason: 'SnapshotPruned',
      message: `${p.name} pruned (${p.why})${outcome === 'pruned' ? `; ${p.uri ?? ''} deleted` : ''}`,
    });
  }
  const newest = snapshots
    .filter((s) => s.phase === 'Succeeded' && verdict.keep.includes(s.name))
    .sort((a, b) => Date.parse(b.takenAt ?? b.createdAt) - Date.parse(a.takenAt ?? a.createdAt))[0];
  if (newest) {
    await acts.writeScheduleStatus({ schedule, status: { lastSuccessfulSnapshot: newest.name } });
  }
  const summary = `${name}: ${phase === 'gone' ? 'deleted' : (phase ?? 'Pending')}; pruned ${verdict.prune.length}, kept ${verdict.keep.length}`;
  details(summary);
  return summary;
}
