// Storage on the real nodes: rancher's local-path-provisioner (built from the Go module proxy) runs on the host as a
// control-plane component and serves the default StorageClass. Each volume is a folder in the volumes folder of the
// node that owns it (inside that node's own folder of the stack), created and removed by a helper Pod on that node,
// so a member's data outlives its container and its Pod, and `down` removes it with the node.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { LOCAL_PATH_HELPER_IMAGE } from '../images';
import { startProcess, type ManagedProcess } from '../managed-process';
import type { StackLayout } from '../stack-layout';
import { waitFor } from '../wait-for';
import type { RealNodeLayout } from './real-node-layout';

export const STORAGE_NAMESPACE = 'local-path-storage';
export const STORAGE_CLASS = 'local-path';
/**
 * Not the default: volumes in each node's size-limited folder (a tmpfs of SIZED_VOLUMES_BYTES, one per node, shared
 * by that node's volumes of this class), for tests that fill a member's volume. A claim's requested size is not
 * enforced by local-path; the folder's filesystem is what runs out.
 */
export const SIZED_STORAGE_CLASS = 'local-path-sized';
/** Room for etcd's first WAL segment (64 MiB, preallocated), its db and snapshots, and a little to fill. */
export const SIZED_VOLUMES_BYTES = 256 * 1024 * 1024;
/**
 * Served by the provisioner but never created by `up`: for tests that create a StorageClass after the claims that
 * name it (local-path refuses a class its config does not list, "Got request for unexpected storage class").
 */
export const LATE_STORAGE_CLASS = 'local-path-late';
/** Served but never created by `up`, like the late class: for tests that create a class allowing volume expansion. */
export const GROW_STORAGE_CLASS = 'local-path-grow';
export const PROVISIONER_NAME = 'rancher.io/local-path';
const CONFIG_MAP = 'local-path-config';
const SERVICE_ACCOUNT = 'local-path-provisioner-service-account';

/**
 * The provisioner's config.json: every node's volumes in its own folder of the stack (no other node gets any), one
 * folder per StorageClass: the default class's (and the test classes') on the node's disk, the sized class's in its
 * size-limited tmpfs.
 */
export function provisionerConfig(net: RealNodeLayout): object {
  return {
    storageClassConfigs: {
      [STORAGE_CLASS]: { nodePathMap: net.nodes.map((n) => ({ node: n.name, paths: [n.volumesDir] })) },
      [SIZED_STORAGE_CLASS]: {
        nodePathMap: net.nodes.map((n) => ({ node: n.name, paths: [n.sizedVolumesDir] })),
      },
      [LATE_STORAGE_CLASS]: { nodePathMap: net.nodes.map((n) => ({ node: n.name, paths: [n.volumesDir] })) },
      [GROW_STORAGE_CLASS]: { nodePathMap: net.nodes.map((n) => ({ node: n.name, paths: [n.volumesDir] })) },
    },
    // Seconds a helper Pod may take; a node that cannot run one leaves the claim Pending with the provisioner's Event.
    cmdTimeoutSeconds: 120,
  };
}

/** Upstream's scripts, kept strict: a volume folder is only ever created or removed below the node's volumes folder. */
const SETUP = `#!/bin/sh
set -eu
mkdir -m 0777 -p "$VOL_DIR"
`;
const TEARDOWN = `#!/bin/sh
set -eu
rm -rf "$VOL_DIR"
`;

/** The helper Pod template; the provisioner adds the node, the volume folder's parent as a hostPath, and the command. */
function helperPodYaml(): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'helper-pod' },
    spec: {
      priorityClassName: 'system-node-critical',
      tolerations: [{ key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' }],
      containers: [{ name: 'helper-pod', image: LOCAL_PATH_HELPER_IMAGE, imagePullPolicy: 'IfNotPresent' }],
    },
  });
}

/**
 * Pure: the namespace, the helper Pods' ServiceAccount, the provisioner's ConfigMap, the default StorageClass and the
 * size-limited one.
 */
export function localPathManifests(net: RealNodeLayout): object {
  return {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      // No Pod Security label: the helper Pods need a hostPath of the node's volumes folder.
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: STORAGE_NAMESPACE } },
      {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: SERVICE_ACCOUNT, namespace: STORAGE_NAMESPACE },
        automountServiceAccountToken: false,
      },
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: CONFIG_MAP, namespace: STORAGE_NAMESPACE },
        data: {
          'config.json': JSON.stringify(provisionerConfig(net)),
          setup: SETUP,
          teardown: TEARDOWN,
          'helperPod.yaml': helperPodYaml(),
        },
      },
      {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
        metadata: {
          name: STORAGE_CLASS,
          annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' },
        },
        provisioner: PROVISIONER_NAME,
        // The scheduler picks the node first; the provisioner then makes the folder on that node (it needs one).
        volumeBindingMode: 'WaitForFirstConsumer',
        reclaimPolicy: 'Delete',
      },
      {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
        metadata: { name: SIZED_STORAGE_CLASS },
        provisioner: PROVISIONER_NAME,
        volumeBindingMode: 'WaitForFirstConsumer',
        reclaimPolicy: 'Delete',
      },
    ],
  };
}

export function provisionerArgs(kubeconfig: string): string[] {
  return [
    'start',
    `--kubeconfig=${kubeconfig}`,
    `--namespace=${STORAGE_NAMESPACE}`,
    `--configmap-name=${CONFIG_MAP}`,
    `--service-account-name=${SERVICE_ACCOUNT}`,
    `--provisioner-name=${PROVISIONER_NAME}`,
    `--helper-image=${LOCAL_PATH_HELPER_IMAGE}`,
  ];
}

function kubectlApply(kubectl: string, kubeconfig: string, body: object): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = execFile(kubectl, ['--kubeconfig', kubeconfig, 'apply', '-f', '-'], (err, _out, stderr) =>
      err
        ? reject(
            new Error(`kubectl apply (local-path storage) failed: ${stderr || err.message}`, { cause: err }),
          )
        : resolve(),
    );
    child.stdin?.end(JSON.stringify(body));
  });
}

export interface StartLocalPathStorageOptions {
  layout: StackLayout;
  net: RealNodeLayout;
  kubectl: string;
  adminKubeconfig: string;
  /** The provisioner's identity (the stack's local-services kubeconfig). */
  kubeconfig: string;
  binary: string;
  log: (line: string) => void;
}

/** Applies the manifests, then runs the provisioner (it reads its ConfigMap once at start, so the order matters). */
export async function startLocalPathStorage(opts: StartLocalPathStorageOptions): Promise<ManagedProcess> {
  const t0 = Date.now();
  await kubectlApply(opts.kubectl, opts.adminKubeconfig, localPathManifests(opts.net));
  const proc = startProcess({
    name: 'local-path-provisioner',
    command: opts.binary,
    args: provisionerArgs(opts.kubeconfig),
    cwd: opts.layout.stateDir,
    logFile: join(opts.layout.paths.logsDir, 'local-path-provisioner.log'),
    stackDir: opts.layout.stateDir,
  });
  // It logs nothing when ready; a start-up error (bad config, no API) makes it exit within a second or two.
  await waitFor('local-path-provisioner to stay up', async () => Promise.resolve(Date.now() - t0 > 1500), {
    timeoutMs: 10000,
    intervalMs: 250,
    process: proc,
  });
  opts.log(
    `real nodes: StorageClass ${STORAGE_CLASS} (default) served by local-path-provisioner in ${Date.now() - t0} ms`,
  );
  return proc;
}
