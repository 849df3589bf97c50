import { quantile } from './fleet';

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
