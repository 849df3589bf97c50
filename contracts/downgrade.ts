// What the downgrade activities report to the planner (workflows/downgrade-plan.ts).

/** What etcd says about a downgrade; workflows/downgrade-plan.ts decides on it. */
export interface DowngradeObservation {
  /** etcd's cluster version (`etcdcluster` of a member's /version, e.g. `3.6.0`); the highest any member reports. */
  clusterVersion?: string;
  /** `storage` of each member's /version that reports one (3.6 and later), by member name. */
  storageVersions: Record<string, string>;
  /** Whether a downgrade is enabled (etcd's Validate answers "downgrade job in progress"); undefined when unknown. */
  enabled?: boolean;
}
