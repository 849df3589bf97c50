import { looksInHourAfter, MAX_WAIT_MS, waitBackoffMs } from './wait-backoff';

describe('waitBackoffMs', () => {
  it.each([
    ['the first look comes after the first pause', 0, 5000, 5000],
    ['each unchanged look doubles the pause', 3, 5000, 40_000],
    ['the pause stops growing at ten minutes', 8, 5000, MAX_WAIT_MS],
    ['a very long wait stays at ten minutes', 10_000, 5000, MAX_WAIT_MS],
    ['an operation starts at one second', 0, 1000, 1000],
    ['a first pause longer than the cap is capped', 0, 3_600_000, MAX_WAIT_MS],
  ])('%s', (_name, streak, firstMs, expected) => {
    expect(waitBackoffMs(streak, firstMs)).toBe(expected);
  });
});

describe('looks at an unchanging world', () => {
  it.each([
    ['the cluster workflow (5 s first)', 5000],
    ['an operation (1 s first)', 1000],
  ])('%s looks at most 10 times in the hour after its first five minutes', (_name, firstMs) => {
    // Each look costs about eleven history events (timer, activity, two workflow tasks): 10 looks stay under 120.
    const looks = looksInHourAfter(5 * 60_000, firstMs);
    expect(looks).toBeLessThanOrEqual(10);
    expect(looks).toBeGreaterThanOrEqual(6);
  });
});
