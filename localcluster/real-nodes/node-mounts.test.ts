import { parseCgroupMounts } from './node-cgroups';
import { mountsUnder } from './node-mounts';

describe('mountsUnder', () => {
  const info = [
    '1 0 0:1 / / rw - ext4 /dev/vda rw',
    '2 1 0:2 / /s/nodes/node-a/containerd/state/x/rootfs rw - overlay overlay rw',
    '3 1 0:3 / /s/nodes/node-a/kubelet/pods/p/volumes/v rw - tmpfs tmpfs rw',
    '4 1 0:4 / /s/nodes/node-ab rw - tmpfs tmpfs rw',
    '5 1 0:5 / /s/nodes/node-a/with\\040space rw - tmpfs tmpfs rw',
  ].join('\n');
  it('lists mounts inside the folder only, deepest first, with escaped names decoded', () => {
    expect(mountsUnder(info, '/s/nodes/node-a')).toEqual([
      '/s/nodes/node-a/kubelet/pods/p/volumes/v',
      '/s/nodes/node-a/containerd/state/x/rootfs',
      '/s/nodes/node-a/with space',
    ]);
  });
});

describe('parseCgroupMounts', () => {
  it('reads v1 controllers and the v2 mount', () => {
    const info = [
      '30 25 0:30 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu',
      '31 25 0:31 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd',
      '32 25 0:32 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
      '33 25 0:33 / /proc rw - proc proc rw',
    ].join('\n');
    expect(parseCgroupMounts(info)).toEqual([
      { path: '/sys/fs/cgroup/cpu', type: 'cgroup', controllers: ['cpu'] },
      { path: '/sys/fs/cgroup/systemd', type: 'cgroup', controllers: ['name=systemd'] },
      { path: '/sys/fs/cgroup/unified', type: 'cgroup2', controllers: [] },
    ]);
  });
});
