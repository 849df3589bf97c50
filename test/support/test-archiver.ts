// The continuous-backup archiver as the agent tests run it against a local etcd: one chain (a full snapshot and an
// hour's retention), changes stored within 500 ms, a 50 ms tick, full snapshots taken by etcdutl into `workDir`.
import { join } from 'node:path';
import type { Etcd3 } from 'etcd3';
import { takeFullSnapshot } from '../../agent/archive-snapshot';
import type { ArchiveStore } from '../../agent/archive-store';
import { Archiver, ARCHIVER_DEFAULTS } from '../../agent/archiver';

export function testArchiver(input: {
  store: ArchiveStore;
  client: Etcd3;
  /** The etcd `client` talks to, for its full snapshots. */
  etcdUrl: string;
  workDir: string;
  /** The environment etcdutl runs with (its folder on PATH). */
  env: NodeJS.ProcessEnv;
  clusterUid: string;
  prefix: string;
}): Archiver {
  return new Archiver(
    {
      ...ARCHIVER_DEFAULTS,
      clusterUid: input.clusterUid,
      prefix: input.prefix,
      fullSnapshotIntervalMs: 3_600_000,
      maxLagMs: 500,
      retentionMs: 3_600_000,
      tickMs: 50,
    },
    {
      store: input.store,
      etcd: input.client,
      fullSnapshot: (signal) =>
        takeFullSnapshot(input.etcdUrl, undefined, join(input.workDir, 'snap'), input.env, signal),
      now: () => Date.now(),
      log: () => undefined,
    },
  );
}
