import { firstServiceIp, stackLayout } from './stack-layout';

describe('stackLayout', () => {
  const cases: Array<[string, string, string]> = [
    ['the default stack on 127.0.0.1 puts Services in 10.0.96.0/20', '127.0.0.1', '10.0.96.0/20'],
    ['a second stack on 127.77.0.1 uses a disjoint range', '127.77.0.1', '10.77.96.0/20'],
  ];
  it.each(cases)('%s', (_name, hostIp, services) => {
    expect(stackLayout({ repoRoot: '/r', stateDir: '/s', hostIp }).serviceCidr).toBe(services);
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
  it('refuses a B octet above 158, where two stacks could share a port', () => {
    expect(() => stackLayout({ repoRoot: '/r', stateDir: '/s', hostIp: '127.159.0.1' })).toThrow(/B <= 158/);
    expect(stackLayout({ repoRoot: '/r', stateDir: '/s', hostIp: '127.158.0.1' }).ports.s3).toBe(9316);
  });
  it('keeps every file of an instance inside its state folder', () => {
    const layout = stackLayout({ repoRoot: '/r', stateDir: '/s', hostIp: '127.0.0.1' });
    const files = [...Object.values(layout.paths), ...layout.nodes.map((n) => n.stateDir)];
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
