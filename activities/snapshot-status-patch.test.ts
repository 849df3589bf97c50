// The status merge patch of an EtcdSnapshot: figures an earlier check measured and this one did not are nulled.
import type { EtcdSnapshotStatus } from '../crds/etcd-snapshot';
import { snapshotStatusPatch } from './snapshot-activities';

const first: EtcdSnapshotStatus = {
  phase: 'Succeeded',
  verification: {
    jobName: 's-verify-1',
    run: 1,
    revision: 41,
    keys: 40,
    hash: 7,
    sourceHash: 7,
    verifiedAt: 't1',
  },
};

test.each<[string, EtcdSnapshotStatus | undefined, EtcdSnapshotStatus, unknown]>([
  ['no status yet: the status as it is', undefined, { phase: 'Running' }, { status: { phase: 'Running' } }],
  [
    'no verification on either side: as it is',
    { phase: 'Running' },
    { phase: 'Succeeded' },
    { status: { phase: 'Succeeded' } },
  ],
  [
    'a re-check that measured nothing nulls the old figures and keeps what it names',
    first,
    {
      phase: 'Succeeded',
      verification: { jobName: 's-verify-2', run: 2, request: 'r', sourceHash: 7, verifiedAt: 't2' },
    },
    {
      status: {
        phase: 'Succeeded',
        verification: {
          revision: null,
          keys: null,
          hash: null,
          jobName: 's-verify-2',
          run: 2,
          request: 'r',
          sourceHash: 7,
          verifiedAt: 't2',
        },
      },
    },
  ],
  ['the same figures again: nothing nulled', first, first, { status: first }],
])('%s', (_n, current, next, want) => {
  expect(snapshotStatusPatch(current, next)).toEqual(want);
});
