// The machine-readable description of a running stack (`<stateDir>/stack.json`): what tests, `up` and `down` read; written only by the process that owns the stack.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface StackInfo {
  version: 1;
  phase: 'starting' | 'ready' | 'stopping';
  stateDir: string;
  hostIp: string;
  podCidr: string;
  serviceCidr: string;
  /** The process that owns the stack: the `up` daemon or the foreground `start`. */
  ownerPid: number;
  /** Every server process the owner started, by component name. */
  pids: Record<string, number>;
  kubeconfig: string;
  apiserverUrl: string;
  temporal: { address: string; namespace: string; uiUrl: string };
  s3: { endpoint: string; bucket: string; region: string; accessKeyId: string; secretAccessKey: string };
  /** Present when the stack runs cert-manager (localcluster/cert-manager.ts). */
  certManager?: { metricsUrl: string };
  nodes: Array<{ name: string; zone: string; hostIp: string }>;
  /** Where Pods reach the host's Temporal and MinIO (relays on the node bridge). */
  podReachable: { temporalAddress: string; s3Endpoint: string };
  /** Present when the operator runs from its Helm chart in the cluster (`up --operator=chart`). */
  operatorChart?: { namespace: string; release: string };
  /**
   * What runs the Pods: always `real`, kubelets and containerd in network namespaces (localcluster/real-nodes/). Kept
   * so that a stack.json written by the removed process-backed nodes (`process`, or no field at all) is told apart.
   */
  nodeRuntime: 'real';
  /**
   * The machine's address as Pods see it: the node bridge's address (inside a Pod, 127.x is the Pod itself). A server
   * a test runs on the host for Pods to reach (a foreign peer) listens here.
   */
  podsReachHostAt: string;
  tools: {
    kubectl: string;
    temporal: string;
    minio: string;
    /** Absent in a stack.json written before helm joined the tool set. */
    helm?: string;
    etcdBinDirs: Record<string, string>;
  };
  logsDir: string;
  startedAt: string;
  readyAt: string | undefined;
}

/** Contains S3 credentials: readable by the owner only; replaced atomically so a reader never sees half a file. */
export function writeStackInfo(path: string, info: StackInfo): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(info, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, path);
}

export function readStackInfo(path: string): StackInfo | undefined {
  if (!existsSync(path)) return undefined;
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as StackInfo;
    return parsed.version === 1 ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** For tests and tools: the running default stack (or the one named by ETCD_CONDUCTOR_STACK_JSON), or a clear error. */
export function requireStackInfo(
  path: string = process.env.ETCD_CONDUCTOR_STACK_JSON ?? join(repoRoot(), '.local', 'stack.json'),
): StackInfo {
  const info = readStackInfo(path);
  if (info?.phase !== 'ready') throw new Error(`no ready local stack at ${path}; run \`npm run up\` first`);
  return info;
}

/** The folder holding the project's package.json, from source (ts-jest) and from dist/ alike. */
export function repoRoot(from: string = __dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'localcluster'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no project root above ${from}`);
  }
}
