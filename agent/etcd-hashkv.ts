// HashKV through etcd3's connection pool: etcd3 1.1.2's `maintenance.hashKV()` asks gRPC for `hashKV`, but its proto
// loader names the method `hashKv`, so the library's own call fails with "client[method] is not a function".
import type { Etcd3 } from 'etcd3';

export interface HashKV {
  hash: number;
  compactRevision: number;
  /** The revision of the store when it answered. */
  headerRevision: number;
}

interface Callable {
  exec(
    service: 'Maintenance',
    method: string,
    payload: object,
  ): Promise<{
    header: { revision: string };
    hash: string | number;
    compact_revision: string | number;
  }>;
}

/** etcd's hashkv at `revision` (0: the newest) on the member `client` is bound to. */
export async function hashKV(client: Etcd3, revision: number): Promise<HashKV> {
  const pool = (client.maintenance as unknown as { client: Callable }).client;
  const res = await pool.exec('Maintenance', 'hashKv', { revision: String(revision) });
  return {
    hash: Number(res.hash),
    compactRevision: Number(res.compact_revision),
    headerRevision: Number(res.header.revision),
  };
}
