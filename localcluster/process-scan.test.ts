import { createServer } from 'node:net';
import { listeningPorts, selectStackProcesses, type ProcInfo } from './process-scan';

const proc = (pid: number, ppid: number, extra: Partial<ProcInfo> = {}): ProcInfo => ({
  pid,
  ppid,
  cwd: '/',
  stackDir: undefined,
  command: `p${pid}`,
  ...extra,
});

describe('selectStackProcesses', () => {
  const procs = [
    proc(1, 0),
    proc(10, 1, { command: 'daemon' }),
    proc(11, 10, { command: 'kube-apiserver' }),
    proc(12, 11, { command: 'grandchild' }),
    proc(20, 1, { stackDir: '/r/.local', command: 'orphaned etcd' }),
    proc(30, 1, { cwd: '/r/.local/nodes/node-a/pods/x', command: 'orphaned container' }),
    proc(40, 1, { cwd: '/r/.local-other', command: 'similar prefix, other folder' }),
    proc(50, 1, { stackDir: '/tmp/other-stack', command: 'another stack' }),
    proc(60, 1, { cwd: '/r/.local', command: 'the caller itself' }),
  ];
  const cases: Array<[string, number | undefined, Set<number>, number[]]> = [
    [
      'takes the owner with all descendants, marked and orphaned processes',
      10,
      new Set([60]),
      [10, 11, 12, 20, 30],
    ],
    ['still finds marked and orphaned processes when the owner is gone', undefined, new Set([60]), [20, 30]],
    ['never returns the caller or its ancestors', 10, new Set([10, 60]), [11, 12, 20, 30]],
  ];
  it.each(cases)('%s', (_n, owner, exclude, expected) => {
    expect(selectStackProcesses(procs, '/r/.local', owner, exclude).map((p) => p.pid)).toEqual(expected);
  });
});

describe('listeningPorts', () => {
  it('sees a socket listening on a loopback address and forgets it once closed', async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.99.0.7', r));
    const port = (server.address() as { port: number }).port;
    expect(listeningPorts('127.99.0.7')).toContain(port);
    await new Promise((r) => server.close(r));
    expect(listeningPorts('127.99.0.7')).not.toContain(port);
  });
});
