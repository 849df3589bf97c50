// etcd runs in Pods on the default stack's nodes and is reached the way a cluster client would: by DNS name and through a ClusterIP Service.
import { connect, createNamespace, deleteNamespace, eventually, type Kube } from './kube';
import { clientService, dnsName, etcdctl, etcdMemberPod, headlessService, isReady } from './etcd-pod';

/** Whether an IPv4 address lies in a CIDR: the stack's Pod and Service ranges differ by node runtime (stack.json). */
function inCidr(ip: string, cidr: string): boolean {
  const toInt = (a: string) => a.split('.').reduce((n, o) => n * 256 + Number(o), 0);
  const [base = '', bits = '32'] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  return /^\d+\.\d+\.\d+\.\d+$/.test(ip) && Math.floor(toInt(ip) / size) === Math.floor(toInt(base) / size);
}

describe('etcd Pods on the local stack', () => {
  let kube: Kube;
  let ns: string;
  beforeAll(async () => {
    kube = connect();
    ns = await createNamespace(kube, 'etcd-pods');
  }, 60000);
  afterAll(() => deleteNamespace(kube, ns), 60000);

  const ready = (name: string) =>
    eventually(
      `Pod ${name} to be Ready`,
      async () => isReady(await kube.core.readNamespacedPod({ namespace: ns, name })),
      60000,
    );

  it('a Pod running etcd 3.6 becomes Ready and answers on its DNS name', async () => {
    await kube.core.createNamespacedService({ namespace: ns, body: headlessService('solo') });
    await kube.core.createNamespacedPod({
      namespace: ns,
      body: etcdMemberPod({ namespace: ns, name: 'solo-0', subdomain: 'solo', members: ['solo-0'] }),
    });
    await ready('solo-0');
    const pod = await kube.core.readNamespacedPod({ namespace: ns, name: 'solo-0' });
    expect(inCidr(pod.status?.podIP ?? '', kube.info.podCidr)).toBe(true);
    const endpoint = `http://${dnsName({ name: 'solo-0', subdomain: 'solo', namespace: ns })}:2379`;
    await eventually(
      'etcd to answer on its DNS name',
      async () => (await etcdctl(kube.info, endpoint, 'put', 'greeting', 'hello')).includes('OK'),
      30000,
    );
    expect(await etcdctl(kube.info, endpoint, 'get', 'greeting', '--print-value-only')).toBe('hello\n');
    const status = JSON.parse(
      await etcdctl(kube.info, endpoint, 'endpoint', 'status', '-w', 'json'),
    ) as Array<{ Status: { version: string } }>;
    expect(status[0]?.Status.version).toBe('3.6.16');
  }, 120000);

  it('three Pods form a 3-member cluster through a headless Service, and a ClusterIP Service reaches it', async () => {
    const members = ['trio-0', 'trio-1', 'trio-2'];
    await kube.core.createNamespacedService({ namespace: ns, body: headlessService('trio') });
    const svc = await kube.core.createNamespacedService({
      namespace: ns,
      body: clientService('trio-client', 'trio'),
    });
    for (const name of members)
      await kube.core.createNamespacedPod({
        namespace: ns,
        body: etcdMemberPod({ namespace: ns, name, subdomain: 'trio', members }),
      });
    for (const name of members) await ready(name);

    const pods = await kube.core.listNamespacedPod({ namespace: ns, labelSelector: 'app=trio' });
    expect(new Set(pods.items.map((p) => p.spec?.nodeName)).size).toBeGreaterThanOrEqual(1);
    expect(inCidr(svc.spec?.clusterIP ?? '', kube.info.serviceCidr)).toBe(true);

    const viaService = `http://trio-client.${ns}.svc:2379`;
    await eventually(
      'the ClusterIP Service to reach the cluster',
      async () => (await etcdctl(kube.info, viaService, 'put', 'k', 'v')).includes('OK'),
      30000,
    );
    const list = JSON.parse(await etcdctl(kube.info, viaService, 'member', 'list', '-w', 'json')) as {
      members: Array<{ name: string }>;
    };
    expect(list.members.map((m) => m.name).sort()).toEqual(members);
    // Every member serves the write made through the Service: it went through raft. A member's own name resolves once
    // cluster DNS has the Pod in the headless Service's endpoints, a moment after it is Ready (a CI run asked too early
    // once: "no such host"): asked until it resolves, within a bound.
    for (const name of members) {
      const endpoint = `http://${dnsName({ name, subdomain: 'trio', namespace: ns })}:2379`;
      let value: string | undefined;
      await eventually(
        `${name} to answer at its own name`,
        async () => {
          value = await etcdctl(kube.info, endpoint, 'get', 'k', '--print-value-only', '--consistency=s');
          return true;
        },
        30000,
      );
      expect(value).toBe('v\n');
    }
  }, 180000);
});
