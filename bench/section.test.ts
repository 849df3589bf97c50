import { formatRatio, formatSpread, formatTable, formatValue, median, summarize } from './section';

describe('formatTable', () => {
  it('aligns columns and shows a missing figure as n/a', () => {
    expect(
      formatTable([
        { section: 'local-stack', name: 'warm up', value: 12.345, unit: 's' },
        { section: 'local-stack', name: 'pod ready', value: undefined, unit: 'ms', note: 'no node' },
      ]),
    ).toBe(
      [
        'section      figure     value   note',
        '-----------  ---------  ------  -------',
        'local-stack  warm up    12.3 s',
        'local-stack  pod ready  n/a     no node',
      ].join('\n'),
    );
  });

  it('adds spread, floor and ratio columns when a figure has them', () => {
    expect(
      formatTable([
        {
          section: 'operator',
          name: 'create 3',
          value: 6.21,
          unit: 's',
          spread: { min: 5.9, max: 7.04, runs: 3 },
          floor: 2.07,
        },
        { section: 'operator', name: 'idle writes', value: 0, unit: '/min', note: 'target 0' },
      ]),
    ).toBe(
      [
        'section   figure       value   min-max (runs)  floor  ratio  note',
        '--------  -----------  ------  --------------  -----  -----  --------',
        'operator  create 3     6.2 s   5.9-7.0 (3)     2.1 s  3.0x',
        'operator  idle writes  0 /min                                target 0',
      ].join('\n'),
    );
  });
});

describe('formatValue', () => {
  it.each([
    ['seconds to a tenth', 12.345, 's', '12.3'],
    ['seconds below one to a hundredth, so 0.3 s and 0.34 s differ', 0.344, 's', '0.34'],
    ['a whole count as it is', 3, '/min', '3'],
    ['a small rate to a hundredth, so it does not print as 0', 0.05, '/cluster/min', '0.05'],
    ['a large figure without decimals', 212.7, 'MB', '213'],
  ])('%s', (_case, value, unit, expected) => {
    expect(formatValue(value, unit)).toBe(expected);
  });
});

describe('median and summarize', () => {
  it.each<[string, Array<number | undefined>, number | undefined, string]>([
    ['the middle of an odd count', [3, 1, 2], 2, '1.0-3.0 (3)'],
    ['the mean of the middle two of an even count', [4, 1, 3, 2], 2.5, '1.0-4.0 (4)'],
    ['a run without a sample is left out of median and count', [2, undefined, 4], 3, '2.0-4.0 (2)'],
    ['one run has no spread to print', [1.5], 1.5, ''],
    ['no run at all gives no figure', [undefined], undefined, ''],
  ])('%s', (_case, samples, value, spread) => {
    const s = summarize(samples);
    expect(s.value).toBe(value);
    expect(formatSpread(s.spread, 's')).toBe(spread);
  });

  it('median of nothing is undefined', () => {
    expect(median([])).toBeUndefined();
  });
});

describe('formatRatio', () => {
  it.each<[string, number | undefined, number | undefined, string]>([
    ['figure over floor to a tenth', 6.3, 2.1, '3.0x'],
    ['below the floor reads under 1', 0.9, 1.2, '0.8x'],
    ['no floor, no ratio', 6.3, undefined, ''],
    ['a floor of 0 gives no ratio rather than infinity', 1, 0, ''],
    ['no figure, no ratio', undefined, 2, ''],
  ])('%s', (_case, value, floor, expected) => {
    expect(formatRatio(value, floor)).toBe(expected);
  });
});
