// Decides which bound claims the stack's claim resizer (claim-resizer.ts) grows: it stands in for a CSI resizer, so a
// claim may grow only where its StorageClass allows expansion.
//
// local-path volumes have no size to change, so growing is bookkeeping: the volume's capacity and the claim's
// status.capacity are raised to what the claim asks for. The apiserver's PersistentVolumeClaimResize
// admission already refuses a bigger request on a claim whose class does not allow expansion; the class is
// checked again here so that a class changed afterwards is respected the way a real resizer would.
import type { CoreV1Api } from '@kubernetes/client-node';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { parseQuantity } from '../../crds/quantity';

export interface ResizeClaimView {
  namespace: string;
  name: string;
  volumeName?: string;
  phase?: string;
  /** spec.resources.requests.storage. */
  requested: string;
  /** status.capacity.storage. */
  capacity?: string;
  storageClassName?: string;
}

export interface ResizeVolumeView {
  name: string;
  ours: boolean;
  capacity?: string;
}

export interface ResizeAction {
  kind: 'resize';
  namespace: string;
  claimName: string;
  volumeName: string;
  size: string;
}

const less = (a: string | undefined, b: string): boolean => {
  const x = parseQuantity(a);
  const y = parseQuantity(b);
  return y !== undefined && (x === undefined || x < y);
};

/** Bound claims on volumes of ours that ask for more than the volume or the claim's status holds. */
export function planResizes(
  claims: readonly ResizeClaimView[],
  volumes: readonly ResizeVolumeView[],
  expandable: (storageClassName: string) => boolean,
): ResizeAction[] {
  const byName = new Map(volumes.map((v) => [v.name, v]));
  const actions: ResizeAction[] = [];
  for (const c of claims) {
    if (c.phase !== 'Bound' || !c.volumeName || !c.storageClassName) continue;
    const volume = byName.get(c.volumeName);
    if (!volume?.ours || !expandable(c.storageClassName)) continue;
    if (less(volume.capacity, c.requested) || less(c.capacity, c.requested)) {
      actions.push({
        kind: 'resize',
        namespace: c.namespace,
        claimName: c.name,
        volumeName: c.volumeName,
        size: c.requested,
      });
    }
  }
  return actions;
}

/**
 * Carries out one resize on a volume that has no size of its own (a local-path folder): raises the
 * volume's capacity, then the claim's status capacity, which is all that growing such a volume means.
 */
export async function applyResize(
  core: Pick<CoreV1Api, 'patchPersistentVolume' | 'patchNamespacedPersistentVolumeClaimStatus'>,
  a: ResizeAction,
): Promise<void> {
  const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  await core.patchPersistentVolume(
    { name: a.volumeName, body: { spec: { capacity: { storage: a.size } } } },
    merge,
  );
  await core.patchNamespacedPersistentVolumeClaimStatus(
    {
      name: a.claimName,
      namespace: a.namespace,
      body: { status: { capacity: { storage: a.size }, conditions: null } },
    },
    merge,
  );
}
