import type { RetentionCandidate } from './retention';
import { parseDuration, retentionVerdict } from './retention';

const NOW = new Date('2026-03-01T12:00:00Z');
/** A snapshot taken `minutesAgo` before NOW. */
function snap(name: string, phase: RetentionCandidate['phase'], minutesAgo: number): RetentionCandidate {
  const at = new Date(NOW.getTime() - minutesAgo * 60_000).toISOString();
  return {
    name,
    createdAt: at,
    ...(phase ? { phase } : {}),
    ...(phase === 'Succeeded' ? { takenAt: at, uri: `s3://b/${name}.db` } : {}),
  };
}

describe('parseDuration', () => {
  test.each([
    ['30s', 30_000],
    ['30m', 1_800_000],
    ['36h', 129_600_000],
    ['7d', 604_800_000],
    ['1d12h', 129_600_000],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  test.each(['', '7', 'h', '7 days', '-1h', '1.5h'])('%p is refused with a message naming it', (text) => {
    expect(() => parseDuration(text)).toThrow(`not a duration: "${text}"`);
  });
});

describe('retentionVerdict', () => {
  const pruned = (snapshots: RetentionCandidate[], retention: Parameters<typeof retentionVerdict>[1]) =>
    retentionVerdict(snapshots, retention, NOW)
      .prune.map((p) => p.name)
      .sort();

  test.each<[string, RetentionCandidate[], Parameters<typeof retentionVerdict>[1], string[]]>([
    [
      'without a retention rule nothing is pruned',
      [snap('a', 'Succeeded', 300), snap('b', 'Succeeded', 200), snap('c', 'Failed', 100)],
      undefined,
      [],
    ],
    [
      'keepLast 2 prunes the oldest successful snapshots',
      [
        snap('a', 'Succeeded', 40),
        snap('b', 'Succeeded', 30),
        snap('c', 'Succeeded', 20),
        snap('d', 'Succeeded', 10),
      ],
      { keepLast: 2 },
      ['a', 'b'],
    ],
    [
      'keepLast counts only successful snapshots, not failed or running ones',
      [
        snap('a', 'Succeeded', 40),
        snap('b', 'Succeeded', 30),
        snap('c', 'Running', 5),
        snap('d', 'Pending', 1),
      ],
      { keepLast: 2 },
      [],
    ],
    [
      'maxAge prunes successful snapshots older than it',
      [snap('old', 'Succeeded', 120), snap('mid', 'Succeeded', 50), snap('new', 'Succeeded', 10)],
      { maxAge: '1h' },
      ['old'],
    ],
    [
      'the newest successful snapshot is kept even when older than maxAge',
      [snap('a', 'Succeeded', 600), snap('b', 'Succeeded', 500), snap('c', 'Failed', 10)],
      { maxAge: '1h' },
      ['a'],
    ],
    [
      'the newest successful snapshot is kept when later ones failed, whatever keepLast says',
      [snap('a', 'Succeeded', 30), snap('b', 'Failed', 20), snap('c', 'Failed', 10)],
      { keepLast: 1 },
      [],
    ],
    [
      'both limits apply: beyond keepLast or older than maxAge',
      [
        snap('a', 'Succeeded', 300),
        snap('b', 'Succeeded', 90),
        snap('c', 'Succeeded', 20),
        snap('d', 'Succeeded', 10),
      ],
      { keepLast: 3, maxAge: '1h' },
      ['a', 'b'],
    ],
    [
      'a failed snapshot goes once a newer one succeeded',
      [snap('f1', 'Failed', 30), snap('ok', 'Succeeded', 20), snap('f2', 'Failed', 10)],
      { keepLast: 5 },
      ['f1'],
    ],
    [
      'failed snapshots with no success yet stay until older than maxAge',
      [snap('f1', 'Failed', 120), snap('f2', 'Failed', 10)],
      { keepLast: 1, maxAge: '1h' },
      ['f1'],
    ],
    [
      'a snapshot still running is never pruned, however old',
      [snap('stuck', 'Running', 6000), snap('a', 'Succeeded', 20), snap('b', 'Succeeded', 10)],
      { keepLast: 1, maxAge: '1h' },
      ['a'],
    ],
    [
      'a snapshot with no phase yet is never pruned',
      [snap('new', undefined, 6000), snap('a', 'Succeeded', 10)],
      { keepLast: 1, maxAge: '1h' },
      [],
    ],
  ])('%s', (_name, snapshots, retention, want) => {
    expect(pruned(snapshots, retention)).toEqual(want);
  });

  test('every snapshot is either kept or pruned, exactly once', () => {
    const all = [
      snap('a', 'Succeeded', 50),
      snap('b', 'Failed', 40),
      snap('c', 'Succeeded', 30),
      snap('d', 'Running', 1),
    ];
    const v = retentionVerdict(all, { keepLast: 1 }, NOW);
    expect([...v.keep, ...v.prune.map((p) => p.name)].sort()).toEqual(['a', 'b', 'c', 'd']);
  });

  test('a pruned successful snapshot carries its stored object and the rule that pruned it', () => {
    const v = retentionVerdict(
      [snap('a', 'Succeeded', 20), snap('b', 'Succeeded', 10)],
      { keepLast: 1 },
      NOW,
    );
    expect(v.prune).toEqual([{ name: 'a', uri: 's3://b/a.db', why: 'beyond keepLast 1' }]);
  });

  test('takenAt orders snapshots, so a snapshot created early but taken late counts as newer', () => {
    const late = { ...snap('late', 'Succeeded', 5), createdAt: snap('x', undefined, 100).createdAt };
    expect(pruned([late, snap('early', 'Succeeded', 50)], { keepLast: 1 })).toEqual(['early']);
  });
});
