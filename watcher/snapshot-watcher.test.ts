import {
  reverifyRequest,
  scheduleChangeKey,
  snapshotChangeKey,
  snapshotJobChangeKey,
} from './snapshot-watcher';

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

describe('reverifyRequest', () => {
  const artifact = {
    uri: 's3://b/k',
    size: 1,
    sha256: 'a'.repeat(64),
    revision: 5,
    etcdVersion: '3.6.16',
    takenAt: 't',
  };
  const verified = (status: string) => [
    { type: 'Verified', status, reason: 'r', message: 'm', lastTransitionTime: 't' },
  ];
  const snap = (
    annotation: string | undefined,
    status: Record<string, unknown> = {},
    meta: Record<string, unknown> = {},
  ) =>
    ({
      metadata: {
        name: 's',
        namespace: 'ns',
        uid: 'u1',
        ...(annotation !== undefined
          ? { annotations: { 'etcd.conductor.dev/verify-request': annotation } }
          : {}),
        ...meta,
      },
      status: { phase: 'Succeeded', artifact, conditions: verified('True'), ...status },
    }) as never;
  test.each([
    ['a new request on a stored, checked snapshot', snap('2026-11-26'), '2026-11-26'],
    ['a request after a failed check', snap('again', { conditions: verified('False') }), 'again'],
    ['a request before any check (an older operator took it)', snap('x', { conditions: [] }), 'x'],
    ['no annotation', snap(undefined), undefined],
    ['an empty annotation', snap('  '), undefined],
    [
      'the request the last check answered',
      snap('r1', { verification: { jobName: 'j', run: 2, request: 'r1' } }),
      undefined,
    ],
    ['a check still running', snap('r2', { conditions: verified('Unknown') }), undefined],
    ['a snapshot that failed', snap('r', { phase: 'Failed', artifact: undefined }), undefined],
    ['a snapshot still running', snap('r', { phase: 'Running', artifact: undefined }), undefined],
    ['a snapshot being deleted', snap('r', {}, { deletionTimestamp: 'now' }), undefined],
  ])('%s', (_n, obj, want) => {
    expect(reverifyRequest(obj)).toBe(want);
  });

  test('a new request value and the end of a running check are changes the watcher acts on', () => {
    const base = snapshotChangeKey(snap('r1', { conditions: verified('Unknown') }));
    expect(snapshotChangeKey(snap('r1', { conditions: verified('Unknown') }))).toBe(base);
    expect(snapshotChangeKey(snap('r2', { conditions: verified('Unknown') }))).not.toBe(base);
    expect(snapshotChangeKey(snap('r1', { conditions: verified('True') }))).not.toBe(base);
  });
});
