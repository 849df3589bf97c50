import { resolveContainerCommand } from './container-command';
import type { CommandResolution } from './container-command';
import type { ImageResolution } from './types';

const etcd: ImageResolution = {
  commands: { etcd: ['/tools/etcd'], '/usr/local/bin/etcd': ['/tools/etcd'], etcdctl: ['/tools/etcdctl'] },
  entrypoint: ['/usr/local/bin/etcd'],
  path: ['/tools'],
};
const onDisk = new Set(['/bin/sh', '/tools/etcdutl']);

describe('resolveContainerCommand', () => {
  const cases: Array<[string, string[] | undefined, string[] | undefined, CommandResolution]> = [
    ['no command and no args runs the entrypoint', undefined, undefined, { argv: ['/tools/etcd'] }],
    [
      'args alone are appended to the entrypoint',
      undefined,
      ['--name', 'a'],
      { argv: ['/tools/etcd', '--name', 'a'] },
    ],
    [
      'a command replaces the entrypoint and args follow it',
      ['etcdctl'],
      ['get', 'k'],
      { argv: ['/tools/etcdctl', 'get', 'k'] },
    ],
    [
      'an absolute path the image maps is translated',
      ['/usr/local/bin/etcd'],
      ['--x'],
      { argv: ['/tools/etcd', '--x'] },
    ],
    ['a name on the image PATH is found there', ['etcdutl'], undefined, { argv: ['/tools/etcdutl'] }],
    [
      'an absolute path present on this machine runs as is',
      ['/bin/sh', '-c', 'true'],
      undefined,
      { argv: ['/bin/sh', '-c', 'true'] },
    ],
    [
      'a name found nowhere is a start error',
      ['nope'],
      undefined,
      { error: 'exec: "nope": executable file not found in $PATH' },
    ],
    [
      'a missing absolute path is a start error',
      ['/no/such'],
      undefined,
      { error: 'exec: "/no/such": stat /no/such: no such file or directory' },
    ],
  ];
  it.each(cases)('%s', (_n, command, args, expected) => {
    expect(resolveContainerCommand(etcd, command, args, ['/bin'], (p) => onDisk.has(p))).toEqual(expected);
  });
});
