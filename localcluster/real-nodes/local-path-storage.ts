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
/** Serves every StorageClass that names it, as local-path does on kind: the user's own classes work too. */
export const PROVISIONER_NAME = 'rancher.io/local-path';
/** A second provisioner, for the size-limited folders only. */
export const SIZED_PROVISIONER_NAME = 'etcd-conductor.dev/local-path-sized';
const SERVICE_ACCOUNT = 'local-path-provisioner-service-account';

/**
 * One local-path-provisioner process. local-path picks a folder per class only from a list of classes in its
 * config, and then refuses every class not listed ("BUG: Got request for unexpected storage class"), so a class a
 * user (or a test) creates would never be provisioned. Instead each process has one folder per node and serves every
 * class of its provisioner name: the default one for the node's disk, a second one for the size-limited folders.
 */
export interface ProvisionerInstance {
  /** The process's name in logs and stops. */
  name: string;
  provisioner: string;
  configMap: string;
  /** The folder on a node that holds this provisioner's volumes. */
  folder: (node: RealNodeLayout['nodes'][number]) => string;
}

export const PROVISIONERS: readonly [ProvisionerInstance, ProvisionerInstance] = [
  {
    name: 'local-path-provisioner',
    provisioner: PROVISIONER_NAME,
    configMap: 'local-path-config',
    folder: (n) => n.volumesDir,
  },
  {
    name: 'local-path-provisioner-sized',
    provisioner: SIZED_PROVISIONER_NAME,
    configMap: 'local-path-sized-config',
    folder: (n) => n.sizedVolumesDir,
  },
];

/**
 * A provisioner's config.json: every node's volumes in its own folder of the stack (no other node gets any, and no
 * default entry for nodes not listed). No `storageClassConfigs`: with it, local-path refuses every class not listed.
 */
export function provisionerConfig(net: RealNodeLayout, instance: ProvisionerInstance): object {
  return {
    nodePathMap: net.nodes.map((n) => ({ node: n.name, paths: [instance.folder(n)] })),
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
 * Pure: the namespace, the helper Pods' ServiceAccount, each provisioner's ConfigMap, the default StorageClass and the
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
      ...PROVISIONERS.map((instance) => ({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: instance.configMap, namespace: STORAGE_NAMESPACE },
        data: {
          'config.json': JSON.stringify(provisionerConfig(net, instance)),
          setup: SETUP,
          teardown: TEARDOWN,
          'helperPod.yaml': helperPodYaml(),
        },
      })),
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
        provisioner: SIZED_PROVISIONER_NAME,
        volumeBindingMode: 'WaitForFirstConsumer',
        reclaimPolicy: 'Delete',
      },
    ],
  };
}

export function provisionerArgs(kubeconfig: string, instance: ProvisionerInstance): string[] {
  return [
    'start',
    `--kubeconfig=${kubeconfig}`,
    `--namespace=${STORAGE_NAMESPACE}`,
    `--configmap-name=${instance.configMap}`,
    `--service-account-name=${SERVICE_ACCOUNT}`,
    `--provisioner-name=${instance.provisioner}`,
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

/** Applies the manifests, then runs the provisioners (each reads its ConfigMap once at start, so the order matters). */
export async function startLocalPathStorage(opts: StartLocalPathStorageOptions): Promise<ManagedProcess[]> {
  const t0 = Date.now();
  await kubectlApply(opts.kubectl, opts.adminKubeconfig, localPathManifests(opts.net));
  const procs = PROVISIONERS.map((instance) =>
    startProcess({
      name: instance.name,
      command: opts.binary,
      args: provisionerArgs(opts.kubeconfig, instance),
      cwd: opts.layout.stateDir,
      logFile: join(opts.layout.paths.logsDir, `${instance.name}.log`),
      stackDir: opts.layout.stateDir,
    }),
  );
  // They log nothing when ready; a start-up error (bad config, no API) makes one exit within a second or two.
  await Promise.all(
    procs.map((proc) =>
      waitFor(`${proc.name} to stay up`, async () => Promise.resolve(Date.now() - t0 > 1500), {
        timeoutMs: 10000,
        intervalMs: 250,
        process: proc,
      }),
    ),
  );
  opts.log(
    `real nodes: StorageClass ${STORAGE_CLASS} (default) and every class of ${PROVISIONER_NAME} served by local-path-provisioner in ${Date.now() - t0} ms`,
  );
  return procs;
}
