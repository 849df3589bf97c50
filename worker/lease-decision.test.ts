import type { LeaseDecisionInput } from './lease-decision';
import { leaseDecision, microTime } from './lease-decision';

describe('leaseDecision', () => {
  const base = { me: 'b', nowMs: 100_000, unchangedSinceMs: 90_000 };
  const held = (holder: string | undefined) => ({
    ...(holder !== undefined ? { holder } : {}),
    durationSeconds: 15,
  });
  const cases: Array<[string, LeaseDecisionInput, string]> = [
    ['no Lease: create it', { ...base, lease: undefined }, 'create'],
    ['this replica holds it: renew', { ...base, lease: held('b') }, 'renew'],
    ['a released Lease (no holder) is acquired at once', { ...base, lease: held(undefined) }, 'acquire'],
    ['a released Lease (empty holder) is acquired at once', { ...base, lease: held('') }, 'acquire'],
    [
      'another holder that renewed within the duration keeps it',
      { ...base, lease: held('a'), unchangedSinceMs: 90_000 },
      'wait',
    ],
    [
      'another holder unchanged for exactly the duration loses it',
      { ...base, lease: held('a'), unchangedSinceMs: 85_000 },
      'steal',
    ],
    [
      'another holder unchanged for longer than the duration loses it',
      { ...base, lease: held('a'), unchangedSinceMs: 10_000 },
      'steal',
    ],
    [
      'a replica that only just started waits a full duration before stealing',
      { ...base, lease: held('a'), unchangedSinceMs: 100_000 },
      'wait',
    ],
  ];
  it.each(cases)('%s', (_name, input, action) => {
    expect(leaseDecision(input).action).toBe(action);
  });

  it('a wait names the holder and when it would be taken over', () => {
    expect(leaseDecision({ ...base, lease: held('a') })).toEqual({
      action: 'wait',
      holder: 'a',
      reason: 'held by a; taken over if not renewed within 5s',
    });
  });
});

describe('microTime', () => {
  it('writes six fractional digits, as metav1.MicroTime requires', () => {
    expect(microTime(Date.parse('2026-01-02T03:04:05.678Z'))).toBe('2026-01-02T03:04:05.678000Z');
  });
});
