// Records Kubernetes Events on an EtcdCluster so `kubectl describe` shows what the operator did and why.
import type { KubeConfig } from '@kubernetes/client-node';
import { ApiException, CoreV1Api } from '@kubernetes/client-node';
import { API_VERSION, ETCD_CLUSTER } from '../crds/etcd-cluster';
import type { ClusterRef } from '../contracts/cluster-ref';
import type { EventReason } from '../contracts/event-reasons';

export interface EventInput {
  ref: ClusterRef;
  type: 'Normal' | 'Warning';
  reason: EventReason;
  message: string;
}

export interface EventRecorder {
  record(event: EventInput): Promise<void>;
}

/**
 * Records one Event, dropping it when the apiserver refuses it (4xx): the audit trail must never block an
 * operation, a snapshot or a schedule. Anything else (the apiserver unreachable) is thrown, so Temporal retries.
 */
export async function recordOrDrop(record: () => Promise<void>): Promise<'recorded' | 'dropped'> {
  try {
    await record();
    return 'recorded';
  } catch (err) {
    if (err instanceof ApiException && err.code >= 400 && err.code < 500) return 'dropped';
    throw err;
  }
}

export function createEventRecorder(kc: KubeConfig, component = 'etcd-conductor'): EventRecorder {
  const core = kc.makeApiClient(CoreV1Api);
  return {
    async record({ ref, type, reason, message }) {
      const now = new Date();
      await core.createNamespacedEvent({
        namespace: ref.namespace,
        body: {
          metadata: { generateName: `${ref.name}.`, namespace: ref.namespace },
          involvedObject: {
            apiVersion: API_VERSION,
            kind: ETCD_CLUSTER.kind,
            name: ref.name,
            namespace: ref.namespace,
            uid: ref.uid,
          },
          type,
          reason,
          message,
          source: { component },
          // The legacy (first/lastTimestamp) form: eventTime is a MicroTime the client serialises with
          // milliseconds only, which the apiserver refuses.
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
        },
      });
    },
  };
}
