// Runs `etcd-conductor archive` until SIGTERM: one etcd client (the cluster's client TLS and root credentials when it
// has them), the S3 store, and the archiver; every line it logs goes to stdout, where `kubectl logs` shows it.
import { Etcd3 } from 'etcd3';
import { describe } from './agent-error';
import type { ArchiveArgs } from './archive-args';
import { takeFullSnapshot } from './archive-snapshot';
import { S3ArchiveStore } from './archive-store';
import { Archiver, ARCHIVER_DEFAULTS } from './archiver';
import { AUTH_NOT_ENABLED, credentialsOf, etcdAuthFromEnv } from './etcd-source';
import { createS3Client, s3CredentialsFromEnv } from './s3-store';

function etcdClient(args: ArchiveArgs, auth: { username: string; password: string } | undefined): Etcd3 {
  return new Etcd3({
    hosts: args.endpoint,
    ...(args.tls ? { credentials: credentialsOf(args.tls) } : {}),
    ...(auth ? { auth } : {}),
    dialTimeout: 5000,
    // Unary calls (the revision probe) end in seconds; the watch is a stream and has no deadline.
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + 10_000 }),
    grpcOptions: { 'grpc.keepalive_time_ms': 10_000, 'grpc.keepalive_timeout_ms': 10_000 },
  });
}

/** With root credentials while the cluster's auth is not on yet, etcd refuses them: then go without. */
async function connect(args: ArchiveArgs, env: NodeJS.ProcessEnv): Promise<Etcd3> {
  const auth = etcdAuthFromEnv(env);
  const client = etcdClient(args, auth);
  if (!auth) return client;
  try {
    await client.maintenance.status();
    return client;
  } catch (e) {
    if (!AUTH_NOT_ENABLED.test(describe(e))) return client; // not reachable yet: the archiver's loop retries
    client.close();
    return etcdClient(args, undefined);
  }
}

export async function runArchive(
  args: ArchiveArgs,
  env: NodeJS.ProcessEnv,
  signal: AbortSignal,
): Promise<void> {
  const s3 = createS3Client(args.destination, s3CredentialsFromEnv(env));
  const etcd = await connect(args, env);
  const log = (line: string) => console.log(`${new Date().toISOString()} ${line}`);
  try {
    const archiver = new Archiver(
      {
        ...ARCHIVER_DEFAULTS,
        clusterUid: args.clusterUid,
        prefix: args.destination.key,
        fullSnapshotIntervalMs: args.fullSnapshotIntervalSeconds * 1000,
        maxLagMs: args.maxLagSeconds * 1000,
        retentionMs: args.retentionSeconds * 1000,
      },
      {
        store: new S3ArchiveStore(s3, args.destination.bucket),
        etcd,
        fullSnapshot: (sig) => takeFullSnapshot(args.endpoint, args.tls, args.workDir, env, sig),
        now: () => Date.now(),
        log,
      },
    );
    log(
      `archiving ${args.endpoint} to s3://${args.destination.bucket}/${args.destination.key} (cluster ${args.clusterUid}; full snapshot every ${args.fullSnapshotIntervalSeconds}s, max lag ${args.maxLagSeconds}s, retention ${args.retentionSeconds}s)`,
    );
    await archiver.run(signal);
    log(`stopped by ${String(signal.reason ?? 'a signal')}`);
  } finally {
    etcd.close();
    s3.destroy();
  }
}
