// The Downgrade operation's workflow-side helpers: when to read etcd's downgrade state, and the Event reasons it records.
//
// Sandbox-safe: the activities come in as an argument (proxied by the operation workflow).
import type { DowngradeActivities } from '../activities/downgrade-activities';
import type { ClusterObservation } from '../contracts/observation';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { downgradeTargetVersion } from './downgrade-plan';
import type { ClusterRef } from '../contracts/cluster-ref';
import type { DowngradeObservation } from '../contracts/downgrade';

/** Event reasons on the EtcdCluster. */
export const DowngradeEvents = {
  enabled: 'DowngradeEnabled',
  refused: 'DowngradeRefused',
} as const;

/**
 * etcd's cluster and storage versions and downgrade state, read from the members etcd lists as started;
 * undefined while no member list answers (the plan then waits on members anyway).
 */
export async function observeDowngradeIfDue(
  acts: Pick<DowngradeActivities, 'observeDowngrade'>,
  ref: ClusterRef,
  spec: EtcdClusterSpec,
  observation: ClusterObservation,
): Promise<DowngradeObservation | undefined> {
  const targetVersion = downgradeTargetVersion(spec.version);
  const members = (observation.etcd?.members ?? []).filter((m) => m.started).map((m) => m.name);
  if (!targetVersion || members.length === 0) return undefined;
  return acts.observeDowngrade({ ref, members, targetVersion });
}
