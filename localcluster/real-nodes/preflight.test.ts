import { preflightProblems, REQUIRED_COMMANDS, type MachineFacts } from './preflight';

const V1 = ['cpu', 'cpuacct', 'cpuset', 'memory', 'pids', 'devices', 'freezer']
  .map((c, i) => `${30 + i} 25 0:${30 + i} / /sys/fs/cgroup/${c} rw,relatime - cgroup cgroup rw,${c}`)
  .join('\n');
const ok: MachineFacts = {
  uid: 0,
  cgroupMountinfo: V1,
  filesystems: 'nodev\tproc\nnodev\toverlay\n',
  commandsFound: Object.fromEntries(REQUIRED_COMMANDS.map((c) => [c, true])),
  netnsSupported: true,
  vethBridgeError: undefined,
};

describe('preflightProblems', () => {
  const cases: Array<[string, Partial<MachineFacts>, string[]]> = [
    ['a root machine with cgroup v1, overlay, veth and the commands has none', {}, []],
    [
      'a cgroup v2 only machine is accepted',
      { cgroupMountinfo: '29 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw' },
      [],
    ],
    ['not root is named', { uid: 1000 }, ['not root']],
    ['no cgroups at all is named', { cgroupMountinfo: '' }, ['no cgroups']],
    [
      'a missing v1 controller is named',
      { cgroupMountinfo: V1.split('\n').slice(0, 6).join('\n') },
      ['freezer'],
    ],
    ['no overlay filesystem is named', { filesystems: 'nodev\tproc\n' }, ['overlay']],
    ['a failed veth probe is named', { vethBridgeError: 'Unknown device type' }, ['veth or bridge']],
    ['missing commands are named together', { commandsFound: { ip: false, umoci: false } }, ['ip, umoci']],
  ];
  it.each(cases)('%s', (_name, override, expected) => {
    const problems = preflightProblems({ ...ok, ...override });
    expect(problems).toHaveLength(expected.length);
    expected.forEach((text, i) => expect(problems[i]).toContain(text));
  });
});
