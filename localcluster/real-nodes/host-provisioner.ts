// The real nodes' volume provisioner, run by the stack on the host: it makes a claim's volume folder directly in the
// volumes folder of the node the scheduler chose (every node's folders are on this machine) and a PersistentVolume
// pre-bound to the claim, which the controller manager then binds; a Released volume with reclaim policy Delete loses
// its folder, then its PersistentVolume. No helper Pod, so a new claim is ready in milliseconds, not seconds.
// Decisions are host-volume-plan.ts's; each action here is idempotent (names derive from the claim's uid, "exists" and
// "not found" are success), so a restarted provisioner finds its own earlier work.
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { CoreV1Api, KubeConfig, StorageV1Api } from '@kubernetes/client-node';
import type {
  CoreV1Event,
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1StorageClass,
} from '@kubernetes/client-node';
import { startRestartingInformer } from './restarting-informer';
import {
  HOSTNAME_LABEL,
  planHostVolumes,
  PROVISIONED_BY,
  SELECTED_NODE,
  type ClaimView,
  type ClassView,
  type HostVolumeAction,
  type ProvisionerFolders,
  type VolumeSpec,
  type VolumeView,
} from './host-volume-plan';

export interface HostProvisionerOptions {
  kubeconfig: string;
  /** Provisioner name -> node -> folder; the provisioner serves every StorageClass naming one of these. */
  folders: ProvisionerFolders;
  log: (line: string) => void;
}

export interface HostProvisioner {
  stop(): Promise<void>;
}

const apiCode = (e: unknown): number | undefined =>
  typeof e === 'object' && e !== null && 'code' in e ? (e as { code: number }).code : undefined;
const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

function claimView(c: V1PersistentVolumeClaim): ClaimView {
  return {
    namespace: c.metadata?.namespace ?? '',
    name: c.metadata?.name ?? '',
    uid: c.metadata?.uid ?? '',
    storageClassName: c.spec?.storageClassName,
    volumeName: c.spec?.volumeName,
    selectedNode: c.metadata?.annotations?.[SELECTED_NODE],
    accessModes: c.spec?.accessModes ?? [],
    volumeMode: c.spec?.volumeMode,
    requested: c.spec?.resources?.requests?.['storage'] as string | undefined,
    hasSelector: c.spec?.selector !== undefined && c.spec.selector !== null,
    deleting: c.metadata?.deletionTimestamp !== undefined,
  };
}

function volumeView(v: V1PersistentVolume): VolumeView {
  return {
    name: v.metadata?.name ?? '',
    provisionedBy: v.metadata?.annotations?.[PROVISIONED_BY],
    phase: v.status?.phase,
    reclaimPolicy: v.spec?.persistentVolumeReclaimPolicy,
    path: v.spec?.hostPath?.path,
  };
}

const classView = (c: V1StorageClass): ClassView => ({
  name: c.metadata?.name ?? '',
  provisioner: c.provisioner,
  reclaimPolicy: c.reclaimPolicy,
  volumeBindingMode: c.volumeBindingMode,
});

/** The PersistentVolume rancher's local-path-provisioner makes: a hostPath with node affinity, pre-bound to its claim. */
export function persistentVolume(v: VolumeSpec): V1PersistentVolume {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: v.name, annotations: { [PROVISIONED_BY]: v.provisioner, [SELECTED_NODE]: v.node } },
    spec: {
      capacity: { storage: v.capacity },
      accessModes: v.accessModes,
      persistentVolumeReclaimPolicy: v.reclaimPolicy,
      storageClassName: v.storageClassName,
      volumeMode: 'Filesystem',
      hostPath: { path: v.path, type: 'DirectoryOrCreate' },
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: HOSTNAME_LABEL, operator: 'In', values: [v.node] }] },
          ],
        },
      },
      claimRef: {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        namespace: v.claim.namespace,
        name: v.claim.name,
        uid: v.claim.uid,
      },
    },
  };
}

export function startHostProvisioner(opts: HostProvisionerOptions): HostProvisioner {
  const kc = new KubeConfig();
  kc.loadFromFile(opts.kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  const storage = kc.makeApiClient(StorageV1Api);
  const log = (line: string): void => opts.log(`host provisioner: ${line}`);
  // One Warning Event per claim and reason while this process runs (a restart may repeat one).
  const reported = new Set<string>();

  const warn = async (a: Extract<HostVolumeAction, { kind: 'refuse' }>): Promise<void> => {
    const key = `${a.claimUid} ${a.reason}`;
    if (reported.has(key)) return;
    const now = new Date();
    const event: CoreV1Event = {
      metadata: { name: `${a.claimName}.${now.getTime().toString(16)}`, namespace: a.namespace },
      involvedObject: {
        kind: 'PersistentVolumeClaim',
        apiVersion: 'v1',
        namespace: a.namespace,
        name: a.claimName,
        uid: a.claimUid,
      },
      reason: 'ProvisioningFailed',
      message: a.reason,
      type: 'Warning',
      source: { component: 'etcd-conductor-host-provisioner' },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
    await core.createNamespacedEvent({ namespace: a.namespace, body: event });
    reported.add(key);
    log(`${a.namespace}/${a.claimName}: ${a.reason}`);
  };

  const act = async (a: HostVolumeAction): Promise<void> => {
    const t0 = Date.now();
    if (a.kind === 'refuse') return warn(a);
    if (a.kind === 'provision') {
      const v = a.volume;
      // The folder before the volume: the kubelet mounts it once the claim is bound, and a folder it made itself
      // (DirectoryOrCreate) would be root's 0755, not writable by a member running as non-root.
      mkdirSync(v.path, { recursive: true });
      chmodSync(v.path, 0o777);
      await core.createPersistentVolume({ body: persistentVolume(v) }).catch((e: unknown) => {
        if (apiCode(e) !== 409) throw e;
      });
      log(
        `${v.name} for ${v.claim.namespace}/${v.claim.name} on ${v.node} at ${v.path} in ${Date.now() - t0} ms`,
      );
      return;
    }
    rmSync(a.path, { recursive: true, force: true });
    // A pass that still saw the volume in its cache finds it gone: the earlier pass did the work.
    const deleted = await core.deletePersistentVolume({ name: a.volumeName }).then(
      () => true,
      (e: unknown) => {
        if (apiCode(e) !== 404) throw e;
        return false;
      },
    );
    if (deleted) log(`reclaimed ${a.volumeName}: removed ${a.path} and the volume in ${Date.now() - t0} ms`);
  };

  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  let queued = false;
  const reconcile = async (): Promise<void> => {
    queued = false;
    if (stopped) return;
    const classes = await storage.listStorageClass();
    const actions = planHostVolumes(
      claims.list().map(claimView),
      volumes.list().map(volumeView),
      classes.items.map(classView),
      opts.folders,
    );
    for (const a of actions) {
      if (stopped) return;
      await act(a).catch((e: unknown) => log(`${a.kind} failed: ${message(e)}`));
    }
  };
  // Level-triggered: any change runs one pass over everything; changes during a pass run one more pass after it.
  const schedule = (): void => {
    if (stopped || queued) return;
    queued = true;
    running = running.then(reconcile).catch((e: unknown) => log(message(e)));
  };
  const claims = startRestartingInformer<V1PersistentVolumeClaim>({
    kc,
    path: '/api/v1/persistentvolumeclaims',
    list: () => core.listPersistentVolumeClaimForAllNamespaces(),
    onEvent: schedule,
    log,
  });
  const volumes = startRestartingInformer<V1PersistentVolume>({
    kc,
    path: '/api/v1/persistentvolumes',
    list: () => core.listPersistentVolume(),
    onEvent: schedule,
    log,
  });
  // Retries failed actions and picks up a StorageClass created after its claim.
  const resync = setInterval(schedule, 5000);
  log(`serving ${Object.keys(opts.folders).join(', ')}`);
  return {
    stop: async () => {
      stopped = true;
      clearInterval(resync);
      await Promise.all([claims.stop(), volumes.stop()]);
      await running;
    },
  };
}
