// Names the watcher and the workflows share: task queue, workflow ids, signals, queries, search attributes.
//
// Plain data with types only, no runtime import: the watcher (a client) and the workflows (in the sandbox) both
// use these definitions, and neither pulls the other's Temporal package. A definition is what defineSignal and
// defineQuery of @temporalio/workflow return ({ type, name }); the handler and the client use only the name.
import type { defineSearchAttributeKey, QueryDefinition, SignalDefinition } from '@temporalio/common';

type KeywordAttributeKey = ReturnType<typeof defineSearchAttributeKey<'KEYWORD'>>;
import type { EtcdClusterSpec, OperationType } from '../crds/etcd-cluster';
import type { EtcdSnapshotSpec, EtcdSnapshotStatus } from '../crds/etcd-snapshot';
import type { EtcdSnapshotScheduleSpec } from '../crds/etcd-snapshot-schedule';
import type { ClusterObservation } from './observation';

// The casts add only the SDK's argument brands, which exist in types alone ("not present at run-time").
function defineSignal<Args extends unknown[]>(name: string): SignalDefinition<Args> {
  return { type: 'signal', name } as SignalDefinition<Args>;
}

function defineQuery<Ret>(name: string): QueryDefinition<Ret> {
  return { type: 'query', name } as QueryDefinition<Ret>;
}

/** A Keyword search attribute (Temporal's defineSearchAttributeKey(name, 'KEYWORD')). */
function keywordAttribute(name: string): KeywordAttributeKey {
  return { name, type: 'KEYWORD' };
}

/** The one task queue every worker polls; the watcher starts workflows on it. */
export const TASK_QUEUE = 'etcd-conductor';

/** One cluster workflow per EtcdCluster, found again from the object's namespace and name. */
export function clusterWorkflowId(namespace: string, name: string): string {
  return `etcdcluster/${namespace}/${name}`;
}

/** Readable, unique per operation: `etcdcluster/default/main/op/3-scaleup`. */
export function operationWorkflowId(
  namespace: string,
  name: string,
  seq: number,
  type: OperationType,
): string {
  return `${clusterWorkflowId(namespace, name)}/op/${seq}-${type.toLowerCase()}`;
}

/** What the watcher tells a cluster workflow about its EtcdCluster object. */
export interface ClusterChange {
  uid: string;
  generation: number;
  spec: EtcdClusterSpec;
  /** The etcd.conductor.dev/retry annotation's value: a new value retries a halted operation. */
  retryToken?: string;
  /** The etcd.conductor.dev/approve-recovery annotation's value: approves a recovery when it is the object's uid. */
  recoveryApproval?: string;
  /** The etcd.conductor.dev/approve-rollback annotation's value: approves spec.rollback when it is the object's uid. */
  rollbackApproval?: string;
  /** The object has a deletionTimestamp or is gone: the workflow stops and leaves cleanup to owner references. */
  deleted?: boolean;
}

/** The EtcdCluster changed (spec, retry annotation, or deletion). Coalesced: only the newest generation counts. */
export const clusterChangedSignal = defineSignal<[ClusterChange]>('clusterChanged');

/**
 * The step an operation is on: its line, what it waits on when it waits (a Wait step's reason), and the look the
 * operation planned it on, when it had one (the cluster workflow writes status from it instead of looking itself).
 */
export interface OperationStep {
  line: string;
  waitReason?: string;
  look?: ClusterObservation;
}

/**
 * An operation's child workflow tells its cluster workflow the step it is on, for status.currentOperation.step.
 * Operations started before the patch `operation-step-as-data` send the line alone.
 */
export const operationStepSignal = defineSignal<[string | OperationStep]>('operationStep');

/** A firing of the cluster's defrag schedule (contracts/defrag-schedule.ts), for the object of this uid only. */
export interface DefragDue {
  uid: string;
}

/** Sent by defragDueWorkflow, which the cluster's Temporal Schedule starts at each firing. */
export const defragDueSignal = defineSignal<[DefragDue]>('defragDue');

/** A member Pod or claim changed: observe again now instead of at the next drift check. */
export const membersChangedSignal = defineSignal<[]>('membersChanged');

export interface ClusterProgress {
  generation: number;
  operation?: { type: OperationType; workflowId: string; step?: string };
  halted?: { generation: number; reason: string };
  lastDecision?: string;
}

/** The cluster workflow's view of itself, for `temporal workflow query --name progress`. */
export const progressQuery = defineQuery<ClusterProgress>('progress');

/** Search attributes, registered on the server (the local stack's dev server registers them at start). */
export const SearchAttributes = {
  clusterNamespace: keywordAttribute('EtcdClusterNamespace'),
  clusterName: keywordAttribute('EtcdClusterName'),
  clusterUid: keywordAttribute('EtcdClusterUID'),
  operationType: keywordAttribute('EtcdOperationType'),
} as const;

/** The same list as `temporal operator search-attribute create` / `server start-dev --search-attribute` want it. */
export const SEARCH_ATTRIBUTE_DEFINITIONS: readonly { name: string; type: 'Keyword' }[] = Object.values(
  SearchAttributes,
).map((k) => ({ name: k.name, type: 'Keyword' as const }));

/** Workflow type names, so the watcher can start workflows without importing workflow code. */
export const WorkflowTypes = {
  cluster: 'etcdClusterWorkflow',
  operation: 'clusterOperationWorkflow',
  snapshot: 'etcdSnapshotWorkflow',
  schedule: 'etcdSnapshotScheduleWorkflow',
  scheduleRun: 'snapshotScheduleRunWorkflow',
  snapshotVerify: 'etcdSnapshotVerifyWorkflow',
  defragDue: 'defragDueWorkflow',
} as const;

/** The value of the EtcdOperationType search attribute on snapshot workflows (cluster operations use OperationType). */
export const SNAPSHOT_OPERATION_TYPE = 'Snapshot';

/** One workflow per EtcdSnapshot: `etcdsnapshot/default/main-daily-20260301`. */
export function snapshotWorkflowId(namespace: string, name: string): string {
  return `etcdsnapshot/${namespace}/${name}`;
}

/** One re-check per value of the verify-request annotation: `etcdsnapshot/default/main-daily/verify/<value>`. */
export function snapshotVerifyWorkflowId(namespace: string, name: string, request: string): string {
  return `${snapshotWorkflowId(namespace, name)}/verify/${request.slice(0, 200)}`;
}

/** One entity workflow per EtcdSnapshotSchedule; the Temporal Schedule it keeps has the same id. */
export function scheduleWorkflowId(namespace: string, name: string): string {
  return `etcdsnapshotschedule/${namespace}/${name}`;
}

/** The Temporal Schedule's id; its runs are `<id>/run-<timestamp>`. */
export const temporalScheduleId = scheduleWorkflowId;

/** An EtcdSnapshot or EtcdSnapshotSchedule, as workflows name it. */
export interface ResourceRef {
  namespace: string;
  name: string;
  uid: string;
}

export interface SnapshotWorkflowInput {
  snapshot: ResourceRef;
  spec: EtcdSnapshotSpec;
}

/** A re-check of a stored snapshot: the EtcdSnapshot's status as the watcher saw it (artifact, last verification). */
export interface SnapshotVerifyWorkflowInput {
  snapshot: ResourceRef;
  spec: EtcdSnapshotSpec;
  status: EtcdSnapshotStatus;
  /** The verify-request annotation's value this run answers. */
  request: string;
}

/** A Job of this snapshot changed (the watcher saw it): look at it now instead of at the next check. */
export const snapshotJobChangedSignal = defineSignal<[]>('snapshotJobChanged');

/** What the watcher tells a schedule workflow about its EtcdSnapshotSchedule object. */
export interface ScheduleChange {
  uid: string;
  generation: number;
  spec: EtcdSnapshotScheduleSpec;
  deleted?: boolean;
}

export interface ScheduleWorkflowInput {
  schedule: ResourceRef;
  change: ScheduleChange;
}

/** The EtcdSnapshotSchedule changed or was deleted. Coalesced: only the newest generation counts. */
export const scheduleChangedSignal = defineSignal<[ScheduleChange]>('scheduleChanged');

/** A schedule run's argument: only the reference; the run reads the schedule's spec when it starts. */
export interface ScheduleRunInput {
  schedule: ResourceRef;
}

/** The cluster workflow's start argument. */
export interface ClusterWorkflowInput {
  ref: { namespace: string; name: string; uid: string };
  change: ClusterChange;
}
