// The real nodes' resizer grows only local-path volumes, in classes of rancher.io/local-path that allow expansion, when their claim asks for more.
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { planLocalPathResizes, PROVISIONED_BY } from './claim-resizer';
import { PROVISIONER_NAME } from './local-path-storage';

const claim = (
  requested = '2Gi',
  over: Partial<V1PersistentVolumeClaim['spec']> = {},
): V1PersistentVolumeClaim => ({
  metadata: { namespace: 'db', name: 'data-main-0' },
  spec: {
    volumeName: 'pvc-u1',
    storageClassName: 'grow',
    resources: { requests: { storage: requested } },
    ...over,
  },
  status: { phase: 'Bound', capacity: { storage: '1Gi' } },
});
/** A volume made by `provisionedBy` (none: no provisioned-by annotation). */
const volume = (provisionedBy: string | null = PROVISIONER_NAME, capacity = '1Gi'): V1PersistentVolume => ({
  metadata: {
    name: 'pvc-u1',
    ...(provisionedBy === null ? {} : { annotations: { [PROVISIONED_BY]: provisionedBy } }),
  },
  spec: { capacity: { storage: capacity } },
});
const storageClass = (name: string, provisioner: string, allowVolumeExpansion?: boolean): V1StorageClass => ({
  metadata: { name },
  provisioner,
  ...(allowVolumeExpansion === undefined ? {} : { allowVolumeExpansion }),
});
const grow = storageClass('grow', PROVISIONER_NAME, true);

describe('planLocalPathResizes', () => {
  const cases: [string, V1PersistentVolumeClaim, V1PersistentVolume, V1StorageClass[], string[]][] = [
    ['a claim asking for more in an expandable local-path class grows', claim(), volume(), [grow], ['2Gi']],
    ['a claim holding its request is left alone', claim('1Gi'), volume(), [grow], []],
    [
      'a local-path class without allowVolumeExpansion never grows',
      claim(),
      volume(),
      [storageClass('grow', PROVISIONER_NAME, false)],
      [],
    ],
    [
      'allowVolumeExpansion unset counts as not allowed',
      claim(),
      volume(),
      [storageClass('grow', PROVISIONER_NAME)],
      [],
    ],
    [
      "an expandable class of another provisioner is that provisioner's resizer's to grow",
      claim(),
      volume(),
      [storageClass('grow', 'ebs.csi.aws.com', true)],
      [],
    ],
    ['a class that is gone never grows', claim(), volume(), [], []],
    [
      'a volume the host provisioner did not make is left alone',
      claim(),
      volume('kubernetes.io/no-provisioner'),
      [grow],
      [],
    ],
    ['a volume without the provisioned-by annotation is left alone', claim(), volume(null), [grow], []],
    [
      'a claim whose volume already grew still gets its status raised',
      claim(),
      volume(PROVISIONER_NAME, '2Gi'),
      [grow],
      ['2Gi'],
    ],
  ];
  test.each(cases)('%s', (_what, c, v, classes, sizes) => {
    const actions = planLocalPathResizes([c], [v], classes);
    expect(actions.map((a) => a.size)).toEqual(sizes);
    for (const a of actions)
      expect(a).toEqual({
        kind: 'resize',
        namespace: 'db',
        claimName: 'data-main-0',
        volumeName: 'pvc-u1',
        size: '2Gi',
      });
  });
});
