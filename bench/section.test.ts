import { formatTable, formatValue } from './section';

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
});

describe('formatValue', () => {
  it.each([
    ['seconds to a tenth', 12.345, 's', '12.3'],
    ['a whole count as it is', 3, '/min', '3'],
    ['a small rate to a hundredth, so it does not print as 0', 0.05, '/cluster/min', '0.05'],
    ['a large figure without decimals', 212.7, 'MB', '213'],
  ])('%s', (_case, value, unit, expected) => {
    expect(formatValue(value, unit)).toBe(expected);
  });
});
