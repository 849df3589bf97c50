import { stackLayout } from '../stack-layout';
import { podGateway, realNodeLayout } from './real-node-layout';

const layoutFor = (hostIp: string) => realNodeLayout(stackLayout({ repoRoot: '/r', stateDir: '/s', hostIp }));

describe('realNodeLayout', () => {
  it('derives every name and address of a stack from the B octet of its host IP', () => {
    const net = layoutFor('127.60.0.1');
    expect(net).toMatchObject({
      prefix: 'ec60',
      bridge: 'ec60-br',
      bridgeIp: '10.60.0.1',
      nodeNetwork: '10.60.0.0/24',
      clusterPodCidr: '10.60.128.0/17',
      apiserverPort: 6443,
    });
    expect(net.nodes.map((n) => [n.name, n.netns, n.hostVeth, n.ip, n.podCidr, n.cgroupRoot])).toEqual([
      ['node-a', 'ec60-node-a', 'ec60-a', '10.60.0.11', '10.60.128.0/24', '/etcd-conductor-ec60-node-a'],
      ['node-b', 'ec60-node-b', 'ec60-b', '10.60.0.12', '10.60.129.0/24', '/etcd-conductor-ec60-node-b'],
      ['node-c', 'ec60-node-c', 'ec60-c', '10.60.0.13', '10.60.130.0/24', '/etcd-conductor-ec60-node-c'],
    ]);
    expect(net.nodes[0]?.containerdSocket).toBe('/s/nodes/node-a/containerd/containerd.sock');
  });
  it('gives two stacks that may coexist disjoint names and networks', () => {
    const a = layoutFor('127.60.0.1');
    const b = layoutFor('127.62.0.1');
    const names = (n: typeof a) => [
      n.bridge,
      ...n.nodes.flatMap((x) => [x.netns, x.hostVeth, x.cgroupRoot, x.ip]),
    ];
    expect(names(a).filter((x) => names(b).includes(x))).toEqual([]);
  });
  it('keeps link names within the kernel limit of 15 characters for the largest allowed host IP', () => {
    const net = layoutFor('127.158.254.1');
    for (const name of [
      net.bridge,
      ...net.nodes.map((n) => n.hostVeth),
      `${net.prefix}-pfb`,
      `${net.prefix}-pfp`,
    ])
      expect(name.length).toBeLessThanOrEqual(15);
  });
});

describe('podGateway', () => {
  it('is the first address of the Pod CIDR', () => {
    expect(podGateway('10.60.129.0/24')).toBe('10.60.129.1');
  });
});
