import { planClaims } from './claim-plan';
import type { ClaimAction, ClaimView, VolumeView } from './claim-plan';

const claim = (over: Partial<ClaimView> = {}): ClaimView => ({
  namespace: 'db',
  name: 'data-etcd-0',
  uid: 'u1',
  storage: '1Gi',
  accessModes: ['ReadWriteOnce'],
  ...over,
});
const dirs = (name: string): string | undefined => `/claims/${name}`;

describe('planClaims', () => {
  const cases: Array<[string, ClaimView[], VolumeView[], Array<ClaimAction['kind']>]> = [
    ['a new pending claim gets a volume and is bound to it', [claim()], [], ['create-volume', 'bind-claim']],
    [
      'a claim whose volume exists but is not bound yet is bound',
      [claim()],
      [{ name: 'pvc-u1', ours: true, claimUid: 'u1' }],
      ['bind-claim'],
    ],
    [
      'a bound claim needs nothing',
      [claim({ volumeName: 'pvc-u1', phase: 'Bound' })],
      [{ name: 'pvc-u1', ours: true, claimUid: 'u1' }],
      [],
    ],
    [
      'a claim bound to someone else’s volume is left alone',
      [claim({ volumeName: 'nfs-1', phase: 'Bound' })],
      [],
      [],
    ],
    [
      'a volume of ours whose claim is gone is deleted',
      [],
      [{ name: 'pvc-u9', ours: true, claimUid: 'u9' }],
      ['delete-volume'],
    ],
    [
      'a volume not made by the binder is never deleted',
      [],
      [{ name: 'manual', ours: false, claimUid: 'u9' }],
      [],
    ],
    ['a block-mode claim is not served', [claim({ volumeMode: 'Block' })], [], []],
    [
      'a claim naming a StorageClass that does not exist stays Pending',
      [claim({ storageClassName: 'missing' })],
      [],
      [],
    ],
    [
      'a claim naming an existing StorageClass is served',
      [claim({ storageClassName: 'standard' })],
      [],
      ['create-volume', 'bind-claim'],
    ],
    [
      'a claim whose volume was made before its class went away is still bound',
      [claim({ storageClassName: 'missing' })],
      [{ name: 'pvc-u1', ours: true, claimUid: 'u1' }],
      ['bind-claim'],
    ],
  ];
  it.each(cases)('%s', (_n, claims, volumes, kinds) => {
    const classes = new Set(['standard']);
    expect(planClaims(claims, volumes, '/claims', dirs, (n) => classes.has(n)).map((a) => a.kind)).toEqual(
      kinds,
    );
  });

  it('puts the data of a claim in a directory named after namespace, name and uid', () => {
    expect(planClaims([claim()], [], '/claims', dirs)[0]).toMatchObject({
      dataDir: '/claims/db_data-etcd-0_u1',
      volumeName: 'pvc-u1',
    });
  });
});
