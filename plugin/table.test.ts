import { formatAge, formatBytes, renderTable } from './table';

describe('renderTable', () => {
  test('pads columns to the widest cell, three spaces apart, headers upper-case, no trailing spaces', () => {
    expect(
      renderTable(
        ['name', 'ready', 'db size'],
        [
          ['main-0', true, '20 KiB'],
          ['main-10', false, undefined],
        ],
      ),
    ).toBe(['NAME      READY   DB SIZE', 'main-0    true    20 KiB', 'main-10   false   <none>'].join('\n'));
  });
  test('a table without rows is its header', () => {
    expect(renderTable(['a', 'b'], [])).toBe('A   B');
  });
});

describe('formatBytes', () => {
  test.each([
    [undefined, undefined],
    [0, '0 B'],
    [1023, '1023 B'],
    [1024, '1.0 KiB'],
    [20480, '20 KiB'],
    [2.5 * 1024 * 1024, '2.5 MiB'],
    [8 * 1024 ** 3, '8.0 GiB'],
  ])('%p bytes read %p', (bytes, want) => {
    expect(formatBytes(bytes)).toBe(want);
  });
});

describe('formatAge', () => {
  const now = Date.parse('2026-11-25T12:00:00Z');
  test.each([
    ['2026-11-25T11:59:15Z', '45s'],
    ['2026-11-25T11:48:00Z', '12m'],
    ['2026-11-25T09:00:00Z', '3h'],
    ['2026-11-23T12:00:00Z', '2d'],
    ['2026-11-25T12:00:05Z', '0s'],
    [undefined, undefined],
    ['not a time', undefined],
  ])('%p is %p before now', (iso, want) => {
    expect(formatAge(iso, now)).toBe(want);
  });
});
