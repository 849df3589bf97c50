// Pure configuration of one real node: containerd's config (v3), the kubelet's KubeletConfiguration and the CNI
// network list, with every setting this machine kind needs (see docs/local-cluster.md, "Real nodes").
import { join } from 'node:path';
import { PAUSE_IMAGE } from '../images';
import type { RealNode } from './real-node-layout';

export interface NodeBinaries {
  runc: string;
  cniBinDir: string;
}

export const containerdPaths = (node: RealNode) => {
  const base = join(node.dir, 'containerd');
  return {
    config: join(base, 'config.toml'),
    root: join(base, 'root'),
    state: join(base, 'state'),
    runcRoot: join(base, 'runc'),
    /** containerd's registry hosts directory; `_default/hosts.toml` applies to every registry. */
    registryHostsDir: join(base, 'certs.d'),
    cniConfDir: join(node.dir, 'cni', 'net.d'),
    cniDataDir: join(node.dir, 'cni', 'ipam'),
  };
};

export const kubeProxyPaths = (node: RealNode) => ({
  config: join(node.dir, 'kube-proxy-config.yaml'),
  kubeconfig: join(node.dir, 'kube-proxy.kubeconfig'),
});

/**
 * kube-proxy in iptables mode inside the node's namespace (its rules die with it). It may not lower its OOM score
 * here, leaves the machine-wide conntrack table size alone, and masquerades Service traffic from outside the Pod
 * CIDRs (the host's, routed in through node-a), so replies return through the node that translated them.
 */
export function kubeProxyConfig(node: RealNode, clusterPodCidr: string): string {
  const p = kubeProxyPaths(node);
  const config = {
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    clientConnection: { kubeconfig: p.kubeconfig },
    hostnameOverride: node.name,
    mode: 'iptables',
    clusterCIDR: clusterPodCidr,
    detectLocalMode: 'ClusterCIDR',
    healthzBindAddress: '127.0.0.1:10256',
    metricsBindAddress: '127.0.0.1:10249',
    oomScoreAdj: 0,
    conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
    iptables: { localhostNodePorts: false },
    nodePortAddresses: [`${node.ip}/32`],
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

export const kubeletPaths = (node: RealNode) => ({
  config: join(node.dir, 'kubelet-config.yaml'),
  kubeconfig: join(node.dir, 'kubelet.kubeconfig'),
  rootDir: join(node.dir, 'kubelet'),
  certDir: join(node.dir, 'kubelet-pki'),
  podLogsDir: join(node.dir, 'pod-logs'),
});

const q = (s: string) => JSON.stringify(s);

/**
 * containerd 2.x, one per node: own root, state, sockets and runc root, so nodes share nothing but the kernel.
 * restrict_oom_score_adj: root here lacks CAP_SYS_RESOURCE, and without it every sandbox fails in runc with
 * "can't get final child's PID from pipe" (really: writing /proc/self/oom_score_adj is denied).
 * NRI is off because its socket path is global (/var/run/nri) and a second node's containerd would collide on it.
 */
export function containerdConfig(node: RealNode, bins: NodeBinaries): string {
  const p = containerdPaths(node);
  const runtime = 'plugins."io.containerd.cri.v1.runtime"';
  return `version = 3
root = ${q(p.root)}
state = ${q(p.state)}
disabled_plugins = ["io.containerd.nri.v1.nri"]

[grpc]
  address = ${q(node.containerdSocket)}

[ttrpc]
  address = ${q(`${node.containerdSocket}.ttrpc`)}

[debug]
  address = ""
  level = "info"

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = ${q(join(node.dir, 'containerd', 'opt'))}

[plugins."io.containerd.grpc.v1.cri"]
  disable_tcp_service = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"

[plugins."io.containerd.cri.v1.images".pinned_images]
  sandbox = ${q(PAUSE_IMAGE)}

[plugins."io.containerd.cri.v1.images".registry]
  config_path = ${q(p.registryHostsDir)}

[${runtime}]
  enable_selinux = false
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true

[${runtime}.containerd]
  default_runtime_name = "runc"

[${runtime}.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

[${runtime}.containerd.runtimes.runc.options]
  BinaryName = ${q(bins.runc)}
  Root = ${q(p.runcRoot)}
  SystemdCgroup = false

[${runtime}.cni]
  bin_dirs = [${q(bins.cniBinDir)}]
  conf_dir = ${q(p.cniConfDir)}
  max_conf_num = 1
`;
}

/**
 * Every registry, for a node's containerd: a closed port on the node's own loopback. No registry is reachable from the
 * node network (its FORWARD rules keep it closed, and the host's resolver is out of its reach), so an image that was
 * not imported is a pull failure whatever happens; without this each pull first waits ~50 s for DNS to time out, and
 * the kubelet's ErrImagePull (which the operator reports as ImagePullFailed) comes that much later than on a cluster
 * whose registry answers "not found". The error still names the image reference.
 */
export const UNREACHABLE_REGISTRY = 'http://127.0.0.1:1';
export function defaultRegistryHostsToml(): string {
  return `# Written by the local stack: no registry is reachable from the node network; pulls fail at once.
server = ${q(UNREACHABLE_REGISTRY)}
`;
}

/** bridge + host-local on the node's own Pod CIDR, no masquerade: Pod addresses stay visible across nodes and to the host. */
export function cniConflist(node: RealNode, networkName: string): string {
  const p = containerdPaths(node);
  return `${JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: networkName,
      plugins: [
        {
          type: 'bridge',
          bridge: 'cni0',
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            ranges: [[{ subnet: node.podCidr }]],
            routes: [{ dst: '0.0.0.0/0' }],
            dataDir: p.cniDataDir,
          },
        },
        { type: 'portmap', capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  )}\n`;
}

/**
 * The kubelet of one node: client-certificate identity, webhook authentication and authorization (anonymous off),
 * cgroup v1 with cgroupfs under its own cgroupRoot, oomScoreAdj 0 (it may not lower its own score here), and eviction
 * thresholds low enough that a full development disk does not taint every node.
 */
export function kubeletConfig(node: RealNode, caCert: string, dnsServiceIp?: string): string {
  const k = kubeletPaths(node);
  const config = {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    address: node.ip,
    port: 10250,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    healthzPort: 10248,
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: true },
      x509: { clientCAFile: caCert },
    },
    authorization: { mode: 'Webhook' },
    containerRuntimeEndpoint: `unix://${node.containerdSocket}`,
    cgroupDriver: 'cgroupfs',
    cgroupRoot: node.cgroupRoot,
    cgroupsPerQOS: true,
    enforceNodeAllocatable: ['pods'],
    failCgroupV1: false,
    failSwapOn: false,
    oomScoreAdj: 0,
    podCIDR: node.podCidr,
    podLogsDir: k.podLogsDir,
    clusterDomain: 'cluster.local',
    ...(dnsServiceIp ? { clusterDNS: [dnsServiceIp] } : {}),
    resolvConf: '/etc/resolv.conf',
    evictionHard: {
      'memory.available': '100Mi',
      'nodefs.available': '1%',
      'nodefs.inodesFree': '1%',
      'imagefs.available': '1%',
    },
    // The images were imported, not pulled: garbage-collecting one would make the next Pod fail to pull.
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    serializeImagePulls: false,
    registerNode: true,
    maxPods: 50,
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

export function kubeletArgs(node: RealNode): string[] {
  const k = kubeletPaths(node);
  return [
    `--config=${k.config}`,
    `--kubeconfig=${k.kubeconfig}`,
    `--root-dir=${k.rootDir}`,
    `--cert-dir=${k.certDir}`,
    `--node-ip=${node.ip}`,
    `--hostname-override=${node.name}`,
    `--node-labels=topology.kubernetes.io/zone=${node.zone}`,
    '--v=1',
  ];
}
