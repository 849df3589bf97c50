import { goArch, microTime, nodeLabels, nodeStatus } from './node-object';
import type { NodeFacts } from './node-object';

const facts: NodeFacts = {
  nodeName: 'node-a',
  zone: 'zone-1',
  hostIp: '127.1.0.1',
  cpuCores: 2,
  memoryBytes: 8 * 2 ** 30,
  maxPods: 110,
  kubeletVersion: 'v1.35.4',
  kernelVersion: '6.1.0',
  architecture: 'amd64',
  bootId: 'b',
  machineId: 'm',
};

describe('node object', () => {
  it('labels the node with its hostname and zone', () => {
    expect(nodeLabels(facts)).toMatchObject({
      'kubernetes.io/hostname': 'node-a',
      'topology.kubernetes.io/zone': 'zone-1',
    });
  });

  it('reports the host IP as InternalIP and cpu, memory and pods as allocatable', () => {
    const s = nodeStatus(facts, 'now', 'since');
    expect(s['addresses']).toContainEqual({ type: 'InternalIP', address: '127.1.0.1' });
    expect(s['allocatable']).toMatchObject({ cpu: '2', memory: '8388608Ki', pods: '110' });
  });

  it('reports Ready=True with the heartbeat now and the transition at readySince', () => {
    const ready = (nodeStatus(facts, 'now', 'since')['conditions'] as Array<Record<string, string>>).find(
      (c) => c['type'] === 'Ready',
    );
    expect(ready).toMatchObject({ status: 'True', lastHeartbeatTime: 'now', lastTransitionTime: 'since' });
  });

  const arches: Array<[string, string, string]> = [
    ['x64 is amd64', 'x64', 'amd64'],
    ['arm64 stays arm64', 'arm64', 'arm64'],
  ];
  it.each(arches)('%s', (_n, a, g) => expect(goArch(a)).toBe(g));

  it('formats lease times with microseconds', () => {
    expect(microTime(new Date('2026-01-02T03:04:05.678Z'))).toBe('2026-01-02T03:04:05.678000Z');
  });
});
