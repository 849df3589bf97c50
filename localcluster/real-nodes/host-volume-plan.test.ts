// The host provisioner's decisions, claim -> action and volume -> action, as tables.
import {
  claimAction,
  isVolumeFolderOf,
  planHostVolumes,
  volumeAction,
  type ClaimView,
  type ClassView,
  type HostVolumeAction,
  type ProvisionerFolders,
  type VolumeView,
} from './host-volume-plan';

const LOCAL = 'rancher.io/local-path';
const SIZED = 'etcd-conductor.dev/local-path-sized';
const folders: ProvisionerFolders = {
  [LOCAL]: { 'node-a': '/s/nodes/node-a/volumes', 'node-b': '/s/nodes/node-b/volumes' },
  [SIZED]: { 'node-a': '/s/nodes/node-a/sized-volumes', 'node-b': '/s/nodes/node-b/sized-volumes' },
};
const classes = new Map<string, ClassView>(
  [
    {
      name: 'local-path',
      provisioner: LOCAL,
      reclaimPolicy: 'Delete',
      volumeBindingMode: 'WaitForFirstConsumer',
    },
    { name: 'mine', provisioner: LOCAL, reclaimPolicy: 'Retain', volumeBindingMode: 'WaitForFirstConsumer' },
    { name: 'now', provisioner: LOCAL, volumeBindingMode: 'Immediate' },
    {
      name: 'local-path-sized',
      provisioner: SIZED,
      reclaimPolicy: 'Delete',
      volumeBindingMode: 'WaitForFirstConsumer',
    },
    { name: 'csi', provisioner: 'ebs.csi.aws.com', volumeBindingMode: 'WaitForFirstConsumer' },
  ].map((c) => [c.name, c]),
);

const claim = (over: Partial<ClaimView> = {}): ClaimView => ({
  namespace: 'db',
  name: 'data-m-0',
  uid: 'u1',
  storageClassName: 'local-path',
  selectedNode: 'node-b',
  accessModes: ['ReadWriteOnce'],
  volumeMode: 'Filesystem',
  requested: '1Gi',
  hasSelector: false,
  deleting: false,
  ...over,
});

const provision = (over: Record<string, unknown> = {}): HostVolumeAction => ({
  kind: 'provision',
  volume: {
    name: 'pvc-u1',
    provisioner: LOCAL,
    node: 'node-b',
    path: '/s/nodes/node-b/volumes/pvc-u1_db_data-m-0',
    capacity: '1Gi',
    accessModes: ['ReadWriteOnce'],
    reclaimPolicy: 'Delete',
    storageClassName: 'local-path',
    claim: { namespace: 'db', name: 'data-m-0', uid: 'u1' },
    ...over,
  },
});
const refuse = (reason: string): HostVolumeAction => ({
  kind: 'refuse',
  namespace: 'db',
  claimName: 'data-m-0',
  claimUid: 'u1',
  reason,
});

describe('claimAction', () => {
  const cases: [string, ClaimView, string[], HostVolumeAction | undefined][] = [
    [
      'a claim of the default class on the node the scheduler chose gets a folder on that node',
      claim(),
      [],
      provision(),
    ],
    [
      "a claim of the size-limited class gets a folder in that node's tmpfs",
      claim({ storageClassName: 'local-path-sized', selectedNode: 'node-a' }),
      [],
      provision({
        provisioner: SIZED,
        node: 'node-a',
        path: '/s/nodes/node-a/sized-volumes/pvc-u1_db_data-m-0',
        storageClassName: 'local-path-sized',
      }),
    ],
    [
      "a user's own class naming the provisioner works, with its reclaim policy",
      claim({ storageClassName: 'mine', requested: '3Gi', accessModes: ['ReadWriteOncePod'] }),
      [],
      provision({
        storageClassName: 'mine',
        reclaimPolicy: 'Retain',
        capacity: '3Gi',
        accessModes: ['ReadWriteOncePod'],
      }),
    ],
    [
      'a claim waiting for its first consumer is left to wait',
      claim({ selectedNode: undefined }),
      [],
      undefined,
    ],
    [
      'a claim of an Immediate class is refused: a folder needs a node first',
      claim({ storageClassName: 'now', selectedNode: undefined }),
      [],
      refuse(
        'StorageClass now must use volumeBindingMode WaitForFirstConsumer: a volume is a folder on one node, which the scheduler picks',
      ),
    ],
    ['a claim already bound is left alone', claim({ volumeName: 'pvc-other' }), [], undefined],
    ['a claim being deleted gets nothing', claim({ deleting: true }), [], undefined],
    [
      'a claim whose volume was made on an earlier pass waits for the controller manager to bind it',
      claim(),
      ['pvc-u1'],
      undefined,
    ],
    ["a claim of another provisioner's class is not ours", claim({ storageClassName: 'csi' }), [], undefined],
    [
      'a claim naming a class that does not exist (yet) waits',
      claim({ storageClassName: 'later' }),
      [],
      undefined,
    ],
    [
      'a claim without a class waits (the default class admission names one)',
      claim({ storageClassName: undefined }),
      [],
      undefined,
    ],
    [
      'a claim with a selector is refused',
      claim({ hasSelector: true }),
      [],
      refuse('claim.spec.selector is not supported'),
    ],
    [
      'a claim asking for ReadWriteMany is refused',
      claim({ accessModes: ['ReadWriteOnce', 'ReadWriteMany'] }),
      [],
      refuse('access modes ReadWriteMany are not supported (only ReadWriteOnce)'),
    ],
    [
      'a block volume is refused',
      claim({ volumeMode: 'Block' }),
      [],
      refuse('volumeMode Block is not supported (volumes are folders)'),
    ],
    [
      'a node that is not one of the stack gets no folder',
      claim({ selectedNode: 'elsewhere' }),
      [],
      refuse('node elsewhere is not a node of this stack; no folder for its volumes'),
    ],
  ];
  it.each(cases)('%s', (_name, c, existing, expected) => {
    expect(claimAction(c, classes, new Set(existing), folders)).toEqual(expected);
  });
});

const volume = (over: Partial<VolumeView> = {}): VolumeView => ({
  name: 'pvc-u1',
  provisionedBy: LOCAL,
  phase: 'Released',
  reclaimPolicy: 'Delete',
  path: '/s/nodes/node-b/volumes/pvc-u1_db_data-m-0',
  ...over,
});

describe('volumeAction', () => {
  const reclaim = (path = '/s/nodes/node-b/volumes/pvc-u1_db_data-m-0'): HostVolumeAction => ({
    kind: 'reclaim',
    volumeName: 'pvc-u1',
    path,
  });
  const cases: [string, VolumeView, HostVolumeAction | undefined][] = [
    ['a released volume of ours with reclaim Delete loses its folder and itself', volume(), reclaim()],
    [
      'so does one of the size-limited class',
      volume({ provisionedBy: SIZED, path: '/s/nodes/node-a/sized-volumes/pvc-u1_db_data-m-0' }),
      reclaim('/s/nodes/node-a/sized-volumes/pvc-u1_db_data-m-0'),
    ],
    ['a bound volume stays', volume({ phase: 'Bound' }), undefined],
    ['a volume waiting for its claim to bind stays', volume({ phase: 'Available' }), undefined],
    ['a released volume with reclaim Retain keeps its data', volume({ reclaimPolicy: 'Retain' }), undefined],
    [
      "another provisioner's volume is never touched",
      volume({ provisionedBy: 'ebs.csi.aws.com' }),
      undefined,
    ],
    ['a volume without a provisioner is never touched', volume({ provisionedBy: undefined }), undefined],
    [
      "a path outside the provisioner's node folders is never removed",
      volume({ path: '/s/nodes/node-b/other/pvc-u1' }),
      undefined,
    ],
    ['the node folder itself is never removed', volume({ path: '/s/nodes/node-b/volumes' }), undefined],
    [
      'a path climbing out of a node folder is never removed',
      volume({ path: '/s/nodes/node-b/volumes/..' }),
      undefined,
    ],
    ['a nested path is never removed', volume({ path: '/s/nodes/node-b/volumes/a/b' }), undefined],
    [
      "a path in the other provisioner's folders is not this volume's to remove",
      volume({ path: '/s/nodes/node-b/sized-volumes/pvc-u1_db_data-m-0' }),
      undefined,
    ],
  ];
  it.each(cases)('%s', (_name, v, expected) => {
    expect(volumeAction(v, folders)).toEqual(expected);
  });
});

describe('isVolumeFolderOf', () => {
  it('accepts only a direct child of a node folder', () => {
    const f = folders[LOCAL] ?? {};
    expect(isVolumeFolderOf(f, '/s/nodes/node-a/volumes/x')).toBe(true);
    expect(isVolumeFolderOf(f, '/s/nodes/node-a/volumesx/y')).toBe(false);
    expect(isVolumeFolderOf(f, '/s/nodes/node-a/volumes/.')).toBe(false);
  });
});

describe('planHostVolumes', () => {
  it('reclaims released volumes before it provisions, and skips claims whose volume exists', () => {
    const actions = planHostVolumes(
      [claim(), claim({ uid: 'u2', name: 'data-m-1' })],
      [volume({ name: 'pvc-old', path: '/s/nodes/node-a/volumes/pvc-old_db_x' }), volume({ phase: 'Bound' })],
      [...classes.values()],
      folders,
    );
    expect(actions.map((a) => (a.kind === 'provision' ? `provision ${a.volume.name}` : a.kind))).toEqual([
      'reclaim',
      'provision pvc-u2',
    ]);
  });
});
