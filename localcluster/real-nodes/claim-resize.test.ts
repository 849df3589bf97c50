// The local resizer grows only bound claims on its own volumes whose class allows expansion, and only when they ask for more.
import { planResizes } from './claim-resize';
import type { ResizeClaimView, ResizeVolumeView } from './claim-resize';

const claim = (over: Partial<ResizeClaimView> = {}): ResizeClaimView => ({
  namespace: 'db',
  name: 'data-main-0',
  volumeName: 'pvc-u1',
  phase: 'Bound',
  requested: '2Gi',
  capacity: '1Gi',
  storageClassName: 'grow',
  ...over,
});
const volume = (over: Partial<ResizeVolumeView> = {}): ResizeVolumeView => ({
  name: 'pvc-u1',
  ours: true,
  capacity: '1Gi',
  ...over,
});
const expandable = (name: string) => name === 'grow';

describe('planResizes', () => {
  const cases: [string, ResizeClaimView, ResizeVolumeView, number][] = [
    ['a bound claim asking for more on an expandable class is grown', claim(), volume(), 1],
    [
      'a claim already holding its request is left alone (by value)',
      claim({ requested: '1024Mi' }),
      volume(),
      0,
    ],
    [
      'a class without allowVolumeExpansion is never grown',
      claim({ storageClassName: 'fixed' }),
      volume(),
      0,
    ],
    ['a claim without a class is never grown', claim({ storageClassName: undefined }), volume(), 0],
    ['a claim that is not bound yet is left to the binder', claim({ phase: 'Pending' }), volume(), 0],
    ["a volume that is not ours is someone else's to grow", claim(), volume({ ours: false }), 0],
    ['a grown volume whose claim status lags is finished', claim(), volume({ capacity: '2Gi' }), 1],
  ];
  test.each(cases)('%s', (_title, c, v, count) => {
    const actions = planResizes([c], [v], expandable);
    expect(actions).toHaveLength(count);
    if (count) {
      expect(actions[0]).toEqual({
        kind: 'resize',
        namespace: 'db',
        claimName: 'data-main-0',
        volumeName: 'pvc-u1',
        size: c.requested,
      });
    }
  });
});
