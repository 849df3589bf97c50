// The Kubernetes -> Temporal bridge: turns EtcdCluster, member Pod and claim changes into signals; decides nothing.
//
// Invariant: a watch that fails is restarted (relist with back-off), never left silently stopped, and a
// change the workflow already knows about (resync, duplicate) sends no signal.
import type { WatchSignalKind } from '../contracts/watch-signals';
import type { KubernetesObject } from '@kubernetes/client-node';
import { CoreV1Api, makeInformer } from '@kubernetes/client-node';
import { WorkflowNotFoundError } from '@temporalio/client';
import { ETCD_CLUSTER } from '../crds/etcd-cluster';
import type { EtcdCluster } from '../crds/etcd-cluster';
import { Annotations } from '../crds/labels';
import type { ClusterChange, ClusterWorkflowInput } from '../contracts/messages';
import {
  clusterChangedSignal,
  clusterWorkflowId,
  membersChangedSignal,
  SearchAttributes,
  TASK_QUEUE,
  WorkflowTypes,
} from '../contracts/messages';
import type { WatcherBaseOptions } from './watch-setup';
import { customObjectInformer, watcherFor } from './watch-setup';
import { clusterChangeKey, memberChangeKey, owningCluster } from './change-keys';

export interface WatcherOptions extends WatcherBaseOptions {
  /** Called for each signal sent, for metrics. */
  onSignal?: (kind: Extract<WatchSignalKind, 'cluster' | 'members'>) => void;
}

export interface ClusterWatcher {
  stop(): Promise<void>;
}

const MANAGED_SELECTOR = 'app.kubernetes.io/managed-by=etcd-conductor';

export async function startClusterWatcher(opts: WatcherOptions): Promise<ClusterWatcher> {
  const { kubeConfig: kc, temporal, log } = opts;
  const taskQueue = opts.taskQueue ?? TASK_QUEUE;
  const core = kc.makeApiClient(CoreV1Api);
  const ns = opts.namespace;
  const sent = new Map<string, string>();
  let stopped = false;

  async function signalCluster(obj: EtcdCluster, deleted: boolean): Promise<void> {
    const { namespace, name, uid } = obj.metadata;
    if (!uid) return;
    const key = `${namespace}/${name}`;
    const changeKey = deleted ? `deleted:${uid}` : clusterChangeKey(obj);
    if (sent.get(key) === changeKey) return;
    const change: ClusterChange = {
      uid,
      generation: obj.metadata.generation ?? 0,
      spec: obj.spec,
      ...(obj.metadata.annotations?.[Annotations.retry]
        ? { retryToken: obj.metadata.annotations[Annotations.retry] }
        : {}),
      ...(obj.metadata.annotations?.[Annotations.approveRecovery] !== undefined
        ? { recoveryApproval: obj.metadata.annotations[Annotations.approveRecovery] }
        : {}),
      ...(obj.metadata.annotations?.[Annotations.approveRollback] !== undefined
        ? { rollbackApproval: obj.metadata.annotations[Annotations.approveRollback] }
        : {}),
      ...(deleted || obj.metadata.deletionTimestamp ? { deleted: true } : {}),
    };
    const workflowId = clusterWorkflowId(namespace, name);
    if (change.deleted) {
      // A deleted cluster's workflow is told to stop; one that does not run needs no start.
      try {
        await temporal.workflow.getHandle(workflowId).signal(clusterChangedSignal, change);
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
    } else {
      const input: ClusterWorkflowInput = { ref: { namespace, name, uid }, change };
      await temporal.workflow.signalWithStart(WorkflowTypes.cluster, {
        workflowId,
        taskQueue,
        args: [input],
        signal: clusterChangedSignal,
        signalArgs: [change],
        typedSearchAttributes: [
          { key: SearchAttributes.clusterNamespace, value: namespace },
          { key: SearchAttributes.clusterName, value: name },
          { key: SearchAttributes.clusterUid, value: uid },
        ],
        staticSummary: `etcd cluster ${namespace}/${name}`,
        staticDetails: `Keeps EtcdCluster **${namespace}/${name}** (uid ${uid}) as its spec says; each operation runs as a child workflow.`,
      });
    }
    sent.set(key, changeKey);
    opts.onSignal?.('cluster');
    log('signalled cluster change', {
      cluster: key,
      workflowId,
      generation: change.generation,
      deleted: Boolean(change.deleted),
    });
  }

  const memberKeys = new Map<string, string>();
  async function signalMembers(obj: KubernetesObject, deleted: boolean): Promise<void> {
    const owner = owningCluster(obj);
    if (!owner || !obj.metadata?.uid) return;
    const objKey = `${obj.kind ?? ''}/${obj.metadata.uid}`;
    const changeKey = deleted ? 'deleted' : memberChangeKey(obj);
    if (memberKeys.get(objKey) === changeKey) return;
    if (deleted) memberKeys.delete(objKey);
    else memberKeys.set(objKey, changeKey);
    try {
      await temporal.workflow
        .getHandle(clusterWorkflowId(owner.namespace, owner.name))
        .signal(membersChangedSignal);
      opts.onSignal?.('members');
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    }
  }

  const watch = watcherFor(opts, {
    stopped: () => stopped,
    onSignalFailed: () => {
      sent.clear();
      memberKeys.clear();
    },
  });

  const clusters = customObjectInformer<EtcdCluster & KubernetesObject>(kc, ns, ETCD_CLUSTER.plural);
  const pods = makeInformer(
    kc,
    ns ? `/api/v1/namespaces/${ns}/pods` : '/api/v1/pods',
    async () =>
      (ns
        ? core.listNamespacedPod({ namespace: ns, labelSelector: MANAGED_SELECTOR })
        : core.listPodForAllNamespaces({ labelSelector: MANAGED_SELECTOR })) as never,
    MANAGED_SELECTOR,
  );
  const claims = makeInformer(
    kc,
    ns ? `/api/v1/namespaces/${ns}/persistentvolumeclaims` : '/api/v1/persistentvolumeclaims',
    async () =>
      (ns
        ? core.listNamespacedPersistentVolumeClaim({ namespace: ns, labelSelector: MANAGED_SELECTOR })
        : core.listPersistentVolumeClaimForAllNamespaces({ labelSelector: MANAGED_SELECTOR })) as never,
    MANAGED_SELECTOR,
  );

  watch('etcdclusters', clusters, (obj, deleted) => signalCluster(obj, deleted));
  watch('pods', pods, (obj, deleted) => signalMembers({ ...obj, kind: 'Pod' }, deleted));
  watch('persistentvolumeclaims', claims, (obj, deleted) =>
    signalMembers({ ...obj, kind: 'PersistentVolumeClaim' }, deleted),
  );
  await Promise.all([clusters.start(), pods.start(), claims.start()]);
  log('watching EtcdClusters, member Pods and claims', { namespace: ns ?? '(all)' });

  return {
    async stop() {
      stopped = true;
      await Promise.all([clusters.stop(), pods.stop(), claims.stop()]);
    },
  };
}
