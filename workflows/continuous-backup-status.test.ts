// The continuous backup's status, condition and Events as a table of looks.
import { ARCHIVER_START_GRACE_MS, backupOutcome, type BackupLook } from './continuous-backup-status';
import type { ContinuousBackupReport } from '../contracts/continuous-backup';
import type { BackupGap, Condition } from '../crds/etcd-cluster';

const now = Date.parse('2026-11-25T10:00:00.000Z');
const ago = (s: number) => new Date(now - s * 1000).toISOString();
const gap: BackupGap = {
  afterRevision: 100,
  beforeRevision: 140,
  afterTime: ago(600),
  beforeTime: ago(500),
  reason: 'compacted',
};
const state = (ageSeconds: number, gaps: BackupGap[] = []) => ({
  latestRevision: 1234,
  latestTime: ago(ageSeconds),
  gaps,
});
const cond = (status: Condition['status'], reason: string): Condition => ({
  type: 'ContinuousBackup',
  status,
  reason,
  message: '',
  lastTransitionTime: ago(900),
});
const look = (report: ContinuousBackupReport, extra: Partial<BackupLook> = {}): BackupLook => ({
  report,
  maxLagSeconds: 5,
  now,
  deployedAt: now - 1000,
  previous: {},
  ...extra,
});

test.each<
  [string, BackupLook, { status?: string; reason?: string; lag?: number; events: string[]; backup?: 'none' }]
>([
  [
    'off: status.backup and the condition go, nothing is told',
    look({ deployment: 'deleted' }),
    { backup: 'none', events: [] },
  ],
  ['off and already gone: the same', look({ deployment: 'absent' }), { backup: 'none', events: [] }],
  [
    'just deployed, no state yet: Unknown, starting, told once as deployed',
    look({ deployment: 'created' }),
    { status: 'Unknown', reason: 'BackupStarting', events: ['ArchiverDeployed'] },
  ],
  [
    'no state past the start grace: False, behind, told',
    look({ deployment: 'unchanged' }, { deployedAt: now - ARCHIVER_START_GRACE_MS - 1 }),
    { status: 'False', reason: 'BackupBehind', events: ['BackupBehind'] },
  ],
  [
    'a fresh state: True, current, lag 0',
    look({ deployment: 'unchanged', state: state(3) }),
    { status: 'True', reason: 'BackupCurrent', lag: 0, events: [] },
  ],
  [
    'a state as old as the report interval while idle is still current',
    look({ deployment: 'unchanged', state: state(40) }),
    { status: 'True', reason: 'BackupCurrent', lag: 0, events: [] },
  ],
  [
    'a state older than lag + report interval + half a look: False, behind, the age as lag',
    look({ deployment: 'unchanged', state: state(120) }),
    { status: 'False', reason: 'BackupBehind', lag: 120, events: ['BackupBehind'] },
  ],
  [
    'still behind on the next look: not told again',
    look(
      { deployment: 'unchanged', state: state(180) },
      { previous: { condition: cond('False', 'BackupBehind') } },
    ),
    { status: 'False', reason: 'BackupBehind', lag: 180, events: [] },
  ],
  [
    'an unreadable store: Unknown, told once',
    look({ deployment: 'unchanged', storeProblem: 'AccessDenied' }),
    { status: 'Unknown', reason: 'BackupStoreUnreadable', events: ['BackupStoreUnreadable'] },
  ],
  [
    'a new gap: told once with its revisions',
    look({ deployment: 'unchanged', state: state(3, [gap]) }),
    { status: 'True', reason: 'BackupCurrent', lag: 0, events: ['BackupGapRecorded'] },
  ],
  [
    'a gap already in status: not told again',
    look({ deployment: 'unchanged', state: state(3, [gap]) }, { previous: { backup: { gaps: [gap] } } }),
    { status: 'True', reason: 'BackupCurrent', lag: 0, events: [] },
  ],
  [
    'a redeploy for a changed spec is told',
    look({ deployment: 'replaced', state: state(3) }),
    { status: 'True', reason: 'BackupCurrent', lag: 0, events: ['ArchiverDeployed'] },
  ],
])('%s', (_name, l, want) => {
  const out = backupOutcome(l);
  expect(out.events.map((e) => e.reason)).toEqual(want.events);
  if (want.backup === 'none') {
    expect(out.backup).toBeUndefined();
    expect(out.condition).toBeUndefined();
    return;
  }
  expect(out.condition).toMatchObject({ type: 'ContinuousBackup', status: want.status, reason: want.reason });
  if (want.lag !== undefined) expect(out.backup?.lagSeconds).toBe(want.lag);
});

test('status.backup carries the state as read, gaps included; an unreadable store keeps the last known status', () => {
  const fresh = backupOutcome(look({ deployment: 'unchanged', state: state(3, [gap]) }));
  expect(fresh.backup).toEqual({ latestRevision: 1234, latestTime: ago(3), lagSeconds: 0, gaps: [gap] });
  const blind = backupOutcome(
    look({ deployment: 'unchanged', storeProblem: 'x' }, { previous: { backup: fresh.backup! } }),
  );
  expect(blind.backup).toEqual(fresh.backup);
});

test('the gap Event says which revisions and times are not restorable', () => {
  const [event] = backupOutcome(look({ deployment: 'unchanged', state: state(3, [gap]) })).events;
  expect(event?.message).toBe(
    `revisions 101..139 (${gap.afterTime} to ${gap.beforeTime}) are not in the backup (compacted); points after revision 140 are restorable again`,
  );
});

test('a current store with gaps says so in the condition: the store is current, and some points are not restorable', () => {
  const plain = backupOutcome(look({ deployment: 'unchanged', state: state(3) })).condition;
  expect(plain?.message).toBe(`every change up to revision 1234 is in the store as of ${ago(3)}`);
  const later: BackupGap = { ...gap, afterRevision: 500, beforeRevision: 520 };
  const one = backupOutcome(look({ deployment: 'unchanged', state: state(3, [gap]) })).condition;
  expect(one?.message).toBe(
    `every change up to revision 1234 is in the store as of ${ago(3)}; a gap is recorded (newest: revisions 101..139, compacted), points inside cannot be restored (status.backup.gaps)`,
  );
  const two = backupOutcome(look({ deployment: 'unchanged', state: state(3, [gap, later]) })).condition;
  expect(two?.message).toContain('; 2 gaps are recorded (newest: revisions 501..519, compacted)');
});
