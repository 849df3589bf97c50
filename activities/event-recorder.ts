// Records Kubernetes Events on an EtcdCluster so `kubectl describe` shows what the operator did and why.
import type { KubeConfig } from '@kubernetes/client-node';
import { CoreV1Api } from '@kubernetes/client-node';
import { API_VERSION, ETCD_CLUSTER } from '../crds/etcd-cluster';
import type { ClusterRef } from './member-manifests';

export interface EventInput {
  ref: ClusterRef;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export interface EventRecorder {
  record(event: EventInput): Promise<void>;
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
