// Opens one member's Maintenance.Snapshot stream after asking its status (version, revision), with one client bound to that member, no client-side retries and gRPC keepalive so a dead member fails the stream instead of hanging it.
import { noop } from 'cockatiel';
import { Etcd3 } from 'etcd3';
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import type { ClientTLSFiles } from './args';
import { AgentError, describe } from './agent-error';
import { AgentFailureReasons } from '../contracts/agent-result';

export interface OpenedSnapshot {
  etcdVersion: string;
  /** The member's revision just before the stream opened: the snapshot holds at least this revision. */
  statusRevision: number;
  /** RFC 3339, when the stream was requested. */
  takenAt: string;
  /** Object-mode stream of SnapshotMessage. */
  messages: Readable;
  /** Ends the gRPC call and the client; safe to call more than once. */
  close(): void;
}

const STATUS_TIMEOUT_MS = 5_000;

/** True for errors the gRPC stream raises itself (a status from the server or the transport), not for our own teardown. */
export function isGrpcStatusError(e: unknown): boolean {
  return typeof (e as { code?: unknown } | null)?.code === 'number' && 'details' in (e as object);
}

/** The client certificate files as etcd3 credentials; read at open, so a renewed certificate is used by the next Job. */
export function credentialsOf(tls: ClientTLSFiles) {
  const read = (flag: string, file: string) => {
    try {
      return readFileSync(file);
    } catch (e) {
      throw new AgentError(
        AgentFailureReasons.InvalidArguments,
        `cannot read ${flag} ${file}: ${describe(e)}`,
        {
          cause: e,
        },
      );
    }
  };
  return {
    rootCertificate: read('--cacert', tls.caFile),
    certChain: read('--cert', tls.certFile),
    privateKey: read('--key', tls.keyFile),
  };
}

/** Env names the snapshot Job sets from the Secret spec.auth names (secretKeyRef, never literal values). */
export const ETCD_AUTH_ENV = { username: 'ETCD_USERNAME', password: 'ETCD_PASSWORD' } as const;

export interface EtcdAuth {
  username: string;
  password: string;
}

/** The root credentials the Job's env carries, if any; the username defaults to root like the Secret's key. */
export function etcdAuthFromEnv(env: NodeJS.ProcessEnv): EtcdAuth | undefined {
  const password = env[ETCD_AUTH_ENV.password];
  if (!password) return undefined;
  return { username: env[ETCD_AUTH_ENV.username] || 'root', password };
}

// etcd refuses credentials while its auth is off; a snapshot of such a cluster needs none.
export const AUTH_NOT_ENABLED = /authentication is not enabled/i;

/**
 * Opens the snapshot stream, with credentials when the Job has them. A cluster whose spec has auth but whose
 * auth is not on yet refuses them; it is then asked again without.
 */
export async function openSnapshot(
  endpoint: string,
  tls?: ClientTLSFiles,
  auth?: EtcdAuth,
): Promise<OpenedSnapshot> {
  try {
    return await openSnapshotAs(endpoint, tls, auth);
  } catch (e) {
    if (!auth || !AUTH_NOT_ENABLED.test(describe(e))) throw e;
    return openSnapshotAs(endpoint, tls, undefined);
  }
}

interface PoolLike {
  withConnection<T>(
    service: 'Maintenance',
    fn: (c: {
      client: { snapshot(request: object, metadata: unknown, options: object): unknown };
      metadata: unknown;
    }) => T,
  ): Promise<T>;
}

/**
 * Maintenance.Snapshot carrying the auth token. etcd3 1.1.2's `maintenance.snapshot()` hands its metadata to
 * gRPC in the request's place, so the token never reaches etcd and a cluster with auth answers "user name
 * is empty"; this makes the same call through the client's connection pool with the arguments in order.
 */
async function snapshotWithToken(client: Etcd3): Promise<unknown> {
  const pool = (client as unknown as { pool?: PoolLike }).pool;
  if (!pool || typeof pool.withConnection !== 'function')
    throw new Error('the etcd3 client has no connection pool to open an authenticated snapshot on');
  return pool.withConnection('Maintenance', ({ client: grpc, metadata }) => grpc.snapshot({}, metadata, {}));
}

async function openSnapshotAs(
  endpoint: string,
  tls: ClientTLSFiles | undefined,
  auth: EtcdAuth | undefined,
): Promise<OpenedSnapshot> {
  const client = new Etcd3({
    ...(auth ? { auth } : {}),
    hosts: endpoint,
    ...(tls ? { credentials: credentialsOf(tls) } : {}),
    dialTimeout: STATUS_TIMEOUT_MS,
    // One attempt: the Job (and the workflow above it) decide about retrying, not a hidden client loop.
    faultHandling: { global: noop, host: () => noop },
    // The stream has no deadline (a large snapshot takes minutes); keepalive notices a member that stopped answering.
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + STATUS_TIMEOUT_MS }),
    grpcOptions: {
      'grpc.keepalive_time_ms': 10_000,
      'grpc.keepalive_timeout_ms': 10_000,
      'grpc.max_receive_message_length': 16 * 1024 * 1024,
      // A 1 MiB HTTP/2 window instead of 64 KiB: fewer flow-control round trips, measurably faster; still bounded.
      'grpc-node.flow_control_window': 1024 * 1024,
    },
  });
  let messages: (Readable & { cancel?: () => void }) | undefined;
  const close = () => {
    messages?.cancel?.();
    client.close();
  };
  try {
    let status;
    try {
      status = await client.maintenance.status();
    } catch (e) {
      throw new AgentError(
        AgentFailureReasons.EtcdUnavailable,
        `etcd at ${endpoint} did not answer Maintenance.Status: ${describe(e)}`,
        { cause: e },
      );
    }
    const statusRevision = Number(status.header.revision);
    const takenAt = new Date().toISOString();
    let stream: unknown;
    try {
      stream = auth ? await snapshotWithToken(client) : await client.maintenance.snapshot();
    } catch (e) {
      throw new AgentError(
        AgentFailureReasons.EtcdUnavailable,
        `etcd at ${endpoint} refused the snapshot stream: ${describe(e)}`,
        { cause: e },
      );
    }
    if (!(stream instanceof Readable))
      throw new Error('etcd3 returned a snapshot stream that is not a Readable');
    messages = stream;
    return { etcdVersion: status.version, statusRevision, takenAt, messages, close };
  } catch (e) {
    close();
    throw e;
  }
}
