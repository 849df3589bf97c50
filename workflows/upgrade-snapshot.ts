// The Upgrade operation's first act when spec.backup is set: an EtcdSnapshot of the cluster, waited for before any member is touched.
//
// Invariant: a failed snapshot ends the operation Failed (UpgradeSnapshotFailed) with nothing restarted.
import { ApplicationFailure, proxyActivities, sleep } from '@temporalio/workflow';
import type { ClusterActivities } from '../activities/cluster-activities';
import { FailureTypes } from '../crds/conditions';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import type { ClusterRef } from '../contracts/cluster-ref';
import { ActivityKinds } from './activity-kinds';

const acts = proxyActivities<ClusterActivities>(ActivityKinds.operationStep);

/** How often the snapshot's phase is read while its Job streams. */
const SNAPSHOT_POLL = '2s';

/** Event reasons on the EtcdCluster. */
export const UpgradeEvents = {
  snapshotTaken: 'PreUpgradeSnapshotTaken',
  snapshotFailed: 'PreUpgradeSnapshotFailed',
} as const;

/**
 * `main-pre-upgrade-7` for the operation `etcdcluster/<ns>/main/op/7-upgrade`: derived from the operation, so a
 * retried activity or a worker restart finds the snapshot it created, and a retried upgrade takes a new one.
 */
export function preUpgradeSnapshotName(cluster: string, operationWorkflowId: string): string {
  const seq = /\/op\/(\d+)-[a-z]+$/.exec(operationWorkflowId)?.[1] ?? '0';
  return `${cluster}-pre-upgrade-${seq}`;
}

/** Takes the snapshot and returns its artifact URI; throws a non-retryable failure when it failed. */
export async function takePreUpgradeSnapshot(input: {
  ref: ClusterRef;
  spec: EtcdClusterSpec;
  operationWorkflowId: string;
  details: (line: string) => void;
}): Promise<string> {
  const { ref, spec, details } = input;
  const name = preUpgradeSnapshotName(ref.name, input.operationWorkflowId);
  details(`taking pre-upgrade snapshot ${name} before any member is restarted`);
  await acts.createPreUpgradeSnapshot({ ref, spec, name });
  for (;;) {
    const state = await acts.readPreUpgradeSnapshot({ ref, name });
    if (state.phase === 'Succeeded') {
      await acts.recordEvent({
        ref,
        type: 'Normal',
        reason: UpgradeEvents.snapshotTaken,
        message: `EtcdSnapshot ${name} stored ${state.uri} before the upgrade to ${spec.version}`,
      });
      return state.uri;
    }
    if (state.phase === 'Failed') {
      const message = `pre-upgrade snapshot ${name} failed (${state.reason}): ${state.message}; no member was restarted`;
      await acts.recordEvent({ ref, type: 'Warning', reason: UpgradeEvents.snapshotFailed, message });
      throw ApplicationFailure.nonRetryable(message, FailureTypes.UpgradeSnapshotFailed);
    }
    details(`waiting for pre-upgrade snapshot ${name}: ${state.message}`);
    await sleep(SNAPSHOT_POLL);
  }
}
