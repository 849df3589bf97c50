// Pure addressing of one stack instance: every port, address range and path derives from {stateDir, hostIp}, so two instances never collide.
import { DAEMON_STALLS_FILE } from './loop-stalls';
import { join } from 'node:path';

export interface StackInstance {
  /** Repository root: the project's CLI and pinned Node live here. */
  repoRoot: string;
  /** All state of this instance (certs, data, logs); `<repo>/.local` for the default stack. */
  stateDir: string;
  /** Loopback address every server of this instance binds to. */
  hostIp: string;
}

export interface NodeLayout {
  name: string;
  zone: string;
  /** The node's folder: its containerd, kubelet and volumes (real-nodes/real-node-layout.ts). */
  stateDir: string;
}

export interface StackLayout extends StackInstance {
  /** Handed to kube-apiserver as --service-cluster-ip-range; the host routes it through node-a (real-nodes/). */
  serviceCidr: string;
  ports: {
    etcdClient: number;
    etcdPeer: number;
    apiserver: number;
    controllerManager: number;
    scheduler: number;
    temporal: number;
    temporalUi: number;
    temporalHttp: number;
    temporalMetrics: number;
    s3: number;
    s3Console: number;
  };
  nodes: NodeLayout[];
  paths: {
    pkiDir: string;
    adminKubeconfig: string;
    controllerManagerKubeconfig: string;
    schedulerKubeconfig: string;
    etcdDataDir: string;
    temporalDb: string;
    minioDataDir: string;
    minioCredentials: string;
    logsDir: string;
    stackJson: string;
    envSh: string;
    daemonLog: string;
    /** When the daemon's event loop stood still (see loop-stalls.ts). */
    daemonStalls: string;
  };
}

export const NODE_NAMES = ['node-a', 'node-b', 'node-c'] as const;

function octets(ip: string): [number, number, number, number] {
  const parts = ip.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) {
    throw new Error(`not an IPv4 address: ${ip}`);
  }
  return parts as [number, number, number, number];
}

/**
 * Servers of 127.B.C.D bind to that address; the nodes, Pods and Services of the instance are in 10.B.0.0/16
 * (real-nodes/real-node-layout.ts), Services in 10.B.96.0/20. Two instances coexist when their B octets differ; B <= 158
 * also keeps the Temporal and MinIO ports, which move with B, of any two instances apart.
 */
export function stackLayout(instance: StackInstance): StackLayout {
  const [a, b] = octets(instance.hostIp);
  if (a !== 127)
    throw new Error(`the local stack binds to loopback only; ${instance.hostIp} is not in 127.0.0.0/8`);
  if (b > 158)
    throw new Error(
      `host IP ${instance.hostIp}: a larger B could give two stacks the same port; use 127.B.0.1 with B <= 158`,
    );
  const s = instance.stateDir;
  const kubeconfigs = join(s, 'kubeconfigs');
  return {
    ...instance,
    serviceCidr: `10.${b}.96.0/20`,
    ports: {
      // Not 2379/2380: with env.sh sourced, a bare `etcdctl` must never reach the store behind the apiserver.
      etcdClient: 2399,
      etcdPeer: 2400,
      apiserver: 6443,
      controllerManager: 10257,
      scheduler: 10259,
      // The Temporal dev server binds 127.0.0.1 whatever the host IP (see TEMPORAL_IP), so its ports move with B;
      // the stride of 4 keeps 7233+4B, 7243+4B and 7244+4B apart for every B.
      temporal: 7233 + 4 * b,
      temporalUi: 8233 + 4 * b,
      temporalHttp: 7243 + 4 * b,
      temporalMetrics: 7244 + 4 * b,
      // MinIO also listens on every loopback interface (127.0.0.1, ::1) at its port, so only the port can keep two stacks apart.
      s3: 9000 + 2 * b,
      s3Console: 9001 + 2 * b,
    },
    nodes: NODE_NAMES.map((name) => ({
      name,
      zone: `zone-${name.slice(-1)}`,
      stateDir: join(s, 'nodes', name),
    })),
    paths: {
      pkiDir: join(s, 'pki'),
      adminKubeconfig: join(s, 'kubeconfig'),
      controllerManagerKubeconfig: join(kubeconfigs, 'kube-controller-manager.kubeconfig'),
      schedulerKubeconfig: join(kubeconfigs, 'kube-scheduler.kubeconfig'),
      etcdDataDir: join(s, 'etcd'),
      temporalDb: join(s, 'temporal.db'),
      minioDataDir: join(s, 'minio'),
      minioCredentials: join(s, 'minio-credentials.json'),
      logsDir: join(s, 'logs'),
      stackJson: join(s, 'stack.json'),
      envSh: join(s, 'env.sh'),
      daemonLog: join(s, 'stack.log'),
      daemonStalls: join(s, DAEMON_STALLS_FILE),
    },
  };
}

/** The first address of a CIDR: the apiserver gives it to the `kubernetes` Service, so it belongs in the serving cert. */
export function firstServiceIp(cidr: string): string {
  const [base] = cidr.split('/');
  const [a, b, c, d] = octets(base ?? '');
  return `${a}.${b}.${c}.${d + 1}`;
}
