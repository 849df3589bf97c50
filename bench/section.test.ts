import { formatTable } from './section';

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
