// The message an operation ends with when the plan has nothing more for it: what the cluster is, said for this operation (pure).
import { Reasons } from '../crds/conditions';
import type { OperationType } from '../crds/etcd-cluster';
import type { Step } from './plan-types';

/**
 * The result message of an operation whose plan said None. A storage growth the StorageClass refuses is the
 * Rollout's news; any other operation (a Downgrade, a ScaleUp) that ends while that refusal stands reports the
 * cluster's state instead, since the refusal is not what it did (status and a Warning Event still tell it).
 * A pre-upgrade snapshot, when one was taken, is named.
 */
export function operationResultMessage(
  type: OperationType,
  step: Extract<Step, { kind: 'None' }>,
  snapshotUri?: string,
): string {
  const unrelated = step.reason === Reasons.StorageExpansionRefused && type !== 'Rollout';
  const message = unrelated ? (step.converged ?? 'done') : step.message;
  return snapshotUri ? `${message}; pre-upgrade snapshot ${snapshotUri}` : message;
}
