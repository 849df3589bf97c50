import { KUBELET_BACK_OFF, planRestart } from './crash-loop-back-off';
import type { BackOffEntry, RestartPlan } from './crash-loop-back-off';

describe('planRestart', () => {
  const cases: Array<[string, BackOffEntry | undefined, number, number, RestartPlan]> = [
    [
      'the first failure restarts at once and arms a 10 s back-off',
      undefined,
      1000,
      1000,
      { delayMs: 0, next: { backOffMs: 10_000, lastUpdate: 1000 } },
    ],
    [
      'a second quick failure waits the armed 10 s and doubles it',
      { backOffMs: 10_000, lastUpdate: 0 },
      1000,
      1000,
      { delayMs: 10_000, next: { backOffMs: 20_000, lastUpdate: 11_000 } },
    ],
    [
      'time already spent since the exit counts toward the wait',
      { backOffMs: 10_000, lastUpdate: 0 },
      1000,
      5000,
      { delayMs: 6000, next: { backOffMs: 20_000, lastUpdate: 11_000 } },
    ],
    [
      'the back-off never grows past five minutes',
      { backOffMs: 300_000, lastUpdate: 0 },
      1000,
      1000,
      { delayMs: 300_000, next: { backOffMs: 300_000, lastUpdate: 301_000 } },
    ],
    [
      'an entry older than twice the maximum is forgotten',
      { backOffMs: 160_000, lastUpdate: 0 },
      700_000,
      700_000,
      { delayMs: 0, next: { backOffMs: 10_000, lastUpdate: 700_000 } },
    ],
    [
      'the wait is measured from the exit, however long the container ran',
      { backOffMs: 10_000, lastUpdate: 0 },
      60_000,
      60_000,
      { delayMs: 10_000, next: { backOffMs: 20_000, lastUpdate: 70_000 } },
    ],
  ];
  it.each(cases)('%s', (_name, entry, finishedAt, now, expected) => {
    expect(planRestart(entry, finishedAt, now, KUBELET_BACK_OFF)).toEqual(expected);
  });
});
