// The defrag schedule's Temporal Schedule as data: its id per object, the spec a cron becomes, its note.
import { defragScheduleId, defragScheduleNote, defragScheduleSpec } from './defrag-schedule';

describe('defragScheduleSpec', () => {
  test.each([
    ['five fields pass as written', '0 3 * * 0', '0 3 * * 0'],
    ['steps, ranges and lists', '*/30 2-4 * * 1-5', '*/30 2-4 * * 1-5'],
    ['runs of spaces fold to one', '0  3 *   * *', '0 3 * * *'],
    ['surrounding space goes', ' 15 1 * * * ', '15 1 * * *'],
    ['@hourly', '@hourly', '0 * * * *'],
    ['@daily', '@daily', '0 0 * * *'],
    ['@midnight', '@midnight', '0 0 * * *'],
    ['@weekly', '@weekly', '0 0 * * 0'],
    ['@monthly', '@monthly', '0 0 1 * *'],
    ['@yearly', '@yearly', '0 0 1 1 *'],
    ['@annually', '@annually', '0 0 1 1 *'],
  ])('%s: %j becomes %j, judged in UTC', (_what, schedule, cron) => {
    expect(defragScheduleSpec(schedule)).toEqual({ cronExpressions: [cron], timezone: 'UTC' });
  });
});

describe('defragScheduleId', () => {
  test.each([
    [{ namespace: 'default', name: 'main', uid: 'u-1' }, 'etcdcluster/default/main/defrag/u-1'],
    [{ namespace: 'team-a', name: 'main', uid: 'u-1' }, 'etcdcluster/team-a/main/defrag/u-1'],
    // The same name created again is another object: another schedule, never the old one's.
    [{ namespace: 'default', name: 'main', uid: 'u-2' }, 'etcdcluster/default/main/defrag/u-2'],
  ])('%j -> %s', (ref, id) => {
    expect(defragScheduleId(ref)).toBe(id);
  });
});

test('the note names the cluster, its uid and the cron, in UTC', () => {
  expect(defragScheduleNote({ namespace: 'default', name: 'main', uid: 'u-1' }, '0 3 * * 0')).toBe(
    'defragments EtcdCluster default/main (uid u-1) on "0 3 * * 0" (UTC): kept by its cluster workflow',
  );
});
