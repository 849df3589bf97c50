import { planServices } from './service-plan';
import type { ServiceView, SliceView } from './service-plan';

const headless: ServiceView = {
  namespace: 'db',
  name: 'etcd',
  uid: 'h',
  clusterIP: 'None',
  type: 'ClusterIP',
  publishNotReadyAddresses: false,
  ports: [{ name: 'client', port: 2379, protocol: 'TCP' }],
};
const client: ServiceView = { ...headless, name: 'etcd-client', uid: 'c', clusterIP: '127.97.0.10' };
const slice = (serviceName: string): SliceView => ({
  namespace: 'db',
  serviceName,
  ports: [{ name: 'client', port: 2379, protocol: 'TCP' }],
  endpoints: [
    { addresses: ['127.1.0.2'], ready: true, hostname: 'etcd-0' },
    { addresses: ['127.1.0.3'], ready: false, hostname: 'etcd-1' },
  ],
});
const loopbackClusterIp = (s: ServiceView): string | undefined => s.clusterIP;

describe('planServices', () => {
  it('maps a headless service name to its ready endpoints and each hostname to its address', () => {
    const { hosts } = planServices([headless], [slice('etcd')], loopbackClusterIp);
    expect(hosts).toEqual([
      { ip: '127.1.0.2', name: 'etcd.db.svc' },
      { ip: '127.1.0.2', name: 'etcd.db.svc.cluster.local' },
      { ip: '127.1.0.2', name: 'etcd-0.etcd.db.svc' },
      { ip: '127.1.0.2', name: 'etcd-0.etcd.db.svc.cluster.local' },
      { ip: '127.0.0.1', name: '127-0-0-1.etcd.db.svc' },
      { ip: '127.0.0.1', name: '127-0-0-1.etcd.db.svc.cluster.local' },
    ]);
  });

  it('names 127.0.0.1, where every Pod connection comes from, under a headless service only while it has endpoints', () => {
    const loopbackNames = (slices: SliceView[]) =>
      planServices([headless, client], slices, loopbackClusterIp)
        .hosts.filter((h) => h.ip === '127.0.0.1')
        .map((h) => h.name);
    expect(loopbackNames([slice('etcd'), slice('etcd-client')])).toEqual([
      '127-0-0-1.etcd.db.svc',
      '127-0-0-1.etcd.db.svc.cluster.local',
    ]);
    expect(loopbackNames([{ ...slice('etcd'), endpoints: [] }])).toEqual([]);
  });

  it('includes not-ready endpoints when the service publishes them', () => {
    const { hosts } = planServices(
      [{ ...headless, publishNotReadyAddresses: true }],
      [slice('etcd')],
      loopbackClusterIp,
    );
    expect(hosts.map((h) => h.name)).toContain('etcd-1.etcd.db.svc');
  });

  it('maps a ClusterIP service name to its service address and forwards each port to ready endpoints only', () => {
    const plan = planServices([client], [slice('etcd-client')], loopbackClusterIp);
    expect(plan.hosts).toEqual([
      { ip: '127.97.0.10', name: 'etcd-client.db.svc' },
      { ip: '127.97.0.10', name: 'etcd-client.db.svc.cluster.local' },
    ]);
    expect(plan.forwarders).toEqual([
      {
        key: 'db/etcd-client/client',
        listenIp: '127.97.0.10',
        listenPort: 2379,
        targets: [{ ip: '127.1.0.2', port: 2379 }],
      },
    ]);
  });

  it('skips a ClusterIP service that has no loopback address', () => {
    expect(planServices([client], [], () => undefined)).toEqual({ hosts: [], forwarders: [] });
  });

  it('ignores endpoint slices of other services', () => {
    expect(planServices([headless], [slice('other')], loopbackClusterIp).hosts).toEqual([]);
  });
});
