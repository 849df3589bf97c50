// Real nodes: grows local-path volumes when their claim asks for more and their StorageClass allows it. It stands in
// for the CSI resizer a provisioner of the name rancher.io/local-path does not have (the controller-manager's expand
// controller leaves such a claim to "an external controller"), so the operator's claim growth runs on real nodes as on
// a cluster with one.
//
// A local-path volume is a folder on its node with no size of its own: growing is bookkeeping, the volume's capacity
// and the claim's status.capacity raised to what the claim asks for (the decision is planResizes, claim-resize.ts).
// Only volumes the host provisioner made, in classes of rancher.io/local-path, are touched.
import { CoreV1Api, KubeConfig, StorageV1Api } from '@kubernetes/client-node';
import type { V1PersistentVolume, V1PersistentVolumeClaim, V1StorageClass } from '@kubernetes/client-node';
import { applyResize, planResizes } from './claim-resize';
import type { ResizeAction } from './claim-resize';
import { PROVISIONED_BY } from './host-volume-plan';
import { PROVISIONER_NAME } from './local-path-storage';

export { PROVISIONED_BY };

/** Pure: the resizes due, from the claims, volumes and StorageClasses as listed. */
export function planLocalPathResizes(
  claims: readonly V1PersistentVolumeClaim[],
  volumes: readonly V1PersistentVolume[],
  classes: readonly V1StorageClass[],
): ResizeAction[] {
  const expandable = new Set(
    classes
      .filter((c) => c.provisioner === PROVISIONER_NAME && c.allowVolumeExpansion === true)
      .map((c) => c.metadata?.name ?? ''),
  );
  return planResizes(
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
      ours: v.metadata?.annotations?.[PROVISIONED_BY] === PROVISIONER_NAME,
      capacity: v.spec?.capacity?.['storage'] as string | undefined,
    })),
    (name) => expandable.has(name),
  );
}

/** Polls claims, volumes and classes every second (bounded: it stops with the stack) and applies the resizes due. */
export function startClaimResizer(opts: { kubeconfig: string; log: (line: string) => void }): {
  stop(): Promise<void>;
} {
  const kc = new KubeConfig();
  kc.loadFromFile(opts.kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  const storage = kc.makeApiClient(StorageV1Api);
  let stopped = false;
  const resize = async (a: ResizeAction): Promise<void> => {
    await applyResize(core, a);
    opts.log(`claim resizer: grew ${a.namespace}/${a.claimName} and ${a.volumeName} to ${a.size}`);
  };
  const sync = async (): Promise<void> => {
    const [claims, volumes, classes] = await Promise.all([
      core.listPersistentVolumeClaimForAllNamespaces(),
      core.listPersistentVolume(),
      storage.listStorageClass(),
    ]);
    for (const a of planLocalPathResizes(claims.items, volumes.items, classes.items)) {
      if (stopped) return;
      await resize(a).catch((e: unknown) =>
        opts.log(
          `claim resizer: growing ${a.namespace}/${a.claimName} failed: ${e instanceof Error ? e.message : String(e)}`,
        ),
      );
    }
  };
  const loop = (async () => {
    while (!stopped) {
      await sync().catch((e: unknown) =>
        opts.log(`claim resizer: ${e instanceof Error ? e.message : String(e)}`),
      );
      await new Promise((r) => setTimeout(r, 1000));
    }
  })();
  opts.log(`real nodes: local-path claims grow where their StorageClass allows expansion`);
  return {
    async stop() {
      stopped = true;
      await loop;
    },
  };
}
