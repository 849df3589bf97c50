import { clusterDnsManifests, COREFILE } from './cluster-dns';

interface Item {
  kind: string;
  spec?: Record<string, unknown>;
}

describe('clusterDnsManifests', () => {
  const items = (clusterDnsManifests('10.60.96.10') as { items: Item[] }).items;
  it('puts the kube-dns Service at the address the kubelets hand Pods, port 53 to CoreDNS on 1053', () => {
    const svc = items.find((i) => i.kind === 'Service');
    expect(svc?.spec).toMatchObject({
      clusterIP: '10.60.96.10',
      ports: [
        { port: 53, targetPort: 1053, protocol: 'UDP' },
        { port: 53, targetPort: 1053, protocol: 'TCP' },
      ],
    });
  });
  it('serves cluster.local from the API on the unprivileged port', () => {
    expect(COREFILE).toMatch(/^\.:1053 \{/);
    expect(COREFILE).toContain('kubernetes cluster.local in-addr.arpa ip6.arpa');
  });
  it('creates the account before the Deployment that runs as it', () => {
    const kinds = items.map((i) => i.kind);
    expect(kinds.indexOf('ServiceAccount')).toBeLessThan(kinds.indexOf('Deployment'));
  });
});
