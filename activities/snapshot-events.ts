// Records Kubernetes Events on EtcdSnapshots and EtcdSnapshotSchedules, so `kubectl describe` tells what each run did.
import type { KubeConfig } from '@kubernetes/client-node';
import { API_VERSION } from '../crds/etcd-cluster';
import type { EventReason } from '../contracts/event-reasons';
import { apiserverEvents, callingActivity, recordCounted } from './event-recorder';

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
  const api = apiserverEvents(kc);
  return {
    async record({ involved, type, reason, message }) {
      // Named and counted as activities/event-recorder.ts explains: a retried activity writes no second Event.
      await recordCounted(
        api,
        { involvedObject: { apiVersion: API_VERSION, ...involved }, type, reason, message, component },
        callingActivity(),
        new Date(),
      );
    },
  };
}
