// Where built tools live outside the repo, keyed by version; a tool counts as installed only when its completion marker and every binary exist.
import { accessSync, constants, existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import {
  CERT_MANAGER_VERSION,
  ETCD_VERSIONS,
  HELM_VERSION,
  KUBERNETES_VERSION,
  MINIO_VERSION,
  TEMPORAL_CLI_VERSION,
  type EtcdVersion,
} from './versions';

export type ToolName = 'kubernetes' | 'etcd' | 'temporal' | 'minio' | 'helm' | 'cert-manager';

export interface ToolSpec {
  name: ToolName;
  version: string;
  /** Every executable the build must leave in `<cache>/tools/<id>/bin/`. */
  binaries: string[];
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

/** Cheapest first, so a broken Go setup fails fast; Kubernetes last because it takes longest. */
export const ALL_TOOLS: ToolSpec[] = [
  ...ETCD_VERSIONS.map((v) => ETCD_TOOLS[v]).reverse(),
  TEMPORAL_TOOL,
  MINIO_TOOL,
  HELM_TOOL,
  CERT_MANAGER_TOOL,
  KUBERNETES_TOOL,
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
  };
}
