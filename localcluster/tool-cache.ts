// Where built tools live outside the repo, keyed by version; a tool counts as installed only when its completion marker and every binary exist.
import { accessSync, constants, existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import {
  CERT_MANAGER_VERSION,
  CNI_PLUGINS_VERSION,
  CONTAINERD_VERSION,
  COREDNS_VERSION,
  CRI_TOOLS_VERSION,
  PAUSE_VERSION,
  LINCHECK_VERSION,
  RUNC_VERSION,
  ETCD_VERSIONS,
  HELM_VERSION,
  KUBERNETES_VERSION,
  MINIO_VERSION,
  TEMPORAL_CLI_VERSION,
  type EtcdVersion,
} from './versions';

export type ToolName =
  | 'kubernetes'
  | 'kubernetes-node'
  | 'etcd'
  | 'temporal'
  | 'minio'
  | 'helm'
  | 'cert-manager'
  | 'containerd'
  | 'runc'
  | 'cni-plugins'
  | 'crictl'
  | 'pause'
  | 'lincheck'
  | 'coredns';

export interface ToolSpec {
  name: ToolName;
  version: string;
  /** Every executable the build must leave in `<cache>/tools/<id>/bin/`. */
  binaries: string[];
  /** Debian packages the build needs (installed with apt when missing, see apt-packages.ts). */
  debPackages?: string[];
}

export const KUBERNETES_TOOL: ToolSpec = {
  name: 'kubernetes',
  version: KUBERNETES_VERSION,
  binaries: ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubectl'],
};
export const ETCD_TOOLS: Record<EtcdVersion, ToolSpec> = Object.fromEntries(
  ETCD_VERSIONS.map((version) => [
    version,
    { name: 'etcd', version, binaries: ['etcd', 'etcdctl', 'etcdutl'] },
  ]),
) as Record<EtcdVersion, ToolSpec>;
export const TEMPORAL_TOOL: ToolSpec = {
  name: 'temporal',
  version: TEMPORAL_CLI_VERSION,
  binaries: ['temporal'],
};
export const MINIO_TOOL: ToolSpec = { name: 'minio', version: MINIO_VERSION, binaries: ['minio'] };
export const HELM_TOOL: ToolSpec = { name: 'helm', version: HELM_VERSION, binaries: ['helm'] };
/** The cert-manager controller, and beside bin/ the CRDs of the same release (`crds/`, see certManagerCrdDir). */
export const CERT_MANAGER_TOOL: ToolSpec = {
  name: 'cert-manager',
  version: CERT_MANAGER_VERSION,
  binaries: ['cert-manager-controller'],
};

/**
 * kubelet and kube-proxy for the real nodes: the same wrapper recipe as KUBERNETES_TOOL in its own folder, so the
 * control-plane cache entry stays valid while both share Go's module and build caches (only node-only packages compile).
 */
export const KUBERNETES_NODE_TOOL: ToolSpec = {
  name: 'kubernetes-node',
  version: KUBERNETES_VERSION,
  binaries: ['kubelet', 'kube-proxy'],
};
export const CONTAINERD_TOOL: ToolSpec = {
  name: 'containerd',
  version: CONTAINERD_VERSION,
  binaries: ['containerd', 'containerd-shim-runc-v2', 'ctr'],
};
/**
 * runc needs cgo (its nsenter is C) and libseccomp for the seccomp filters the restricted profile asks for
 * (RuntimeDefault); a build without the tag would silently run containers unconfined.
 */
export const RUNC_TOOL: ToolSpec = {
  name: 'runc',
  version: RUNC_VERSION,
  binaries: ['runc'],
  debPackages: ['gcc', 'libc6-dev', 'pkg-config', 'libseccomp-dev'],
};
export const CNI_PLUGIN_NAMES = ['bridge', 'host-local', 'loopback', 'portmap'] as const;
export const CNI_PLUGINS_TOOL: ToolSpec = {
  name: 'cni-plugins',
  version: CNI_PLUGINS_VERSION,
  binaries: [...CNI_PLUGIN_NAMES],
};
export const CRICTL_TOOL: ToolSpec = { name: 'crictl', version: CRI_TOOLS_VERSION, binaries: ['crictl'] };
/** The sandbox ("pause") program of the real nodes' Pods, built from localcluster/pause/main.go. */
export const PAUSE_TOOL: ToolSpec = { name: 'pause', version: PAUSE_VERSION, binaries: ['pause'] };

/** The soak's linearizability checker (porcupine against etcd's key-value model), built from localcluster/lincheck/main.go. */
export const LINCHECK_TOOL: ToolSpec = {
  name: 'lincheck',
  version: LINCHECK_VERSION,
  binaries: ['lincheck'],
};

export const COREDNS_TOOL: ToolSpec = { name: 'coredns', version: COREDNS_VERSION, binaries: ['coredns'] };

/** What the real nodes (localcluster/real-nodes/) need beyond the control plane. */
export const REAL_NODE_TOOLS: ToolSpec[] = [
  PAUSE_TOOL,
  CNI_PLUGINS_TOOL,
  RUNC_TOOL,
  CRICTL_TOOL,
  CONTAINERD_TOOL,
  COREDNS_TOOL,
  KUBERNETES_NODE_TOOL,
];

/**
 * The tools that run on the host with no stack: the unit tests start etcd, Temporal dev servers and MinIO, render the
 * chart with Helm and check histories with lincheck. `main.js tools host` builds only these, so that on a new machine
 * the unit tests can start while `up` goes on to build Kubernetes and the nodes' tools.
 */
export const HOST_TOOLS: ToolSpec[] = [
  ...ETCD_VERSIONS.map((v) => ETCD_TOOLS[v]).reverse(),
  TEMPORAL_TOOL,
  MINIO_TOOL,
  HELM_TOOL,
  CERT_MANAGER_TOOL,
  LINCHECK_TOOL,
];

/** Cheapest first, so a broken Go setup fails fast; Kubernetes last because it takes longest. */
export const ALL_TOOLS: ToolSpec[] = [
  ...HOST_TOOLS,
  KUBERNETES_TOOL,
  // After the control plane: kubelet and kube-proxy then reuse most of its compiled packages.
  ...REAL_NODE_TOOLS,
];

export const toolId = (spec: ToolSpec): string => `${spec.name}-${spec.version}`;

/** `$ETCD_CONDUCTOR_CACHE`, else `$XDG_CACHE_HOME/etcd-conductor`, else `~/.cache/etcd-conductor`. */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  if (env.ETCD_CONDUCTOR_CACHE) return env.ETCD_CONDUCTOR_CACHE;
  if (env.XDG_CACHE_HOME) return join(env.XDG_CACHE_HOME, 'etcd-conductor');
  return join(home, '.cache', 'etcd-conductor');
}

export interface ToolDirs {
  /** Wrapper module the build runs in. */
  buildDir: string;
  binDir: string;
  /** Written last, after every binary is in place. */
  marker: string;
  lockFile: string;
}

export function toolDirs(root: string, spec: ToolSpec): ToolDirs {
  const id = toolId(spec);
  return {
    buildDir: join(root, 'build', id),
    binDir: join(root, 'tools', id, 'bin'),
    marker: join(root, 'tools', id, '.complete'),
    lockFile: join(root, 'locks', `${id}.lock`),
  };
}

/** The warm check: stat only, never run a binary, so it takes milliseconds. */
export function isInstalled(root: string, spec: ToolSpec): boolean {
  const dirs = toolDirs(root, spec);
  if (!existsSync(dirs.marker)) return false;
  return spec.binaries.every((b) => {
    try {
      accessSync(join(dirs.binDir, b), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** The cert-manager release's CRD YAML files, copied from its module by the build. */
export const certManagerCrdDir = (root: string): string =>
  join(root, 'tools', toolId(CERT_MANAGER_TOOL), 'crds');

export function binaryPath(root: string, spec: ToolSpec, binary: string): string {
  return join(toolDirs(root, spec).binDir, binary);
}

export interface ToolPaths {
  kubeApiserver: string;
  kubeControllerManager: string;
  kubeScheduler: string;
  kubectl: string;
  /** Folder holding etcd, etcdctl and etcdutl, by etcd version. */
  etcdBinDirs: Record<EtcdVersion, string>;
  temporal: string;
  minio: string;
  helm: string;
  certManagerController: string;
  certManagerCrds: string;
  kubelet: string;
  kubeProxy: string;
  /** Folder of containerd, containerd-shim-runc-v2 and ctr (the shim is looked up on PATH). */
  containerdBinDir: string;
  runc: string;
  cniBinDir: string;
  crictl: string;
  pause: string;
  lincheck: string;
  coredns: string;
}

export function toolPaths(root: string): ToolPaths {
  const k = (b: string) => binaryPath(root, KUBERNETES_TOOL, b);
  return {
    kubeApiserver: k('kube-apiserver'),
    kubeControllerManager: k('kube-controller-manager'),
    kubeScheduler: k('kube-scheduler'),
    kubectl: k('kubectl'),
    etcdBinDirs: Object.fromEntries(
      ETCD_VERSIONS.map((v) => [v, toolDirs(root, ETCD_TOOLS[v]).binDir]),
    ) as Record<EtcdVersion, string>,
    temporal: binaryPath(root, TEMPORAL_TOOL, 'temporal'),
    minio: binaryPath(root, MINIO_TOOL, 'minio'),
    helm: binaryPath(root, HELM_TOOL, 'helm'),
    certManagerController: binaryPath(root, CERT_MANAGER_TOOL, 'cert-manager-controller'),
    certManagerCrds: certManagerCrdDir(root),
    kubelet: binaryPath(root, KUBERNETES_NODE_TOOL, 'kubelet'),
    kubeProxy: binaryPath(root, KUBERNETES_NODE_TOOL, 'kube-proxy'),
    containerdBinDir: toolDirs(root, CONTAINERD_TOOL).binDir,
    runc: binaryPath(root, RUNC_TOOL, 'runc'),
    cniBinDir: toolDirs(root, CNI_PLUGINS_TOOL).binDir,
    crictl: binaryPath(root, CRICTL_TOOL, 'crictl'),
    pause: binaryPath(root, PAUSE_TOOL, 'pause'),
    lincheck: binaryPath(root, LINCHECK_TOOL, 'lincheck'),
    coredns: binaryPath(root, COREDNS_TOOL, 'coredns'),
  };
}
