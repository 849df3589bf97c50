import { scheduleChangeKey, snapshotChangeKey, snapshotJobChangeKey } from './snapshot-watcher';

describe('snapshotChangeKey', () => {
  const snap = (phase?: string, meta: Record<string, unknown> = {}) =>
    ({
      metadata: { name: 's', namespace: 'ns', uid: 'u1', ...meta },
      status: phase ? { phase } : {},
    }) as never;
  const base = snapshotChangeKey(snap('Running'));
  test.each([
    ['a resync of a running snapshot is no change', snap('Running'), true],
    ['Pending to Running is no change (both need the workflow)', snap('Pending'), true],
    ['finishing is a change', snap('Succeeded'), false],
    ['a deletion timestamp is a change', snap('Running', { deletionTimestamp: 'now' }), false],
    ['a recreated object is a change', snap('Running', { uid: 'u2' }), false],
  ])('%s', (_n, obj, same) => {
    expect(snapshotChangeKey(obj) === base).toBe(same);
  });
});

describe('scheduleChangeKey', () => {
  const sched = (meta: Record<string, unknown> = {}) =>
    ({ metadata: { name: 's', namespace: 'ns', uid: 'u1', generation: 2, ...meta } }) as never;
  const base = scheduleChangeKey(sched());
  test.each([
    ['a status-only update is no change', sched(), true],
    ['a new generation is a change', sched({ generation: 3 }), false],
    ['a deletion timestamp is a change', sched({ deletionTimestamp: 'now' }), false],
  ])('%s', (_n, obj, same) => {
    expect(scheduleChangeKey(obj) === base).toBe(same);
  });
});

describe('snapshotJobChangeKey', () => {
  const job = (status: Record<string, unknown>) => ({ metadata: { uid: 'j1' }, status });
  const base = snapshotJobChangeKey(job({ active: 1 }));
  test.each([
    ['the same Job again is no change', job({ active: 1 }), true],
    ['a failed Pod is a change', job({ active: 1, failed: 1 }), false],
    [
      'a Complete condition is a change',
      job({ active: 1, conditions: [{ type: 'Complete', status: 'True' }] }),
      false,
    ],
  ])('%s', (_n, obj, same) => {
    expect(snapshotJobChangeKey(obj) === base).toBe(same);
  });
});
