// The workflow bundle's entry: every workflow type the worker registers.
export { etcdClusterWorkflow } from './cluster-workflow';
export { clusterOperationWorkflow } from './operation-workflow';
export { etcdSnapshotWorkflow } from './snapshot-workflow';
export { etcdSnapshotScheduleWorkflow } from './snapshot-schedule-workflow';
export { snapshotScheduleRunWorkflow } from './snapshot-schedule-run-workflow';
export { defragDueWorkflow } from './defrag-due-workflow';
export { etcdSnapshotVerifyWorkflow } from './snapshot-verify-workflow';
