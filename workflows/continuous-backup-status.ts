// What one look at the continuous backup means for status.backup, the ContinuousBackup condition and Events: pure, so
// the rules are tables. Invariant: the condition says True only when the store was known to hold everything etcd had
// within the promised lag plus the archiver's report interval; anything the operator cannot see is Unknown, not True.
import type { ContinuousBackupReport } from '../contracts/continuous-backup';
import type { EventReason } from '../contracts/event-reasons';
import { BACKUP_CONDITION, BackupReasons, type BackupReason } from '../crds/conditions';
import type { BackupGap, BackupStatus, Condition } from '../crds/etcd-cluster';

/** The archiver rewrites its state at least this often while nothing changes (agent/archiver.ts stateRefreshMs). */
export const ARCHIVER_REPORT_MS = 30_000;
/** The cluster workflow looks at the backup this often while it is on (a look costs one activity and one timer). */
export const BACKUP_LOOK_MS = 60_000;
/** From its Deployment's creation, the archiver has this long to take and upload its first full snapshot. */
export const ARCHIVER_START_GRACE_MS = 10 * 60_000;

export interface BackupLook {
  report: ContinuousBackupReport;
  maxLagSeconds: number;
  /** Epoch ms, the workflow's clock. */
  now: number;
  /** When this run first saw the archiver deployed (it gets a grace to start), if it did. */
  deployedAt: number | undefined;
  previous: { backup?: BackupStatus; condition?: Condition };
}

export interface BackupOutcome {
  /** undefined: the backup is off, status.backup goes. */
  backup: BackupStatus | undefined;
  condition: Omit<Condition, 'lastTransitionTime'> | undefined;
  events: Array<{ type: 'Normal' | 'Warning'; reason: EventReason; message: string }>;
}

const gapKey = (g: BackupGap) => `${g.afterRevision}-${g.beforeRevision}`;
const seconds = (ms: number) => Math.floor(ms / 1000);
/** The gaps, in the condition's message: the store is current, and still some points cannot be restored. */
function gapsNote(gaps: BackupGap[]): string {
  const newest = gaps[gaps.length - 1];
  if (!newest) return '';
  const count = gaps.length === 1 ? 'a gap is' : `${gaps.length} gaps are`;
  return `; ${count} recorded (newest: revisions ${newest.afterRevision + 1}..${newest.beforeRevision - 1}, ${newest.reason}), points inside cannot be restored (status.backup.gaps)`;
}

export function backupOutcome(look: BackupLook): BackupOutcome {
  const { report, previous, now } = look;
  const events: BackupOutcome['events'] = [];
  if (report.deployment === 'deleted' || report.deployment === 'absent')
    return { backup: undefined, condition: undefined, events };
  if (report.deployment === 'created' || report.deployment === 'replaced')
    events.push({
      type: 'Normal',
      reason: 'ArchiverDeployed',
      message: `the continuous backup's archiver was ${report.deployment === 'created' ? 'deployed' : 'redeployed for the changed spec'}; it resumes from what the store holds`,
    });

  const condition = (status: Condition['status'], reason: BackupReason, message: string) => ({
    type: BACKUP_CONDITION,
    status,
    reason,
    message,
  });
  let backup: BackupStatus = previous.backup ?? { gaps: [] };
  let next: BackupOutcome['condition'];
  const state = report.state;
  if (report.storeProblem) {
    next = condition(
      'Unknown',
      BackupReasons.BackupStoreUnreadable,
      `the operator cannot read the store: ${report.storeProblem}`,
    );
  } else if (!state) {
    const waited = look.deployedAt === undefined ? 0 : now - look.deployedAt;
    next =
      waited < ARCHIVER_START_GRACE_MS
        ? condition(
            'Unknown',
            BackupReasons.BackupStarting,
            'the archiver has not stored its first full snapshot yet',
          )
        : condition(
            'False',
            BackupReasons.BackupBehind,
            `the archiver has stored nothing ${seconds(waited)}s after it was deployed; see its log (kubectl logs deploy/<cluster>-archiver)`,
          );
  } else {
    const age = now - Date.parse(state.latestTime);
    const allowance = look.maxLagSeconds * 1000 + ARCHIVER_REPORT_MS + BACKUP_LOOK_MS / 2;
    const behind = age > allowance;
    backup = {
      latestRevision: state.latestRevision,
      latestTime: state.latestTime,
      // Within the allowance the store is as current as promised; past it the figure is how old the store is.
      lagSeconds: behind ? seconds(age) : 0,
      gaps: state.gaps,
    };
    next = behind
      ? condition(
          'False',
          BackupReasons.BackupBehind,
          `the store last held everything at ${state.latestTime} (revision ${state.latestRevision}), ${seconds(age)}s ago; the store may refuse writes or the archiver cannot run or reach etcd (kubectl logs deploy/<cluster>-archiver)`,
        )
      : condition(
          'True',
          BackupReasons.BackupCurrent,
          `every change up to revision ${state.latestRevision} is in the store as of ${state.latestTime}${gapsNote(state.gaps)}`,
        );
    const known = new Set((previous.backup?.gaps ?? []).map(gapKey));
    for (const g of state.gaps.filter((x) => !known.has(gapKey(x))))
      events.push({
        type: 'Warning',
        reason: 'BackupGapRecorded',
        message: `revisions ${g.afterRevision + 1}..${g.beforeRevision - 1} (${g.afterTime} to ${g.beforeTime}) are not in the backup (${g.reason}); points after revision ${g.beforeRevision} are restorable again`,
      });
  }
  const flipped = previous.condition?.status !== next.status || previous.condition?.reason !== next.reason;
  if (
    flipped &&
    (next.reason === BackupReasons.BackupBehind || next.reason === BackupReasons.BackupStoreUnreadable)
  )
    events.push({ type: 'Warning', reason: next.reason, message: next.message });
  return { backup, condition: next, events };
}
