import { hostEntries } from './host-names';

describe('hostEntries', () => {
  it("names ClusterIP Services by their ClusterIP and headless Services' named endpoints by their Pod IPs", () => {
    const entries = hostEntries(
      [
        { namespace: 'default', name: 'rn-client', clusterIp: '10.60.101.36' },
        { namespace: 'default', name: 'rn-peer', clusterIp: 'None' },
      ],
      [
        {
          namespace: 'default',
          service: 'rn-peer',
          endpoints: [
            { hostname: 'rn-0', addresses: ['10.60.130.2'] },
            { hostname: undefined, addresses: ['10.60.128.9'] },
          ],
        },
        // A ClusterIP Service's endpoints are reached through its ClusterIP, never by name.
        {
          namespace: 'default',
          service: 'rn-client',
          endpoints: [{ hostname: 'rn-0', addresses: ['10.60.130.2'] }],
        },
      ],
    );
    expect(entries).toEqual([
      { ip: '10.60.101.36', name: 'rn-client.default.svc' },
      { ip: '10.60.101.36', name: 'rn-client.default.svc.cluster.local' },
      { ip: '10.60.130.2', name: 'rn-0.rn-peer.default.svc' },
      { ip: '10.60.130.2', name: 'rn-0.rn-peer.default.svc.cluster.local' },
    ]);
  });
});
