import { cpuBetween, quantile } from './fleet';

describe('quantile (nearest rank)', () => {
  test.each([
    ['none', [], 0.5, undefined],
    ['one sample is every quantile', [7], 0.99, 7],
    ['p50 of an odd count is the middle', [3, 1, 2], 0.5, 2],
    ['p50 of an even count is the lower middle', [4, 1, 3, 2], 0.5, 2],
    ['p99 of 50 is the largest', Array.from({ length: 50 }, (_, i) => i + 1), 0.99, 50],
    ['p99 of 200 is the 198th', Array.from({ length: 200 }, (_, i) => i + 1), 0.99, 198],
  ] as const)('%s', (_what, xs, q, want) => {
    expect(quantile(xs, q)).toBe(want);
  });
});

describe('cpuBetween: CPU seconds each operator process used between two samples', () => {
  const at = (name: string, cpuSeconds: number) => ({ name, rssMb: 200, cpuSeconds });
  test.each([
    ['no process in both', [at('a', 1)], [at('b', 5)], undefined],
    ['one process', [at('a', 1.5)], [at('a', 4)], { total: 2.5, each: 'a 2.5' }],
    [
      'two replicas add up, each named',
      [at('a', 1), at('b', 2)],
      [at('a', 11), at('b', 7)],
      { total: 15, each: 'a 10.0, b 5.0' },
    ],
    [
      'a replica that started meanwhile is left out',
      [at('a', 1)],
      [at('a', 2), at('c', 9)],
      { total: 1, each: 'a 1.0' },
    ],
  ] as const)('%s', (_what, before, after, want) => {
    expect(cpuBetween(before, after)).toEqual(want);
  });
});
