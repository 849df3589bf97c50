import { slicesFromPods } from './pod-endpoints';
import type { PodView } from './pod-endpoints';
import type { ServiceView } from './service-plan';

const svc = (over: Partial<ServiceView> = {}): ServiceView => ({
  namespace: 'ns',
  name: 'main-peer',
  uid: 'u',
  clusterIP: 'None',
  type: 'ClusterIP',
  publishNotReadyAddresses: true,
  selector: { app: 'etcd' },
  ports: [{ name: 'client', port: 2379, protocol: 'TCP' }],
  ...over,
});
const pod = (over: Partial<PodView> = {}): PodView => ({
  namespace: 'ns',
  labels: { app: 'etcd' },
  podIP: '127.1.0.5',
  ready: true,
  terminating: false,
  hostname: 'main-0',
  subdomain: 'main-peer',
  namedPorts: { metrics: 2381 },
  ...over,
});

describe('slicesFromPods', () => {
  test.each<[string, ServiceView, PodView[], number]>([
    ['a matching Pod with an IP is an endpoint', svc(), [pod()], 1],
    ['a Pod in another namespace is not', svc(), [pod({ namespace: 'other' })], 0],
    ['a Pod whose labels do not match is not', svc(), [pod({ labels: { app: 'x' } })], 0],
    ['a Pod without an IP yet is not', svc(), [pod({ podIP: undefined })], 0],
    ['a terminating Pod is not', svc(), [pod({ terminating: true })], 0],
    ['a Service without a selector has no derived endpoints', svc({ selector: undefined }), [pod()], 0],
  ])('%s', (_name, service, pods, endpoints) => {
    const slices = slicesFromPods([service], pods);
    expect(slices.flatMap((s) => s.endpoints)).toHaveLength(endpoints);
  });

  test('the hostname is published only under the Service the Pod names as its subdomain', () => {
    const [peer] = slicesFromPods([svc()], [pod()]);
    const [client] = slicesFromPods([svc({ name: 'main-client', clusterIP: '127.96.0.9' })], [pod()]);
    expect(peer?.endpoints[0]?.hostname).toBe('main-0');
    expect(client?.endpoints[0]?.hostname).toBeUndefined();
  });

  test('an unready Pod is listed with ready false, and a named targetPort resolves to the container port', () => {
    const [slice] = slicesFromPods(
      [svc({ ports: [{ name: 'm', port: 80, protocol: 'TCP', targetPort: 'metrics' }] })],
      [pod({ ready: false })],
    );
    expect(slice?.endpoints[0]?.ready).toBe(false);
    expect(slice?.ports).toEqual([{ name: 'm', port: 2381, protocol: 'TCP' }]);
  });
});
