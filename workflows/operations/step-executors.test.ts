import type { EtcdClusterSpec } from '../../crds/etcd-cluster';
import { moreRemovalsFollow } from './member-removal';

describe('moreRemovalsFollow: a removal whose clean-up the next removal need not wait for', () => {
  const ctx = (members: number, replicas: number) => ({
    spec: { replicas } as EtcdClusterSpec,
    recordedMembers: () => Array.from({ length: members }, (_, i) => `m-${i}`),
  });
  test.each([
    ['5 -> 3, the first removal: one more follows', 5, 3, 'ScaleDown', true],
    ['5 -> 3, the second removal: the last', 4, 3, 'ScaleDown', false],
    ['4 -> 3: the only removal', 4, 3, 'ScaleDown', false],
    ['7 -> 1, the first of six', 7, 1, 'ScaleDown', true],
    ['2 -> 1, the last', 2, 1, 'ScaleDown', false],
    ['a lost member removed while more members than replicas run: not a scale-down', 5, 3, 'DataLost', false],
    ['a zombie removed', 5, 3, 'Zombie', false],
  ] as const)('%s', (_name, members, replicas, reason, expected) => {
    expect(moreRemovalsFollow(ctx(members, replicas), { reason })).toBe(expected);
  });
});
