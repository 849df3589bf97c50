// What observe reports for rollouts: each Pod against the spec's template, each claim's size and whether it may grow.

/**
 * Whether Kubernetes will grow this claim: only a claim whose StorageClass sets allowVolumeExpansion may
 * ask for more (the apiserver's PersistentVolumeClaimResize admission refuses any other).
 */
export type ClaimExpansion = 'Allowed' | 'NoStorageClass' | 'ClassForbids' | 'ClassNotFound';

export interface ClaimStorageObservation {
  /** spec.resources.requests.storage. */
  requested?: string;
  /** status.capacity.storage: what the volume holds now. */
  capacity?: string;
  storageClassName?: string;
  expansion: ClaimExpansion;
}

export interface PodTemplate {
  hash: string;
  parts: Record<string, string>;
}

/** What observe reports of one Pod against the spec it was asked about. */
export interface PodTemplateObservation {
  /** The Pod was rendered from the spec's template. */
  upToDate: boolean;
  /** Readable names of the parts that differ (e.g. `options`, `resources`); empty when up to date. */
  changed: string[];
  /** The spec's template hash: what a rolled Pod carries. */
  hash: string;
  /** The Pod carries the spec's podLabels and podAnnotations (changes to those are patched, not rolled). */
  metadataCurrent: boolean;
  /**
   * Only on an out-of-date Pod whose restart would cut the member off: the spec's CA bundles do not trust a
   * certificate the cluster uses, in words (activities/tls-trust.ts). The rollout holds while it is set.
   */
  untrusted?: string;
}
