import { createPodIpAllocator, firstServiceIp, stackLayout } from './stack-layout';

describe('stackLayout', () => {
  const cases: Array<[string, string, { pods: string; services: string; nodes: string[] }]> = [
    [
      'the default stack on 127.0.0.1 puts pods in 127.1/16 and services in 127.96/16',
      '127.0.0.1',
      { pods: '127.1.0.0/16', services: '127.96.0.0/16', nodes: ['127.0.1.1', '127.0.1.2', '127.0.1.3'] },
    ],
    [
      'a second stack on 127.77.0.1 uses disjoint ranges',
      '127.77.0.1',
      {
        pods: '127.78.0.0/16',
        services: '127.173.0.0/16',
        nodes: ['127.77.1.1', '127.77.1.2', '127.77.1.3'],
      },
    ],
  ];
  it.each(cases)('%s', (_name, hostIp, expected) => {
    const layout = stackLayout({ repoRoot: '/r', stateDir: '/s', hostIp });
    expect({
      pods: layout.podCidr,
      services: layout.serviceCidr,
      nodes: layout.nodes.map((n) => n.hostIp),
    }).toEqual(expected);
  });
  it('moves the S3 ports of a second stack, because MinIO also binds 127.0.0.1 at its port', () => {
    const ports = (hostIp: string) => stackLayout({ repoRoot: '/r', stateDir: '/s', hostIp }).ports;
    expect([ports('127.0.0.1').s3, ports('127.0.0.1').s3Console]).toEqual([9000, 9001]);
    expect([ports('127.77.0.1').s3, ports('127.77.0.1').s3Console]).toEqual([9154, 9155]);
  });
  it('refuses an address outside loopback', () => {
    expect(() => stackLayout({ repoRoot: '/r', stateDir: '/s', hostIp: '10.0.0.1' })).toThrow(
      /loopback only/,
    );
  });
  it('keeps every file of an instance inside its state folder', () => {
    const layout = stackLayout({ repoRoot: '/r', stateDir: '/s', hostIp: '127.0.0.1' });
    const files = [
      ...Object.values(layout.paths),
      ...layout.nodes.flatMap((n) => [n.stateDir, n.kubeconfig]),
    ];
    expect(files.every((f) => f.startsWith('/s/'))).toBe(true);
  });
  it('names three nodes in three zones', () => {
    const layout = stackLayout({ repoRoot: '/r', stateDir: '/s', hostIp: '127.0.0.1' });
    expect(layout.nodes.map((n) => [n.name, n.zone])).toEqual([
      ['node-a', 'zone-a'],
      ['node-b', 'zone-b'],
      ['node-c', 'zone-c'],
    ]);
  });
});

describe('firstServiceIp', () => {
  it('is the range base plus one', () => expect(firstServiceIp('10.96.0.0/16')).toBe('10.96.0.1'));
});

describe('createPodIpAllocator', () => {
  it('hands out distinct addresses, never .0, and reuses a released one only after the others', () => {
    const pool = createPodIpAllocator('127.1.0.0/16');
    const first = pool.allocate();
    expect(first).toBe('127.1.0.1');
    expect(pool.allocate()).toBe('127.1.0.2');
    pool.release(first);
    expect(pool.allocate()).toBe('127.1.0.3');
  });
  it('rolls over to the next third octet after .254', () => {
    const pool = createPodIpAllocator('127.1.0.0/16');
    const ips = Array.from({ length: 255 }, () => pool.allocate());
    expect(ips.at(-2)).toBe('127.1.0.254');
    expect(ips.at(-1)).toBe('127.1.1.1');
  });
});
