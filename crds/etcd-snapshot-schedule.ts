// The EtcdSnapshotSchedule API as TypeScript: mirrors crds/etcdsnapshotschedule.yaml field for field (etcd-snapshot.test.ts proves it).
import type { Condition } from './etcd-cluster';
import { API_GROUP } from './etcd-cluster';
import type {
  JobPlacementOverride,
  ObjectNameRef,
  SnapshotDestination,
  SnapshotMetadata,
} from './etcd-snapshot';

export const ETCD_SNAPSHOT_SCHEDULE = {
  kind: 'EtcdSnapshotSchedule',
  listKind: 'EtcdSnapshotScheduleList',
  plural: 'etcdsnapshotschedules',
  singular: 'etcdsnapshotschedule',
  shortNames: ['etcdsnapsched'],
  crdName: `etcdsnapshotschedules.${API_GROUP}`,
} as const;

/** Condition types of an EtcdSnapshotSchedule. */
export const ScheduleConditionTypes = {
  /** True while the Temporal Schedule exists and runs; False when suspended or refused. */
  Ready: 'Ready',
} as const;

export const RETENTION_LIMITS = { minKeepLast: 1, maxKeepLast: 1000 } as const;

/** At least one of the two (CEL enforces it). */
export interface SnapshotRetention {
  keepLast?: number;
  /** A duration such as 30m, 36h, 7d or 1d12h. */
  maxAge?: string;
}

export interface EtcdSnapshotScheduleSpec {
  clusterRef: ObjectNameRef;
  /** Cron (UTC) or Temporal's @every / @hourly forms. */
  schedule: string;
  destination: SnapshotDestination;
  /** Copied into every EtcdSnapshot the schedule creates; its prune Jobs follow it too. */
  jobPlacement?: JobPlacementOverride;
  retention?: SnapshotRetention;
  /** Defaulted to false; true pauses the Temporal Schedule. */
  suspend: boolean;
}

export interface EtcdSnapshotScheduleStatus {
  observedGeneration?: number;
  scheduleId?: string;
  /** RFC 3339. */
  lastScheduleTime?: string;
  lastSnapshot?: string;
  lastSuccessfulSnapshot?: string;
  conditions?: Condition[];
}

export interface EtcdSnapshotSchedule {
  apiVersion: string;
  kind: typeof ETCD_SNAPSHOT_SCHEDULE.kind;
  metadata: SnapshotMetadata;
  spec: EtcdSnapshotScheduleSpec;
  status?: EtcdSnapshotScheduleStatus;
}
