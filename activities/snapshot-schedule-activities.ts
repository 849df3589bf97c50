// The schedule side's effects: keep the Temporal Schedule as the EtcdSnapshotSchedule says, create each run's EtcdSnapshot, prune what retention drops.
//
// Invariant: a pruned snapshot's stored object is deleted before its EtcdSnapshot, so a crash in between
// leaves the object findable (the CR still names it) and the retry deletes it; credentials are read from
// the Secret inside the activity and never returned.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Client, ScheduleOptionsStartWorkflowAction } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { FailureTypes } from '../crds/conditions';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { API_VERSION, ETCD_CLUSTER } from '../crds/etcd-cluster';
import type {
  EtcdSnapshot,
  EtcdSnapshotStatus,
  JobPlacementOverride,
  SnapshotDestination,
} from '../crds/etcd-snapshot';
import { ETCD_SNAPSHOT, SnapshotLabels } from '../crds/etcd-snapshot';
import type {
  EtcdSnapshotSchedule,
  EtcdSnapshotScheduleSpec,
  EtcdSnapshotScheduleStatus,
} from '../crds/etcd-snapshot-schedule';
import { ETCD_SNAPSHOT_SCHEDULE } from '../crds/etcd-snapshot-schedule';
import type { KubeObjects } from './kube-objects';
import type { S3Store } from './s3-store';
import { parseS3URI } from './s3-store';
import type { SnapshotEventRecorder } from './snapshot-events';
import type { JobPlacement, SnapshotRef } from './snapshot-manifests';
import {
  jobPlacement,
  RESTRICTED_CONTAINER_SECURITY,
  RESTRICTED_POD_SECURITY,
  SNAPSHOT_MOUNT,
} from './snapshot-manifests';
import { recordOrDrop } from './event-recorder';
import { jobWithAdditionalMetadata } from './additional-metadata';
import { deleteTemporalSchedule, keepTemporalSchedule } from './temporal-schedules';
import type { EventReason } from '../contracts/event-reasons';

export interface ScheduleActivityDeps {
  kube: KubeObjects;
  events: SnapshotEventRecorder;
  s3: S3Store;
  /** The Temporal client whose ScheduleClient keeps the Temporal Schedules. */
  temporal: Pick<Client, 'schedule'>;
  agentImage: string;
}

/** The Temporal Schedule wanted for one EtcdSnapshotSchedule; ids and names come from the workflow. */
export interface TemporalScheduleInput {
  schedule: SnapshotRef;
  spec: EtcdSnapshotScheduleSpec;
  scheduleId: string;
  taskQueue: string;
  runWorkflowType: string;
  /** Prefix of each run's workflow id; Temporal appends the run's time. */
  runWorkflowId: string;
  /** Search attributes of each run (the cluster's namespace and name). */
  searchAttributes: ScheduleOptionsStartWorkflowAction<never>['typedSearchAttributes'];
}

/** What retention sees of one snapshot. */
export interface ScheduleSnapshotView {
  name: string;
  phase?: EtcdSnapshotStatus['phase'];
  createdAt: string;
  takenAt?: string;
  uri?: string;
}

const scheduleObjectRef = (s: SnapshotRef) => ({
  apiVersion: API_VERSION,
  kind: ETCD_SNAPSHOT_SCHEDULE.kind,
  namespace: s.namespace,
  name: s.name,
  plural: ETCD_SNAPSHOT_SCHEDULE.plural,
});
const snapshotObjectRef = (namespace: string, name: string) => ({
  apiVersion: API_VERSION,
  kind: ETCD_SNAPSHOT.kind,
  namespace,
  name,
});

/** A job name for pruning one file; at most 63 characters, like every Job name the operator makes. */
export function pruneJobName(snapshot: string): string {
  const base = `prune-${snapshot}`;
  return base.length <= 63 ? base : base.slice(0, 63).replace(/[-.]+$/, '');
}

/** A small Job that removes one snapshot file from a claim (the operator cannot reach claims itself). */
export function pruneFileJob(input: {
  schedule: SnapshotRef;
  snapshot: string;
  claimName: string;
  subPath: string;
  image: string;
  /** The cluster's placement (jobPlacement). */
  placement?: JobPlacement;
  /** The cluster's spec.additionalMetadata, for the Job and its Pod. */
  metadata?: Pick<EtcdClusterSpec, 'additionalMetadata'>;
}) {
  return jobWithAdditionalMetadata(pruneFileJobManifest(input), input.metadata);
}

function pruneFileJobManifest(input: Parameters<typeof pruneFileJob>[0]) {
  const file = `${SNAPSHOT_MOUNT}/${input.snapshot}.db`;
  const sub = input.subPath.replace(/^\/+|\/+$/g, '');
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: pruneJobName(input.snapshot),
      namespace: input.schedule.namespace,
      labels: {
        'app.kubernetes.io/managed-by': 'etcd-conductor',
        [SnapshotLabels.schedule]: input.schedule.name,
      },
      ownerReferences: [
        {
          apiVersion: API_VERSION,
          kind: ETCD_SNAPSHOT_SCHEDULE.kind,
          name: input.schedule.name,
          uid: input.schedule.uid,
          controller: true,
        },
      ],
    },
    spec: {
      backoffLimit: 2,
      ttlSecondsAfterFinished: 600,
      template: {
        spec: {
          restartPolicy: 'Never',
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          ...input.placement,
          securityContext: RESTRICTED_POD_SECURITY,
          containers: [
            {
              name: 'prune',
              image: input.image,
              // The project image carries Node.js; rmSync with force treats a missing file as removed.
              command: ['node', '-e', 'require("node:fs").rmSync(process.argv[1], { force: true })', file],
              securityContext: RESTRICTED_CONTAINER_SECURITY,
              volumeMounts: [
                { name: 'destination', mountPath: SNAPSHOT_MOUNT, ...(sub ? { subPath: sub } : {}) },
              ],
            },
          ],
          volumes: [{ name: 'destination', persistentVolumeClaim: { claimName: input.claimName } }],
        },
      },
    },
  };
}

export function createScheduleActivities(deps: ScheduleActivityDeps) {
  const { kube } = deps;

  /** The schedule as it is now, unless it is gone, being deleted or replaced by another of its name. */
  const readLiveSchedule = async (
    schedule: SnapshotRef,
  ): Promise<(EtcdSnapshotSchedule & KubernetesObject) | undefined> => {
    const obj = await kube.read<EtcdSnapshotSchedule & KubernetesObject>(scheduleObjectRef(schedule));
    return obj && obj.metadata.uid === schedule.uid && !obj.metadata.deletionTimestamp ? obj : undefined;
  };

  /** The spec of the cluster a schedule snapshots, if both are still there (for its Jobs' placement). */
  const scheduledClusterSpec = async (
    schedule: SnapshotRef,
  ): Promise<Partial<EtcdClusterSpec> | undefined> => {
    const found = await kube.read<KubernetesObject & Pick<EtcdSnapshotSchedule, 'spec'>>({
      apiVersion: API_VERSION,
      kind: ETCD_SNAPSHOT_SCHEDULE.kind,
      namespace: schedule.namespace,
      name: schedule.name,
    });
    const cluster = found?.spec?.clusterRef?.name;
    if (!cluster) return undefined;
    const read = await kube.read<KubernetesObject & { spec?: Partial<EtcdClusterSpec> }>({
      apiVersion: API_VERSION,
      kind: ETCD_CLUSTER.kind,
      namespace: schedule.namespace,
      name: cluster,
    });
    return read?.spec;
  };

  return {
    /** Creates or updates the Temporal Schedule, paused exactly when `suspend` is true. */
    async applyTemporalSchedule(input: TemporalScheduleInput): Promise<'created' | 'updated'> {
      const { spec, schedule } = input;
      const note = spec.suspend
        ? `suspended by EtcdSnapshotSchedule ${schedule.namespace}/${schedule.name} (spec.suspend)`
        : `kept by EtcdSnapshotSchedule ${schedule.namespace}/${schedule.name}`;
      const action: ScheduleOptionsStartWorkflowAction<never> = {
        type: 'startWorkflow',
        workflowType: input.runWorkflowType,
        workflowId: input.runWorkflowId,
        taskQueue: input.taskQueue,
        args: [{ schedule }] as never,
        staticSummary: `scheduled snapshot of ${schedule.namespace}/${spec.clusterRef.name} (${schedule.name})`,
        ...(input.searchAttributes ? { typedSearchAttributes: input.searchAttributes } : {}),
      };
      return keepTemporalSchedule(deps.temporal, {
        scheduleId: input.scheduleId,
        spec: { cronExpressions: [spec.schedule] },
        action,
        paused: spec.suspend,
        note,
        what: `the schedule "${spec.schedule}"`,
      });
    },

    /** Deletes the Temporal Schedule; one that is already gone counts as deleted. */
    async deleteTemporalSchedule(input: { scheduleId: string }): Promise<'deleted' | 'absent'> {
      return deleteTemporalSchedule(deps.temporal, input.scheduleId);
    },

    /** The schedule object as it is now (a run uses the newest spec), or `gone`. */
    async readSchedule(input: {
      schedule: SnapshotRef;
    }): Promise<{ spec: EtcdSnapshotScheduleSpec } | 'gone'> {
      const obj = await readLiveSchedule(input.schedule);
      return obj ? { spec: obj.spec } : 'gone';
    },

    /** Merge-patches the given status fields; other fields (written by the other workflow) stay. */
    async writeScheduleStatus(input: {
      schedule: SnapshotRef;
      status: EtcdSnapshotScheduleStatus;
    }): Promise<'written' | 'schedule-gone'> {
      const current = await kube.read<KubernetesObject>(scheduleObjectRef(input.schedule));
      if (!current || current.metadata?.uid !== input.schedule.uid) return 'schedule-gone';
      await kube.mergePatch(scheduleObjectRef(input.schedule), { status: input.status }, 'status');
      return 'written';
    },

    /**
     * Creates one run's EtcdSnapshot, owned by the schedule and labelled with it; an existing one is this run's. A
     * schedule deleted since the run read it (its namespace with it, say: the create then fails with NotFound or
     * Forbidden for ever) is `schedule-gone`, so the run ends instead of retrying without end.
     */
    async createScheduledSnapshot(input: {
      schedule: SnapshotRef;
      name: string;
      clusterName: string;
      destination: SnapshotDestination;
      jobPlacement?: JobPlacementOverride;
    }): Promise<'created' | 'exists' | 'schedule-gone'> {
      const { schedule } = input;
      const body: Omit<EtcdSnapshot, 'status'> = {
        apiVersion: API_VERSION,
        kind: ETCD_SNAPSHOT.kind,
        metadata: {
          name: input.name,
          namespace: schedule.namespace,
          labels: { [SnapshotLabels.schedule]: schedule.name },
          ownerReferences: [
            {
              apiVersion: API_VERSION,
              kind: ETCD_SNAPSHOT_SCHEDULE.kind,
              name: schedule.name,
              uid: schedule.uid,
              controller: true,
              blockOwnerDeletion: true,
            } as never,
          ],
        },
        spec: {
          clusterRef: { name: input.clusterName },
          destination: input.destination,
          ...(input.jobPlacement ? { jobPlacement: input.jobPlacement } : {}),
        },
      };
      try {
        return await kube.createIfAbsent(body as KubernetesObject);
      } catch (err) {
        if (!(await readLiveSchedule(schedule))) return 'schedule-gone';
        throw err;
      }
    },

    /** The phase of one snapshot, or `gone`. */
    async readSnapshotPhase(input: {
      namespace: string;
      name: string;
    }): Promise<EtcdSnapshotStatus['phase'] | 'gone'> {
      const obj = await kube.read<EtcdSnapshot & KubernetesObject>(
        snapshotObjectRef(input.namespace, input.name),
      );
      return obj ? (obj.status?.phase ?? 'Pending') : 'gone';
    },

    /** Every EtcdSnapshot this schedule created, as retention needs them. */
    async listScheduleSnapshots(input: { schedule: SnapshotRef }): Promise<ScheduleSnapshotView[]> {
      const items = await kube.list<EtcdSnapshot & KubernetesObject>(
        API_VERSION,
        ETCD_SNAPSHOT.kind,
        input.schedule.namespace,
        `${SnapshotLabels.schedule}=${input.schedule.name}`,
      );
      return items
        .filter((s) => !s.metadata.deletionTimestamp)
        .filter((s) => s.metadata.ownerReferences?.some((o) => o.uid === input.schedule.uid) ?? false)
        .map((s) => ({
          name: s.metadata.name,
          createdAt: String(s.metadata.creationTimestamp ?? ''),
          ...(s.status?.phase ? { phase: s.status.phase } : {}),
          ...(s.status?.artifact ? { takenAt: s.status.artifact.takenAt, uri: s.status.artifact.uri } : {}),
        }));
    },

    /** Deletes a pruned snapshot's stored object (S3 directly, a claim's file through a small Job), then its EtcdSnapshot. */
    async pruneSnapshot(input: {
      schedule: SnapshotRef;
      name: string;
      uri?: string;
      destination: SnapshotDestination;
      jobPlacement?: JobPlacementOverride;
    }): Promise<'pruned' | 'cr-only'> {
      const { schedule, destination } = input;
      let stored: 'pruned' | 'cr-only' = 'cr-only';
      const s3uri = input.uri ? parseS3URI(input.uri) : undefined;
      if (s3uri && destination.s3) {
        const secretName = destination.s3.credentialsSecretRef.name;
        const secret = await kube.read<KubernetesObject & { data?: Record<string, string> }>({
          apiVersion: 'v1',
          kind: 'Secret',
          namespace: schedule.namespace,
          name: secretName,
        });
        const id = secret?.data?.AWS_ACCESS_KEY_ID;
        const key = secret?.data?.AWS_SECRET_ACCESS_KEY;
        if (!id || !key) {
          throw ApplicationFailure.nonRetryable(
            `cannot prune ${input.uri}: the Secret ${schedule.namespace}/${secretName} is missing or lacks its keys`,
            FailureTypes.CredentialsNotFound,
          );
        }
        await deps.s3.deleteObject({ ...destination.s3, bucket: s3uri.bucket }, s3uri.key, {
          accessKeyId: Buffer.from(id, 'base64').toString('utf8'),
          secretAccessKey: Buffer.from(key, 'base64').toString('utf8'),
        });
        stored = 'pruned';
      } else if (input.uri?.startsWith('pvc://') && destination.pvc) {
        const clusterSpec = await scheduledClusterSpec(schedule);
        await kube.createIfAbsent(
          pruneFileJob({
            schedule,
            snapshot: input.name,
            claimName: destination.pvc.claimName,
            subPath: destination.pvc.subPath,
            image: deps.agentImage,
            placement: jobPlacement(clusterSpec, input.jobPlacement),
            ...(clusterSpec ? { metadata: clusterSpec } : {}),
          }) as KubernetesObject,
        );
        stored = 'pruned';
      }
      await kube.deleteIfPresent(snapshotObjectRef(schedule.namespace, input.name));
      return stored;
    },

    /** An Event on the EtcdSnapshotSchedule; one the apiserver refuses is dropped. */
    async recordScheduleEvent(input: {
      schedule: SnapshotRef;
      type: 'Normal' | 'Warning';
      reason: EventReason;
      message: string;
    }): Promise<'recorded' | 'dropped'> {
      return recordOrDrop(() =>
        deps.events.record({
          involved: { kind: ETCD_SNAPSHOT_SCHEDULE.kind, ...input.schedule },
          type: input.type,
          reason: input.reason,
          message: input.message,
        }),
      );
    },
  };
}

export type ScheduleActivities = ReturnType<typeof createScheduleActivities>;
