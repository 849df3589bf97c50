// Pure naming and addressing of one stack's real nodes, derived from the stack's host IP 127.B.C.D only, so two stacks
// (whose B octets differ, see stack-layout.ts) never share a bridge, namespace, cgroup or address, and `down` can find
// exactly its own leftovers even after a crash.
import { join } from 'node:path';
import type { StackLayout } from '../stack-layout';

export interface RealNode {
  name: string;
  zone: string;
  /** Network namespace (/run/netns/<netns>) the node's containerd, kubelet and CNI bridge live in. */
  netns: string;
  /** Host end of the veth pair on the stack's bridge; the node's end is `eth0` in its namespace. */
  hostVeth: string;
  /** The node's InternalIP on the node network. */
  ip: string;
  /** This node's Pods get addresses from here (host-local IPAM); the host routes it via `ip`. */
  podCidr: string;
  /** The kubelet's cgroupRoot, created in every cgroup hierarchy before it starts. */
  cgroupRoot: string;
  dir: string;
  /** Where the local-path provisioner keeps this node's volumes; `down` removes it with the node. */
  volumesDir: string;
  /**
   * A tmpfs of SIZED_VOLUMES_BYTES mounted here at `up`: the volumes of the size-limited StorageClass, so a test can
   * fill a member's volume (`fault fill`) without touching the machine's disk. `down` unmounts it with the node.
   */
  sizedVolumesDir: string;
  containerdSocket: string;
  /** Client certificate identity `system:node:<name>` (the stack's PKI file stem). */
  pkiFile: string;
}

export interface RealNodeLayout {
  /** Prefix of every host-visible name of this stack (bridge, veths, namespaces, cgroups). */
  prefix: string;
  bridge: string;
  /** Host end of the node network: nodes' gateway, and where the apiserver is reachable from nodes and Pods. */
  bridgeIp: string;
  nodeNetwork: string;
  /** Union of the nodes' Pod CIDRs. */
  clusterPodCidr: string;
  /** The apiserver's Service CIDR (stack-layout.ts; kube-proxy routes it); the host reaches it through node-a. */
  serviceCidr: string;
  /** The cluster DNS Service address (the kubelets' clusterDNS). */
  dnsServiceIp: string;
  apiserverPort: number;
  nodes: RealNode[];
}

function octet(hostIp: string, index: number): number {
  const v = Number(hostIp.split('.')[index]);
  if (!Number.isInteger(v)) throw new Error(`not an IPv4 address: ${hostIp}`);
  return v;
}

/**
 * 127.B.C.D gets 10.B.0.0/16: nodes 10.B.0.11+, the bridge 10.B.0.1, Services 10.B.96.0/20 (the stack layout's
 * serviceCidr), Pods 10.B.(128+i).0/24 per node.
 */
export function realNodeLayout(layout: StackLayout): RealNodeLayout {
  const b = octet(layout.hostIp, 1);
  const prefix = `ec${b}`;
  return {
    prefix,
    bridge: `${prefix}-br`,
    bridgeIp: `10.${b}.0.1`,
    nodeNetwork: `10.${b}.0.0/24`,
    clusterPodCidr: `10.${b}.128.0/17`,
    serviceCidr: layout.serviceCidr,
    dnsServiceIp: `10.${b}.96.10`,
    apiserverPort: layout.ports.apiserver,
    nodes: layout.nodes.map((n, i) => {
      const dir = n.stateDir;
      return {
        name: n.name,
        zone: n.zone,
        netns: `${prefix}-${n.name}`,
        hostVeth: `${prefix}-${n.name.slice(-1)}`,
        ip: `10.${b}.0.${11 + i}`,
        podCidr: `10.${b}.${128 + i}.0/24`,
        cgroupRoot: `/etcd-conductor-${prefix}-${n.name}`,
        dir,
        volumesDir: join(dir, 'volumes'),
        sizedVolumesDir: join(dir, 'sized-volumes'),
        containerdSocket: join(dir, 'containerd', 'containerd.sock'),
        pkiFile: n.name,
      };
    }),
  };
}

/** The gateway of a node's Pod CIDR (its CNI bridge `cni0`). */
export function podGateway(podCidr: string): string {
  const [base] = podCidr.split('/');
  const parts = (base ?? '').split('.');
  return `${parts[0]}.${parts[1]}.${parts[2]}.1`;
}
