// Storage on the real nodes: the default StorageClass `local-path` and the size-limited `local-path-sized`, served by the
// stack's host provisioner (host-provisioner.ts). Each volume is a folder in the volumes folder of the node that owns
// it (inside that node's own folder of the stack), so a member's data outlives its container and its Pod, and `down`
// removes it with the node. The provisioner names stay local-path's, so classes written for kind work unchanged.
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { startHostProvisioner, type HostProvisioner } from './host-provisioner';
import type { ProvisionerFolders } from './host-volume-plan';
import type { RealNode, RealNodeLayout } from './real-node-layout';

export const STORAGE_CLASS = 'local-path';
/**
 * Not the default: volumes in each node's size-limited folder (a tmpfs of SIZED_VOLUMES_BYTES, one per node, shared
 * by that node's volumes of this class), for tests that fill a member's volume. A claim's requested size is not
 * enforced; the folder's filesystem is what runs out.
 */
export const SIZED_STORAGE_CLASS = 'local-path-sized';
/** Room for etcd's first WAL segment (64 MiB, preallocated), its db and snapshots, and a little to fill. */
export const SIZED_VOLUMES_BYTES = 256 * 1024 * 1024;
/**
 * The cap of a node's in-memory default StorageClass folder (`up --claims-in-memory`): a tmpfs holds only what is
 * written, and a member takes ~70 MiB (its preallocated 64 MiB WAL segment, its db), so ~50 members per node.
 */
export const VOLUMES_IN_MEMORY_BYTES = 4 * 1024 * 1024 * 1024;
/**
 * local-path-provisioner's name, kept: the host provisioner serves every StorageClass that names it, as local-path does
 * on kind, so the user's own classes (and tests' per-run ones) work too.
 */
export const PROVISIONER_NAME = 'rancher.io/local-path';
/** A second provisioner name, for the size-limited folders only. */
export const SIZED_PROVISIONER_NAME = 'etcd-conductor.dev/local-path-sized';
/** Where each provisioner name keeps a node's volumes: the node's disk, or its size-limited tmpfs. */
const FOLDER_OF: Readonly<Record<string, (n: RealNode) => string>> = {
  [PROVISIONER_NAME]: (n) => n.volumesDir,
  [SIZED_PROVISIONER_NAME]: (n) => n.sizedVolumesDir,
};

/** Pure: provisioner name -> node -> folder, every node of this stack and no other (no default for unknown nodes). */
export function provisionerFolders(net: RealNodeLayout): ProvisionerFolders {
  return Object.fromEntries(
    Object.entries(FOLDER_OF).map(([provisioner, folder]) => [
      provisioner,
      Object.fromEntries(net.nodes.map((n) => [n.name, folder(n)])),
    ]),
  );
}

/** Pure: the default StorageClass and the size-limited one. */
export function localPathManifests(): object {
  return {
    apiVersion: 'v1',
    kind: 'List',
    items: [
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
  net: RealNodeLayout;
  kubectl: string;
  adminKubeconfig: string;
  /** The provisioner's identity (the stack's local-services kubeconfig). */
  kubeconfig: string;
  log: (line: string) => void;
}

/** Applies the StorageClasses and starts the host provisioner that serves them (and every class naming it). */
export async function startLocalPathStorage(opts: StartLocalPathStorageOptions): Promise<HostProvisioner> {
  const t0 = Date.now();
  await kubectlApply(opts.kubectl, opts.adminKubeconfig, localPathManifests());
  for (const n of opts.net.nodes) mkdirSync(n.volumesDir, { recursive: true });
  const provisioner = startHostProvisioner({
    kubeconfig: opts.kubeconfig,
    folders: provisionerFolders(opts.net),
    log: opts.log,
  });
  opts.log(
    `real nodes: StorageClass ${STORAGE_CLASS} (default), ${SIZED_STORAGE_CLASS} and every class of ${PROVISIONER_NAME} served by the host provisioner in ${Date.now() - t0} ms`,
  );
  return provisioner;
}
