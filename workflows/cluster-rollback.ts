// The cluster workflow's part in a rollback in place (rebuild-point.ts rollbackGate decides, the Rebuild operation
// acts): an approval that names something other than this cluster's uid starts nothing, and is told once as a
// RollbackRefused Event, so the user learns why nothing happens.
import { patched } from '@temporalio/workflow';
import { Annotations } from '../crds/labels';
import type { ClusterRunState } from './cluster-run-state';
import { clusterActs as acts } from './cluster-run-state';
import { ROLLBACK_IN_PLACE_PATCH } from './plan-now';
import { judgeApproval } from './quorum-loss';

export async function tellRefusedRollback(s: ClusterRunState): Promise<void> {
  const approval = judgeApproval(s.desired.rollbackApproval, s.ref.uid, Annotations.approveRollback);
  if (approval.kind !== 'Refused') return;
  const notice = `RollbackRefused|${approval.value}`;
  // Asked of the patch only when a refusal is there to tell: histories that never met one record no marker.
  if (s.told.includes(notice) || !patched(ROLLBACK_IN_PLACE_PATCH)) return;
  s.told = [...s.told, notice].slice(-32);
  await acts.recordEvent({
    ref: s.ref,
    type: 'Warning',
    reason: 'RollbackRefused',
    message: approval.message,
  });
}
