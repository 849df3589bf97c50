// The archiver's half of keeping leases: the first put naming a lease starts a lookup of the lease's granted TTL at once
// (the earlier it asks, the likelier the lease still exists), and before a chunk holding that put is uploaded the answer
// is written on it as `leaseTtl`. Invariant: a chunk never goes out with a lookup still pending for one of its changes,
// so every lease first named in a chain carries its TTL (or LEASE_GONE) in the chunk of that first put.
import { LEASE_GONE, type ArchivedChange } from '../contracts/continuous-backup';

/** A lookup's outcome, held rather than thrown so that no rejected promise waits unobserved. */
type Outcome = { ttl: number } | { error: unknown };

export class LeaseLookups {
  private readonly asked = new Map<string, Promise<Outcome>>();
  /** The change that will carry each lease's TTL, and that lease. */
  private readonly carriers = new Map<ArchivedChange, string>();

  /** `ttlOf` answers a lease's granted TTL in seconds, or LEASE_GONE for a lease etcd no longer has. */
  constructor(private readonly ttlOf: (lease: string) => Promise<number>) {}

  private ask(lease: string): Promise<Outcome> {
    const p = this.ttlOf(lease).then(
      (ttl) => ({ ttl }),
      (error: unknown) => ({ error }),
    );
    this.asked.set(lease, p);
    return p;
  }

  /** Called for each change as the watch delivers it. */
  note(change: ArchivedChange): void {
    if (change.type !== 'put' || change.lease === '0' || this.asked.has(change.lease)) return;
    void this.ask(change.lease);
    this.carriers.set(change, change.lease);
  }

  /** Before `changes` are uploaded: writes each finished lookup on its carrier; a failed lookup is asked again and thrown. */
  async settle(changes: readonly ArchivedChange[]): Promise<void> {
    for (const change of changes) {
      const lease = this.carriers.get(change);
      if (lease === undefined) continue;
      const outcome = await (this.asked.get(lease) ?? this.ask(lease));
      if ('error' in outcome) {
        void this.ask(lease);
        throw outcome.error;
      }
      change.leaseTtl = outcome.ttl;
      this.carriers.delete(change);
    }
  }

  /**
   * The buffer was dropped after a gap: every lease is asked about again when next named, so the next chain records
   * it. (A scheduled new chain needs no clearing: a lease named after its snapshot and seen before it was alive at the
   * snapshot, so the snapshot holds it; changes still waiting keep their pending lookups.)
   */
  clear(): void {
    this.asked.clear();
    this.carriers.clear();
  }
}

/** etcd answers TTL -1 (no error) for a lease that expired or was revoked; grantedTTL otherwise. */
export function grantedTtlOf(res: { TTL: string; grantedTTL: string }): number {
  return Number(res.TTL) < 0 ? LEASE_GONE : Number(res.grantedTTL);
}
