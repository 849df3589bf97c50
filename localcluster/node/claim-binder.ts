// Once per stack: gives every pending PersistentVolumeClaim a hostPath volume and binds it, grows it when the claim asks for more and its class allows it, and deletes volume and data when the claim goes.
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  StorageV1Api,
  setHeaderOptions,
} from '@kubernetes/client-node';
import type { V1PersistentVolume, V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { BINDER_LABEL, claimDataDir, planClaims, volumeNameFor } from './claim-plan';
import type { ClaimAction, ClaimView, VolumeView } from './claim-plan';
import { startRestartingInformer } from '../real-nodes/restarting-informer';
import { applyResize, planResizes } from '../real-nodes/claim-resize';
import type { ResizeAction } from '../real-nodes/claim-resize';

export interface ClaimBinderOptions {
  kubeconfigPath: string;
  /** The stack's state dir; claim data goes to `<stateDir>/claims` unless claimsDir says otherwise. */
  stateDir: string;
  claimsDir?: string;
  log: (line: string) => void;
}

export interface ClaimBinder {
  /** Empties a claim's data directory (the volume stays bound): a disk that lost its data. */
  wipeClaimData(namespace: string, claimName: string): Promise<void>;
  /** Same as wipeClaimData (the name the stack's fault server uses). */
  wipeClaim(namespace: string, claimName: string): Promise<void>;
  stop(): Promise<void>;
}

function apiCode(e: unknown): number | undefined {
  return typeof e === 'object' && e !== null && 'code' in e ? (e as { code: number }).code : undefined;
}

function claimView(c: V1PersistentVolumeClaim): ClaimView {
  return {
    namespace: c.metadata?.namespace ?? '',
    name: c.metadata?.name ?? '',
    uid: c.metadata?.uid ?? '',
    volumeName: c.spec?.volumeName,
    phase: c.status?.phase,
    storage: String(c.spec?.resources?.requests?.['storage'] ?? '1Gi'),
    accessModes: c.spec?.accessModes ?? ['ReadWriteOnce'],
    storageClassName: c.spec?.storageClassName,
    volumeMode: c.spec?.volumeMode,
  };
}

function volumeView(v: V1PersistentVolume): VolumeView {
  return {
    name: v.metadata?.name ?? '',
    ours: v.metadata?.labels?.[BINDER_LABEL] === 'true',
    claimUid: v.spec?.claimRef?.uid,
    phase: v.status?.phase,
  };
}

export async function startClaimBinder(options: ClaimBinderOptions): Promise<ClaimBinder> {
  const claimsDir = options.claimsDir ?? join(options.stateDir, 'claims');
  mkdirSync(claimsDir, { recursive: true });
  const kc = new KubeConfig();
  kc.loadFromFile(options.kubeconfigPath);
  const core = kc.makeApiClient(CoreV1Api);
  const storage = kc.makeApiClient(StorageV1Api);
  const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  const log = (line: string): void => options.log(`claim binder: ${line}`);

  const act = async (a: ClaimAction): Promise<void> => {
    if (a.kind === 'create-volume') {
      mkdirSync(a.dataDir, { recursive: true });
      await core
        .createPersistentVolume({
          body: {
            apiVersion: 'v1',
            kind: 'PersistentVolume',
            metadata: {
              name: a.volumeName,
              labels: { [BINDER_LABEL]: 'true' },
              annotations: { 'pv.kubernetes.io/provisioned-by': 'etcd-conductor.io/claim-binder' },
            },
            spec: {
              capacity: { storage: a.claim.storage },
              accessModes: a.claim.accessModes,
              persistentVolumeReclaimPolicy: 'Delete',
              storageClassName: a.claim.storageClassName ?? '',
              volumeMode: 'Filesystem',
              hostPath: { path: a.dataDir, type: 'DirectoryOrCreate' },
              claimRef: {
                apiVersion: 'v1',
                kind: 'PersistentVolumeClaim',
                namespace: a.claim.namespace,
                name: a.claim.name,
                uid: a.claim.uid,
              },
            },
          },
        })
        .catch((e: unknown) => {
          if (apiCode(e) !== 409) throw e;
        });
      log(`created ${a.volumeName} for ${a.claim.namespace}/${a.claim.name} at ${a.dataDir}`);
    } else if (a.kind === 'bind-claim') {
      const { namespace, name } = a.claim;
      if (!a.claim.volumeName) {
        await core.patchNamespacedPersistentVolumeClaim(
          {
            name,
            namespace,
            body: {
              metadata: {
                annotations: {
                  'pv.kubernetes.io/bind-completed': 'yes',
                  'pv.kubernetes.io/bound-by-controller': 'yes',
                },
              },
              spec: { volumeName: a.volumeName },
            },
          },
          merge,
        );
      }
      await core.patchPersistentVolumeStatus(
        { name: a.volumeName, body: { status: { phase: 'Bound' } } },
        merge,
      );
      await core.patchNamespacedPersistentVolumeClaimStatus(
        {
          name,
          namespace,
          body: {
            status: {
              phase: 'Bound',
              accessModes: a.claim.accessModes,
              capacity: { storage: a.claim.storage },
            },
          },
        },
        merge,
      );
      log(`bound ${namespace}/${name} to ${a.volumeName}`);
    } else {
      // The pv-protection finalizer is the controller-manager's; with the claim gone nothing uses the volume.
      await core
        .patchPersistentVolume({ name: a.volumeName, body: { metadata: { finalizers: null } } }, merge)
        .catch(() => undefined);
      await core.deletePersistentVolume({ name: a.volumeName }).catch((e: unknown) => {
        if (apiCode(e) !== 404) throw e;
      });
      if (a.dataDir.startsWith(claimsDir + '/')) rmSync(a.dataDir, { recursive: true, force: true });
      log(`deleted ${a.volumeName} and its data ${a.dataDir}`);
    }
  };

  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const reconcile = async (): Promise<void> => {
    const claims = claimInformer.list().filter((c) => !c.metadata?.deletionTimestamp || c.spec?.volumeName);
    const volumes = volumeInformer.list();
    const dataDirs = new Map(volumes.map((v) => [v.metadata?.name ?? '', v.spec?.hostPath?.path]));
    // Read fresh each pass (the periodic resync notices a class created later); unreadable counts as present.
    const named = new Set(claims.map((c) => c.spec?.storageClassName).filter((n): n is string => !!n));
    const missing = new Set<string>();
    for (const name of named) {
      const found = await storage.readStorageClass({ name }).then(
        () => true,
        (e: unknown) => apiCode(e) !== 404,
      );
      if (!found) missing.add(name);
    }
    for (const a of planClaims(
      claims.map(claimView),
      volumes.map(volumeView),
      claimsDir,
      (n) => dataDirs.get(n),
      (name) => !missing.has(name),
    )) {
      await act(a).catch((e: unknown) =>
        log(`${a.kind} ${a.volumeName} failed: ${e instanceof Error ? e.message : String(e)}`),
      );
    }
    await resizeClaims(claims, volumes).catch((e: unknown) =>
      log(`resize failed: ${e instanceof Error ? e.message : String(e)}`),
    );
  };

  // A stand-in for a CSI resizer: only classes with allowVolumeExpansion grow (read fresh each pass).
  const resizeClaims = async (
    claims: readonly V1PersistentVolumeClaim[],
    volumes: readonly V1PersistentVolume[],
  ) => {
    const classNames = new Set(claims.map((c) => c.spec?.storageClassName).filter((n): n is string => !!n));
    const expandable = new Set<string>();
    for (const name of classNames) {
      const sc = await storage.readStorageClass({ name }).catch(() => undefined);
      if (sc?.allowVolumeExpansion) expandable.add(name);
    }
    const actions = planResizes(
      claims.map((c) => ({
        namespace: c.metadata?.namespace ?? '',
        name: c.metadata?.name ?? '',
        volumeName: c.spec?.volumeName,
        phase: c.status?.phase,
        requested: String(c.spec?.resources?.requests?.['storage'] ?? ''),
        capacity: c.status?.capacity?.['storage'] as string | undefined,
        storageClassName: c.spec?.storageClassName,
      })),
      volumes.map((v) => ({
        name: v.metadata?.name ?? '',
        ours: v.metadata?.labels?.[BINDER_LABEL] === 'true',
        capacity: v.spec?.capacity?.['storage'] as string | undefined,
      })),
      (name) => expandable.has(name),
    );
    for (const a of actions) await resize(a);
  };

  // hostPath directories have no size: growing is raising the volume's capacity and the claim's status.
  const resize = async (a: ResizeAction): Promise<void> => {
    await applyResize(core, a);
    log(`grew ${a.namespace}/${a.claimName} and ${a.volumeName} to ${a.size}`);
  };
  const schedule = (): void => {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      running = running.then(reconcile);
    }, 200);
  };
  const claimInformer = startRestartingInformer<V1PersistentVolumeClaim>({
    kc,
    path: '/api/v1/persistentvolumeclaims',
    list: () => core.listPersistentVolumeClaimForAllNamespaces(),
    onEvent: schedule,
    log,
  });
  const volumeInformer = startRestartingInformer<V1PersistentVolume>({
    kc,
    path: '/api/v1/persistentvolumes',
    list: () => core.listPersistentVolume({ labelSelector: `${BINDER_LABEL}=true` }),
    labelSelector: `${BINDER_LABEL}=true`,
    onEvent: schedule,
    log,
  });
  // Periodic resync: a failed action is retried, and a claim deleted while we were down is noticed.
  const resync = setInterval(schedule, 30_000);

  const wipe = async (namespace: string, claimName: string): Promise<void> => {
    const claim = await core.readNamespacedPersistentVolumeClaim({ name: claimName, namespace });
    const volumeName = claim.spec?.volumeName ?? volumeNameFor(claim.metadata?.uid ?? '');
    const pv = await core.readPersistentVolume({ name: volumeName });
    const dir =
      pv.spec?.hostPath?.path ?? claimDataDir(claimsDir, namespace, claimName, claim.metadata?.uid ?? '');
    for (const entry of readdirSync(dir)) rmSync(join(dir, entry), { recursive: true, force: true });
    log(`wiped data of ${namespace}/${claimName} (${dir})`);
  };
  return {
    wipeClaimData: wipe,
    wipeClaim: wipe,
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      clearInterval(resync);
      await Promise.all([claimInformer.stop(), volumeInformer.stop()]);
      await running;
    },
  };
}
