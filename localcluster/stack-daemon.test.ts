import { decideUp, type UpDecision } from './stack-daemon';

describe('decideUp', () => {
  const cases: Array<[string, Parameters<typeof decideUp>[0], UpDecision]> = [
    [
      'a healthy recorded stack is reused',
      { recordedHealthy: true, recorded: true, startingDaemonAlive: true, startingDaemonRecorded: true },
      'already-running',
    ],
    [
      'a daemon still starting is waited for, not duplicated',
      { recordedHealthy: false, recorded: false, startingDaemonAlive: true, startingDaemonRecorded: true },
      'wait-for-starting-daemon',
    ],
    [
      'a recorded but unhealthy stack is cleaned up first',
      { recordedHealthy: false, recorded: true, startingDaemonAlive: false, startingDaemonRecorded: false },
      'clean-up-then-start',
    ],
    [
      'a daemon that died while starting is cleaned up first',
      { recordedHealthy: false, recorded: false, startingDaemonAlive: false, startingDaemonRecorded: true },
      'clean-up-then-start',
    ],
    [
      'an empty state folder just starts',
      { recordedHealthy: false, recorded: false, startingDaemonAlive: false, startingDaemonRecorded: false },
      'start',
    ],
  ];
  it.each(cases)('%s', (_n, state, expected) => expect(decideUp(state)).toBe(expected));
});
