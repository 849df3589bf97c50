import { clusterDnsManifests, corefile, dnsServes } from './cluster-dns';

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
    expect(corefile()).toMatch(/^\.:1053 \{/);
    expect(corefile()).toContain('kubernetes cluster.local in-addr.arpa ip6.arpa');
  });
  it("never caches answers for cluster.local, as kubeadm's default Corefile: a name asked for before its Pod exists resolves once it does", () => {
    const cache = corefile('10.60.0.1:10053').match(/\n {4}cache \d+ \{\n([^}]*)\}/)?.[1] ?? '';
    expect(cache.split('\n').map((l) => l.trim())).toEqual(
      expect.arrayContaining(['disable success cluster.local', 'disable denial cluster.local']),
    );
  });
  it("forwards other names to the host's resolver relay only when there is one", () => {
    expect(corefile()).not.toContain('forward');
    expect(corefile('10.60.0.1:10053')).toContain('    forward . 10.60.0.1:10053\n');
  });
  it('rolls CoreDNS when its Corefile changes, since it reads it only at start', () => {
    const hash = (upstream?: string) =>
      JSON.stringify(
        (clusterDnsManifests('10.60.96.10', upstream) as { items: Item[] }).items.find(
          (i) => i.kind === 'Deployment',
        ),
      ).match(/corefile-sha256":"([0-9a-f]+)"/)?.[1];
    expect(hash()).toMatch(/^[0-9a-f]{64}$/);
    expect(hash('10.60.0.1:10053')).not.toBe(hash());
  });
  it('creates the account before the Deployment that runs as it', () => {
    const kinds = items.map((i) => i.kind);
    expect(kinds.indexOf('ServiceAccount')).toBeLessThan(kinds.indexOf('Deployment'));
  });

  it('runs two CoreDNS Pods, preferably on different nodes, so one stopped node leaves names resolving', () => {
    const deployment = items.find((i) => i.kind === 'Deployment');
    expect(deployment?.spec).toMatchObject({
      replicas: 2,
      template: {
        spec: {
          affinity: {
            podAntiAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [
                {
                  weight: 100,
                  podAffinityTerm: {
                    labelSelector: { matchLabels: { 'k8s-app': 'kube-dns' } },
                    topologyKey: 'kubernetes.io/hostname',
                  },
                },
              ],
            },
          },
        },
      },
    });
  });
});

describe('dnsServes', () => {
  test.each([
    ['none available yet (kubectl prints nothing)', '', false],
    ['none available', '0', false],
    ['one of two', '1', true],
    ['both at once (CI saw this jump and waited out 90 s on "exactly 1")', '2', true],
    ['with a newline', '2\n', true],
  ])('%s', (_name, out, expected) => {
    expect(dnsServes(out)).toBe(expected);
  });
});
