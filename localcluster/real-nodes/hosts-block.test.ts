import { renderHostsBlock, spliceHostsBlock } from './hosts-block';

describe('renderHostsBlock', () => {
  it('groups names by address between markers naming the stack', () => {
    const block = renderHostsBlock('s1', [
      { ip: '127.1.0.10', name: 'b.svc' },
      { ip: '127.1.0.9', name: 'a.svc' },
      { ip: '127.1.0.10', name: 'a.svc' },
    ]);
    expect(block).toBe(
      '# BEGIN etcd-conductor stack s1\n127.1.0.9\ta.svc\n127.1.0.10\ta.svc b.svc\n# END etcd-conductor stack s1',
    );
  });
});

describe('spliceHostsBlock', () => {
  const base = '127.0.0.1\tlocalhost\n';
  const block = renderHostsBlock('s1', [{ ip: '127.1.0.2', name: 'x' }]);
  const other = renderHostsBlock('s2', [{ ip: '127.2.0.2', name: 'y' }]);
  const cases: Array<[string, string, string | undefined, string]> = [
    ['a block is appended to a file without one', base, block, `${base}${block}\n`],
    [
      'an existing block is replaced in place of the old one',
      `${base}${renderHostsBlock('s1', [])}\n`,
      block,
      `${base}${block}\n`,
    ],
    ['removing the block restores the original file', `${base}${block}\n`, undefined, base],
    ['another stack’s block is kept', `${base}${other}\n`, block, `${base}${other}\n${block}\n`],
  ];
  it.each(cases)('%s', (_n, current, next, expected) => {
    expect(spliceHostsBlock(current, 's1', next)).toBe(expected);
  });
});
