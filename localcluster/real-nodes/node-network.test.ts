import { stackLayout } from '../stack-layout';
import { ipForwardOnDown, otherStackBridges } from './node-network';
import { realNodeLayout } from './real-node-layout';

const net = realNodeLayout(stackLayout({ repoRoot: '/r', stateDir: '/s', hostIp: '127.20.0.1' }));

describe('ip_forward on down', () => {
  it.each([
    ['a stack set it and no other stack is up: restored', '0', [], '0'],
    ['a stack set it but another stack still routes Pods: left on', '0', ['ec62-br'], undefined],
    ['no stack set it (it was on before): left alone', undefined, [], undefined],
  ])('%s', (_what, original, otherBridges, expected) => {
    expect(ipForwardOnDown({ original, otherBridges })).toBe(expected);
  });

  it("counts only other stacks' bridges, never its own or unrelated ones", () => {
    const links = [
      '3: ec20-br: <BROADCAST,MULTICAST,UP> mtu 1500',
      '7: ec62-br: <BROADCAST,MULTICAST,UP> mtu 1500',
      '9: docker0: <BROADCAST,MULTICAST> mtu 1500',
      '11: cni0: <BROADCAST,MULTICAST> mtu 1500',
    ].join('\n');
    expect(otherStackBridges(links, net)).toEqual(['ec62-br']);
  });
});
