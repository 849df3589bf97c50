// What observe adds for rollouts: each Pod compared with the spec's template, each claim's size and whether its StorageClass lets it grow.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { KubeObjects } from './kube-objects';
import type { ClaimExpansion, ClaimStorageObservation } from '../contracts/rollout';

export interface ClaimLike extends KubernetesObject {
  spec?: { storageClassName?: string; resources?: { requests?: Record<string, string | number> } };
  status?: { capacity?: Record<string, string | number> };
}

interface StorageClassLike extends KubernetesObject {
  allowVolumeExpansion?: boolean;
  volumeBindingMode?: string;
}

/** What the operator needs of a StorageClass. */
export interface StorageClassView {
  /** allowVolumeExpansion */
  expandable: boolean;
  /** volumeBindingMode WaitForFirstConsumer: claims bind only once the scheduler placed their Pod. */
  bindsOnFirstConsumer: boolean;
}

/** The StorageClasses the claims name, read once each: name -> what matters of it, undefined when absent. */
export async function readStorageClasses(
  kube: KubeObjects,
  claims: readonly ClaimLike[],
): Promise<Map<string, StorageClassView | undefined>> {
  const names = [...new Set(claims.map((c) => c.spec?.storageClassName).filter((n): n is string => !!n))];
  const entries = await Promise.all(
    names.map(async (name): Promise<[string, StorageClassView | undefined]> => {
      // A class the operator may not read (RBAC) counts as not found: observing must not fail over it.
      const sc = await kube
        .read<StorageClassLike>({
          apiVersion: 'storage.k8s.io/v1',
          kind: 'StorageClass',
          namespace: '',
          name,
        })
        .catch(() => undefined);
      return [
        name,
        sc
          ? {
              expandable: sc.allowVolumeExpansion === true,
              bindsOnFirstConsumer: sc.volumeBindingMode === 'WaitForFirstConsumer',
            }
          : undefined,
      ];
    }),
  );
  return new Map(entries);
}

export function claimStorageOf(
  claim: ClaimLike,
  classes: ReadonlyMap<string, StorageClassView | undefined>,
): ClaimStorageObservation {
  const className = claim.spec?.storageClassName;
  const requested = claim.spec?.resources?.requests?.['storage'];
  const capacity = claim.status?.capacity?.['storage'];
  const allows = className ? classes.get(className)?.expandable : undefined;
  const expansion: ClaimExpansion = !className
    ? 'NoStorageClass'
    : allows === undefined
      ? 'ClassNotFound'
      : allows
        ? 'Allowed'
        : 'ClassForbids';
  return {
    ...(requested !== undefined ? { requested: String(requested) } : {}),
    ...(capacity !== undefined ? { capacity: String(capacity) } : {}),
    ...(className ? { storageClassName: className } : {}),
    expansion,
  };
}
