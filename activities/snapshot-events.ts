// Records Kubernetes Events on EtcdSnapshots and EtcdSnapshotSchedules, so `kubectl describe` tells what each run did.
import type { KubeConfig } from '@kubernetes/client-node';
import { CoreV1Api } from '@kubernetes/client-node';
import { API_VERSION } from '../crds/etcd-cluster';
import type { EventReason } from '../contracts/event-reasons';

export interface SnapshotEventInput {
  involved: { kind: 'EtcdSnapshot' | 'EtcdSnapshotSchedule'; namespace: string; name: string; uid: string };
  type: 'Normal' | 'Warning';
  reason: EventReason;
  message: string;
}

export interface SnapshotEventRecorder {
  record(event: SnapshotEventInput): Promise<void>;
}

export function createSnapshotEventRecorder(
  kc: KubeConfig,
  component = 'etcd-conductor',
): SnapshotEventRecorder {
  const core = kc.makeApiClient(CoreV1Api);
  return {
    async record({ involved, type, reason, message }) {
      const now = new Date();
      await core.createNamespacedEvent({
        namespace: involved.namespace,
        body: {
          metadata: { generateName: `${involved.name}.`, namespace: involved.namespace },
          involvedObject: { apiVersion: API_VERSION, ...involved },
          type,
          reason,
          message,
          source: { component },
          // The legacy timestamps, as activities/event-recorder.ts explains.
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
        },
      });
    },
  };
}
