// The workflow bundle's entry: every workflow type the worker registers.
export { etcdClusterWorkflow } from './cluster-workflow';
export { clusterOperationWorkflow } from './operation-workflow';
