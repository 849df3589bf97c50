import { FaultClient } from './fault-client';
import { startFaultServer, type FaultServer } from './fault-server';
import type { NodeFaults } from './node/types';

/** A recording NodeFaults: the endpoint under test is the HTTP wiring, so the node agent is the boundary. */
function recorder(name: string, calls: string[]): NodeFaults {
  const rec =
    (what: string) =>
    async (...args: unknown[]) => {
      calls.push(`${name}.${what}(${args.filter((a) => a !== undefined).join(',')})`);
    };
  return {
    crashContainer: rec('crash'),
    freezeContainer: rec('freeze'),
    thawContainer: rec('thaw'),
    nodeDown: rec('down'),
    nodeUp: rec('up'),
  };
}

describe('fault-control endpoint and client', () => {
  const calls: string[] = [];
  let server: FaultServer;
  let client: FaultClient;
  beforeAll(async () => {
    server = await startFaultServer(
      '127.0.0.1',
      0,
      {
        nodes: new Map([
          ['node-a', { zone: 'zone-a', faults: recorder('node-a', calls) }],
          ['node-b', { zone: 'zone-b', faults: recorder('node-b', calls) }],
        ]),
        nodeOfPod: async (ns, pod) => (ns === 'default' && pod === 'etcd-0' ? 'node-b' : undefined),
        wipeClaim: async (ns, claim) => void calls.push(`wipe(${ns},${claim})`),
      },
      () => undefined,
    );
    client = new FaultClient(server.url);
  });
  afterAll(() => server.close());
  beforeEach(() => calls.splice(0));

  it('sends a container fault to the node the pod is bound to', async () => {
    await client.crashContainer('default', 'etcd-0', 'etcd');
    await client.freezeContainer('default', 'etcd-0');
    await client.thawContainer('default', 'etcd-0');
    expect(calls).toEqual([
      'node-b.crash(default,etcd-0,etcd)',
      'node-b.freeze(default,etcd-0)',
      'node-b.thaw(default,etcd-0)',
    ]);
  });
  it('reports a node as down until it is brought back up', async () => {
    await client.nodeDown('node-a');
    expect((await client.listNodes()).find((n) => n.name === 'node-a')).toEqual({
      name: 'node-a',
      zone: 'zone-a',
      down: true,
    });
    await client.nodeUp('node-a');
    expect((await client.listNodes()).every((n) => !n.down)).toBe(true);
    expect(calls).toEqual(['node-a.down()', 'node-a.up()']);
  });
  it('wipes a claim', async () => {
    await client.wipeClaim('default', 'data-etcd-0');
    expect(calls).toEqual(['wipe(default,data-etcd-0)']);
  });
  it('says which pod is unknown instead of guessing a node', async () => {
    await expect(client.crashContainer('default', 'ghost')).rejects.toThrow(
      /404.*default\/ghost does not exist/,
    );
  });
  it('says which node is unknown and lists the real ones', async () => {
    await expect(client.nodeDown('node-z')).rejects.toThrow(/no node node-z; nodes: node-a, node-b/);
  });
});
