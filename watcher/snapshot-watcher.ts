// The Kubernetes -> Temporal bridge for backups: EtcdSnapshots start (or cancel) their workflow, their Jobs signal it, EtcdSnapshotSchedules signal theirs; decides nothing.
//
// Invariant: a finished EtcdSnapshot (Succeeded/Failed) never starts a workflow again, and a change the
// workflow already knows about (resync, duplicate) sends nothing.
import type { WatchSignalKind } from '../contracts/watch-signals';
import type { KubernetesObject } from '@kubernetes/client-node';
import { BatchV1Api, makeInformer } from '@kubernetes/client-node';
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowIdConflictPolicy,
  WorkflowIdReusePolicy,
  WorkflowNotFoundError,
} from '@temporalio/client';
import type { EtcdSnapshot } from '../crds/etcd-snapshot';
import {
  ETCD_SNAPSHOT,
  isFinished,
  SnapshotConditionTypes,
  SnapshotLabels,
  VERIFY_REQUEST_ANNOTATION,
} from '../crds/etcd-snapshot';
import type { EtcdSnapshotSchedule } from '../crds/etcd-snapshot-schedule';
import { ETCD_SNAPSHOT_SCHEDULE } from '../crds/etcd-snapshot-schedule';
import type {
  ScheduleChange,
  ScheduleWorkflowInput,
  SnapshotVerifyWorkflowInput,
  SnapshotWorkflowInput,
} from '../contracts/messages';
import {
  scheduleChangedSignal,
  scheduleWorkflowId,
  SearchAttributes,
  SNAPSHOT_OPERATION_TYPE,
  snapshotJobChangedSignal,
  snapshotVerifyWorkflowId,
  snapshotWorkflowId,
  TASK_QUEUE,
  WorkflowTypes,
} from '../contracts/messages';
import type { WatcherBaseOptions } from './watch-setup';
import { customObjectInformer, watcherFor } from './watch-setup';

export interface SnapshotWatcherOptions extends WatcherBaseOptions {
  /** Metrics hooks, as in the cluster watcher. */
  onSignal?: (kind: Extract<WatchSignalKind, 'snapshot' | 'job' | 'schedule'>) => void;
}

export interface SnapshotWatcher {
  stop(): Promise<void>;
}

/**
 * What about an EtcdSnapshot matters to the watcher: identity, whether it is finished, whether it is going, and what
 * a re-check depends on (the verify-request annotation, the request the last check answered, whether one runs).
 */
export function snapshotChangeKey(obj: Pick<EtcdSnapshot, 'metadata' | 'status'>): string {
  return JSON.stringify([
    obj.metadata.uid ?? '',
    isFinished(obj.status?.phase),
    Boolean(obj.metadata.deletionTimestamp),
    obj.metadata.annotations?.[VERIFY_REQUEST_ANNOTATION] ?? '',
    obj.status?.verification?.request ?? '',
    verifiedStatus(obj),
  ]);
}

const verifiedStatus = (obj: Pick<EtcdSnapshot, 'status'>) =>
  obj.status?.conditions?.find((c) => c.type === SnapshotConditionTypes.Verified)?.status ?? '';

/**
 * The verify-request value a re-check should answer now, or undefined: only for a stored snapshot (Succeeded, with
 * an artifact) that is not going away, whose last check answered another value, and with no check running (a
 * request made meanwhile is answered once that check has ended).
 */
export function reverifyRequest(obj: Pick<EtcdSnapshot, 'metadata' | 'status'>): string | undefined {
  const request = obj.metadata.annotations?.[VERIFY_REQUEST_ANNOTATION]?.trim();
  if (!request || obj.metadata.deletionTimestamp) return undefined;
  if (obj.status?.phase !== 'Succeeded' || !obj.status.artifact) return undefined;
  if (obj.status.verification?.request === request) return undefined;
  if (verifiedStatus(obj) === 'Unknown') return undefined;
  return request;
}

/** What about an EtcdSnapshotSchedule matters: identity, spec generation, deletion. */
export function scheduleChangeKey(obj: Pick<EtcdSnapshotSchedule, 'metadata'>): string {
  return JSON.stringify([
    obj.metadata.uid ?? '',
    obj.metadata.generation ?? 0,
    Boolean(obj.metadata.deletionTimestamp),
  ]);
}

/** What about a snapshot Job matters: its conditions (finished or not) and Pod counts. */
export function snapshotJobChangeKey(obj: {
  metadata?: { uid?: string };
  status?: {
    active?: number;
    failed?: number;
    succeeded?: number;
    conditions?: { type?: string; status?: string }[];
  };
}): string {
  const s = obj.status ?? {};
  return JSON.stringify([
    obj.metadata?.uid ?? '',
    s.active ?? 0,
    s.failed ?? 0,
    s.succeeded ?? 0,
    (s.conditions ?? []).map((c) => `${c.type}=${c.status}`).sort(),
  ]);
}

export async function startSnapshotWatcher(opts: SnapshotWatcherOptions): Promise<SnapshotWatcher> {
  const { kubeConfig: kc, temporal, log } = opts;
  const taskQueue = opts.taskQueue ?? TASK_QUEUE;
  const batch = kc.makeApiClient(BatchV1Api);
  const ns = opts.namespace;
  const sent = new Map<string, string>();
  let stopped = false;

  const ignoreNotFound = (err: unknown) => {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  };

  async function onSnapshot(obj: EtcdSnapshot, deleted: boolean): Promise<void> {
    const { namespace, name, uid } = obj.metadata;
    if (!uid) return;
    const key = `snapshot:${uid}`;
    const changeKey = deleted ? 'deleted' : snapshotChangeKey(obj);
    if (sent.get(key) === changeKey) return;
    const workflowId = snapshotWorkflowId(namespace, name);
    if (deleted || obj.metadata.deletionTimestamp) {
      // The workflow deletes its Job and ends; the Job is owned by the EtcdSnapshot, so GC would too.
      await temporal.workflow.getHandle(workflowId).cancel().catch(ignoreNotFound);
    } else if (!isFinished(obj.status?.phase)) {
      const input: SnapshotWorkflowInput = { snapshot: { namespace, name, uid }, spec: obj.spec };
      await temporal.workflow.start(WorkflowTypes.snapshot, {
        workflowId,
        taskQueue,
        args: [input],
        // A relist while it runs finds the running workflow; an object made again under the same name runs anew.
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
        typedSearchAttributes: [
          { key: SearchAttributes.clusterNamespace, value: namespace },
          { key: SearchAttributes.clusterName, value: obj.spec.clusterRef.name },
          { key: SearchAttributes.operationType, value: SNAPSHOT_OPERATION_TYPE },
        ],
        staticSummary: `snapshot ${namespace}/${obj.spec.clusterRef.name} as ${name}`,
        staticDetails: `Takes EtcdSnapshot **${namespace}/${name}** (uid ${uid}) of EtcdCluster ${obj.spec.clusterRef.name}. Cancel it with \`temporal workflow cancel --workflow-id ${workflowId}\`; its Job is deleted.`,
      });
      log('started snapshot workflow', { workflowId });
      opts.onSignal?.('snapshot');
    } else {
      const request = reverifyRequest(obj);
      if (request) await startReverify(obj, request);
    }
    if (deleted) sent.delete(key);
    else sent.set(key, changeKey);
  }

  /** One workflow per request value: a relist finds it started (or done) and starts nothing. */
  async function startReverify(obj: EtcdSnapshot, request: string): Promise<void> {
    const { namespace, name, uid } = obj.metadata;
    if (!uid || !obj.status) return;
    const workflowId = snapshotVerifyWorkflowId(namespace, name, request);
    const input: SnapshotVerifyWorkflowInput = {
      snapshot: { namespace, name, uid },
      spec: obj.spec,
      status: obj.status,
      request,
    };
    try {
      await temporal.workflow.start(WorkflowTypes.snapshotVerify, {
        workflowId,
        taskQueue,
        args: [input],
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        typedSearchAttributes: [
          { key: SearchAttributes.clusterNamespace, value: namespace },
          { key: SearchAttributes.clusterName, value: obj.spec.clusterRef.name },
          { key: SearchAttributes.operationType, value: SNAPSHOT_OPERATION_TYPE },
        ],
        staticSummary: `verify snapshot ${namespace}/${name}`,
        staticDetails: `Checks the stored snapshot of EtcdSnapshot **${namespace}/${name}** again, as its ${VERIFY_REQUEST_ANNOTATION} annotation asks.`,
      });
      log('started snapshot verification', { workflowId });
      opts.onSignal?.('snapshot');
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }

  async function onSnapshotJob(obj: KubernetesObject, deleted: boolean): Promise<void> {
    const snapshot = obj.metadata?.labels?.[SnapshotLabels.snapshot];
    const namespace = obj.metadata?.namespace;
    if (!snapshot || !namespace || !obj.metadata?.uid) return;
    const key = `job:${obj.metadata.uid}`;
    const changeKey = deleted ? 'deleted' : snapshotJobChangeKey(obj);
    if (sent.get(key) === changeKey) return;
    await temporal.workflow
      .getHandle(snapshotWorkflowId(namespace, snapshot))
      .signal(snapshotJobChangedSignal)
      .catch(ignoreNotFound);
    opts.onSignal?.('job');
    if (deleted) sent.delete(key);
    else sent.set(key, changeKey);
  }

  async function onSchedule(obj: EtcdSnapshotSchedule, deleted: boolean): Promise<void> {
    const { namespace, name, uid } = obj.metadata;
    if (!uid) return;
    const key = `schedule:${namespace}/${name}`;
    const changeKey = deleted ? `deleted:${uid}` : scheduleChangeKey(obj);
    if (sent.get(key) === changeKey) return;
    const change: ScheduleChange = {
      uid,
      generation: obj.metadata.generation ?? 0,
      spec: obj.spec,
      ...(deleted || obj.metadata.deletionTimestamp ? { deleted: true } : {}),
    };
    const workflowId = scheduleWorkflowId(namespace, name);
    if (change.deleted) {
      await temporal.workflow
        .getHandle(workflowId)
        .signal(scheduleChangedSignal, change)
        .catch(ignoreNotFound);
    } else {
      const input: ScheduleWorkflowInput = { schedule: { namespace, name, uid }, change };
      await temporal.workflow.signalWithStart(WorkflowTypes.schedule, {
        workflowId,
        taskQueue,
        args: [input],
        signal: scheduleChangedSignal,
        signalArgs: [change],
        typedSearchAttributes: [
          { key: SearchAttributes.clusterNamespace, value: namespace },
          { key: SearchAttributes.clusterName, value: obj.spec.clusterRef.name },
          { key: SearchAttributes.operationType, value: SNAPSHOT_OPERATION_TYPE },
        ],
        staticSummary: `snapshot schedule ${namespace}/${name}`,
        staticDetails: `Keeps the Temporal Schedule of EtcdSnapshotSchedule **${namespace}/${name}** (uid ${uid}); its runs are \`${workflowId}/run-<time>\`.`,
      });
    }
    sent.set(key, changeKey);
    opts.onSignal?.('schedule');
    log('signalled schedule change', {
      workflowId,
      generation: change.generation,
      deleted: Boolean(change.deleted),
    });
  }

  const watch = watcherFor(opts, { stopped: () => stopped, onSignalFailed: () => sent.clear() });
  const customInformer = <T extends KubernetesObject>(plural: string) =>
    customObjectInformer<T>(kc, ns, plural);
  const snapshots = customInformer<EtcdSnapshot & KubernetesObject>(ETCD_SNAPSHOT.plural);
  const schedules = customInformer<EtcdSnapshotSchedule & KubernetesObject>(ETCD_SNAPSHOT_SCHEDULE.plural);
  const jobSelector = SnapshotLabels.snapshot;
  const jobs = makeInformer(
    kc,
    ns ? `/apis/batch/v1/namespaces/${ns}/jobs` : '/apis/batch/v1/jobs',
    async () =>
      (ns
        ? batch.listNamespacedJob({ namespace: ns, labelSelector: jobSelector })
        : batch.listJobForAllNamespaces({ labelSelector: jobSelector })) as never,
    jobSelector,
  );

  watch('etcdsnapshots', snapshots, (obj, deleted) => onSnapshot(obj, deleted));
  watch('etcdsnapshotschedules', schedules, (obj, deleted) => onSchedule(obj, deleted));
  watch('jobs', jobs, (obj, deleted) => onSnapshotJob(obj, deleted));
  await Promise.all([snapshots.start(), schedules.start(), jobs.start()]);
  log('watching EtcdSnapshots, EtcdSnapshotSchedules and snapshot Jobs', { namespace: ns ?? '(all)' });

  return {
    async stop() {
      stopped = true;
      await Promise.all([snapshots.stop(), schedules.stop(), jobs.stop()]);
    },
  };
}
