// Fake worlds for the snapshot, schedule and schedule-run workflows, typed from the real activities: the workflow tests and the replay recorder (test/replay/record-histories.ts) act on them.
import { ApplicationFailure } from '@temporalio/common';
import type { SnapshotActivities } from '../../activities/snapshot-activities';
import type { ScheduleActivities, ScheduleSnapshotView } from '../../activities/snapshot-schedule-activities';
import type { EtcdSnapshotSpec, EtcdSnapshotStatus } from '../../crds/etcd-snapshot';
import type { EtcdSnapshotScheduleSpec, EtcdSnapshotScheduleStatus } from '../../crds/etcd-snapshot-schedule';
import type { SnapshotJobObservation } from '../../contracts/snapshot';

export const ARTIFACT = {
  uri: 's3://backups/main/snap.db',
  size: 4096,
  sha256: 'a'.repeat(64),
  revision: 42,
  etcdVersion: '3.6.16',
  takenAt: '2026-03-01T12:00:00Z',
};
/** The source member's hashkv at ARTIFACT.revision, as the fake answers it. */
export const SOURCE_HASH = { hash: 1234, compactRevision: 0 };
/** A verification Job that found what the source had. */
export const VERIFIED: SnapshotJobObservation = {
  state: 'finished',
  succeeded: true,
  jobMessage: '',
  result: {
    ok: true,
    verification: {
      sha256: ARTIFACT.sha256,
      size: ARTIFACT.size,
      revision: ARTIFACT.revision,
      keys: 7,
      hashRevision: ARTIFACT.revision,
      ...SOURCE_HASH,
    },
  },
};

export const SPEC: EtcdSnapshotSpec = {
  clusterRef: { name: 'main' },
  destination: {
    s3: {
      endpoint: 'http://minio:9000',
      bucket: 'backups',
      key: 'main',
      region: 'us-east-1',
      forcePathStyle: true,
      credentialsSecretRef: { name: 's3-creds' },
    },
  },
};

/**
 * A fake world for one snapshot: `jobs` scripts what each attempt's Job does (observations in order; the
 * last one repeats). `prepare` can refuse like the real activity. `verify` scripts the verification Jobs the
 * same way (every run), `sourceHash` what the source member answers to hashkv.
 */
export function fakeSnapshotWorld(
  jobs: SnapshotJobObservation[][],
  prepare?: () => never,
  verify: SnapshotJobObservation[] = [VERIFIED],
  sourceHash: { hash: number; compactRevision: number } | { why: string } = SOURCE_HASH,
) {
  const verifyCreated: number[] = [];
  const verifyDeleted: number[] = [];
  const statuses: EtcdSnapshotStatus[] = [];
  const created: { attempt: number; endpoint: string }[] = [];
  const deleted: number[] = [];
  const events: string[] = [];
  const reads = new Map<string, number>();
  const activities: SnapshotActivities = {
    async prepareSnapshot() {
      if (prepare) prepare();
      return {
        clusterUid: 'cluster-uid',
        endpoint: 'http://main-1.main-peer.ns.svc:2379',
        member: 'main-1',
        why: 'main-1, a healthy follower',
      };
    },
    async createSnapshotJob({ attempt, endpoint }) {
      created.push({ attempt, endpoint });
      return { jobName: `snap-${attempt}`, created: true };
    },
    async readSnapshotJob({ jobName }) {
      const n0 = reads.get(jobName) ?? 0;
      if (jobName.includes('-verify-')) {
        reads.set(jobName, n0 + 1);
        return verify[Math.min(n0, verify.length - 1)] ?? { state: 'absent' };
      }
      const attempt = Number(jobName.split('-')[1]);
      const script = jobs[attempt - 1] ?? [{ state: 'absent' }];
      const n = reads.get(jobName) ?? 0;
      reads.set(jobName, n + 1);
      return script[Math.min(n, script.length - 1)] ?? { state: 'absent' };
    },
    async readSourceHash() {
      return sourceHash;
    },
    async createVerifyJob({ run }) {
      verifyCreated.push(run);
      return { jobName: `snap-verify-${run}`, created: true };
    },
    async deleteVerifyJob({ run }) {
      verifyDeleted.push(run);
      return 'deleted';
    },
    async deleteSnapshotJob({ attempt }) {
      deleted.push(attempt);
      return 'deleted';
    },
    async writeSnapshotStatus({ status }) {
      statuses.push(status);
      return 'written';
    },
    async recordSnapshotEvent({ reason }) {
      events.push(reason);
      return 'recorded';
    },
  };
  return {
    activities,
    statuses,
    created,
    deleted,
    events,
    verifyCreated,
    verifyDeleted,
    last: () => statuses[statuses.length - 1],
  };
}

/** A fake schedule world: a Temporal Schedule as a record, snapshots as a list the run creates and prunes. */
export function fakeScheduleWorld(
  existing: ScheduleSnapshotView[] = [],
  spec?: Partial<EtcdSnapshotScheduleSpec>,
) {
  const scheduleSpec: EtcdSnapshotScheduleSpec = {
    clusterRef: { name: 'main' },
    schedule: '@every 1h',
    destination: SPEC.destination,
    retention: { keepLast: 2 },
    suspend: false,
    ...spec,
  };
  const temporal: { applied: { cron: string; paused: boolean }[]; deleted: boolean } = {
    applied: [],
    deleted: false,
  };
  const snapshots = [...existing];
  const pruned: { name: string; uri?: string }[] = [];
  const statuses: EtcdSnapshotScheduleStatus[] = [];
  const events: string[] = [];
  const activities: ScheduleActivities = {
    async applyTemporalSchedule({ spec: s }) {
      if (s.schedule === 'not a cron')
        throw ApplicationFailure.nonRetryable(
          'Temporal refused the schedule "not a cron"',
          'InvalidSchedule',
        );
      temporal.applied.push({ cron: s.schedule, paused: s.suspend });
      return temporal.applied.length === 1 ? 'created' : 'updated';
    },
    async deleteTemporalSchedule() {
      temporal.deleted = true;
      return 'deleted';
    },
    async readSchedule() {
      return { spec: scheduleSpec };
    },
    async writeScheduleStatus({ status }) {
      statuses.push(status);
      return 'written';
    },
    async createScheduledSnapshot({ name }) {
      if (snapshots.some((s) => s.name === name)) return 'exists';
      snapshots.push({ name, createdAt: new Date().toISOString() });
      return 'created';
    },
    async readSnapshotPhase({ name }) {
      // The snapshot workflow (not under test here) finishes this run's snapshot at the first look.
      const s = snapshots.find((x) => x.name === name);
      if (!s) return 'gone';
      Object.assign(s, {
        phase: 'Succeeded',
        takenAt: new Date().toISOString(),
        uri: `s3://backups/main/${name}.db`,
      });
      return 'Succeeded';
    },
    async listScheduleSnapshots() {
      return snapshots.map((s) => ({ ...s }));
    },
    async pruneSnapshot({ name, uri }) {
      pruned.push({ name, ...(uri ? { uri } : {}) });
      snapshots.splice(
        snapshots.findIndex((s) => s.name === name),
        1,
      );
      return 'pruned';
    },
    async recordScheduleEvent({ reason }) {
      events.push(reason);
      return 'recorded';
    },
  };
  return { activities, temporal, snapshots, pruned, statuses, events };
}
