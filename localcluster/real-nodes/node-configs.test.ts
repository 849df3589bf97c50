import { stackLayout } from '../stack-layout';
import {
  cniConflist,
  containerdConfig,
  defaultRegistryHostsToml,
  kubeProxyConfig,
  kubeletArgs,
  kubeletConfig,
} from './node-configs';
import { realNodeLayout } from './real-node-layout';

const net = realNodeLayout(stackLayout({ repoRoot: '/r', stateDir: '/s', hostIp: '127.60.0.1' }));
const node = net.nodes[1]!;

describe('containerdConfig', () => {
  const toml = containerdConfig(node, { runc: '/t/runc', cniBinDir: '/t/cni' });
  it.each([
    ['restricts oom_score_adj, since root here lacks CAP_SYS_RESOURCE', 'restrict_oom_score_adj = true'],
    ['uses cgroupfs, not systemd', 'SystemdCgroup = false'],
    ['keeps Pod network namespaces under its own state dir', 'netns_mounts_under_state_dir = true'],
    ['listens on its own socket', 'address = "/s/nodes/node-b/containerd/containerd.sock"'],
    ['runs our runc with its own root', 'BinaryName = "/t/runc"\n  Root = "/s/nodes/node-b/containerd/runc"'],
    ['uses the locally built pause image', 'sandbox = "etcd-conductor.local/pause:1"'],
    [
      'finds the CNI plugins and its own network config',
      'bin_dirs = ["/t/cni"]\n  conf_dir = "/s/nodes/node-b/cni/net.d"',
    ],
    [
      'reads registry hosts from its own directory, where every registry is a closed local port',
      'config_path = "/s/nodes/node-b/containerd/certs.d"',
    ],
    [
      'turns NRI off, whose socket path is shared by every containerd',
      'disabled_plugins = ["io.containerd.nri.v1.nri"]',
    ],
  ])('%s', (_why, line) => {
    expect(toml).toContain(line);
  });
});

describe('defaultRegistryHostsToml', () => {
  it('sends every pull to a closed port on the node itself, so an image not imported fails at once', () => {
    expect(defaultRegistryHostsToml()).toMatch(/^server = "http:\/\/127\.0\.0\.1:1"$/m);
  });
});

describe('cniConflist', () => {
  it('bridges Pods on the node CIDR without masquerading, with IPAM state in the node folder', () => {
    const conf = JSON.parse(cniConflist(node, 'ec60')) as { plugins: Array<Record<string, unknown>> };
    expect(conf.plugins[0]).toMatchObject({
      type: 'bridge',
      isGateway: true,
      ipMasq: false,
      ipam: {
        type: 'host-local',
        ranges: [[{ subnet: '10.60.129.0/24' }]],
        dataDir: '/s/nodes/node-b/cni/ipam',
      },
    });
  });
});

describe('kubeletConfig', () => {
  const config = JSON.parse(kubeletConfig(node, '/s/pki/ca.crt')) as Record<string, unknown>;
  it('authenticates by client certificate and webhook, never anonymously, and authorizes by webhook', () => {
    expect(config.authentication).toEqual({
      anonymous: { enabled: false },
      webhook: { enabled: true },
      x509: { clientCAFile: '/s/pki/ca.crt' },
    });
    expect(config.authorization).toEqual({ mode: 'Webhook' });
    expect(config.readOnlyPort).toBe(0);
  });
  it('runs on cgroup v1 with cgroupfs under its own root and does not try to lower its OOM score', () => {
    expect(config).toMatchObject({
      failCgroupV1: false,
      cgroupDriver: 'cgroupfs',
      cgroupRoot: '/etcd-conductor-ec60-node-b',
      oomScoreAdj: 0,
      podCIDR: '10.60.129.0/24',
      containerRuntimeEndpoint: 'unix:///s/nodes/node-b/containerd/containerd.sock',
    });
  });
  it('registers under its node name and InternalIP with its zone label', () => {
    expect(kubeletArgs(node)).toEqual(
      expect.arrayContaining([
        '--node-ip=10.60.0.12',
        '--hostname-override=node-b',
        '--node-labels=topology.kubernetes.io/zone=zone-b',
      ]),
    );
  });
});

describe('kubeProxyConfig', () => {
  const config = JSON.parse(kubeProxyConfig(node, '10.60.128.0/17')) as Record<string, unknown>;
  it('runs in iptables mode for the Pod CIDRs without touching machine-wide settings it may not change here', () => {
    expect(config).toMatchObject({
      mode: 'iptables',
      clusterCIDR: '10.60.128.0/17',
      hostnameOverride: 'node-b',
      oomScoreAdj: 0,
      conntrack: { maxPerCore: 0 },
      clientConnection: { kubeconfig: '/s/nodes/node-b/kube-proxy.kubeconfig' },
    });
  });
});

describe('kubeletConfig with cluster DNS', () => {
  it('hands Pods the DNS Service address', () => {
    expect(JSON.parse(kubeletConfig(node, '/ca', '10.60.96.10'))).toMatchObject({
      clusterDNS: ['10.60.96.10'],
    });
  });
});
