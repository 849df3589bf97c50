// The restore's half of keeping leases: before a replayed put that names a lease, the throwaway etcd gets that lease
// with the same id and the granted TTL the archiver recorded, unless it has it already (from the chain's snapshot), and
// the put is attached to it. A lease that was gone when the archiver first saw it, or that an older chunk format never
// recorded, cannot be granted: its keys are replayed without a lease and counted.
//
// Invariant: no lease expires in the throwaway etcd while it replays (each is kept alive until the point's snapshot is
// taken), since an expiry there would delete keys at a revision the source never had. Revocations and expiries of the
// source arrive as the delete changes they caused. A lease's TTL starts over in the restored cluster, as with any etcd
// restore (etcd does not keep a lease's remaining time in a snapshot).
import type { Etcd3 } from 'etcd3';
import { describe } from './agent-error';
import { LEASE_GONE, type ArchivedChange } from '../contracts/continuous-backup';

/** What a replayed change does about a lease. */
export type LeaseStep =
  | { kind: 'none' }
  | { kind: 'attach' }
  | { kind: 'grant'; ttl: number }
  | { kind: 'without'; why: 'gone' | 'unrecorded' };

/**
 * For one replayed change: `exists` whether the throwaway etcd holds the lease now, `recordedTtl` what the chunks read
 * so far say of it (a granted TTL, LEASE_GONE, or undefined when nothing does).
 */
export function leaseStep(
  change: Pick<ArchivedChange, 'type' | 'lease'>,
  exists: boolean,
  recordedTtl: number | undefined,
): LeaseStep {
  if (change.type !== 'put' || change.lease === '0') return { kind: 'none' };
  if (exists) return { kind: 'attach' };
  if (recordedTtl === LEASE_GONE) return { kind: 'without', why: 'gone' };
  if (recordedTtl === undefined) return { kind: 'without', why: 'unrecorded' };
  return { kind: 'grant', ttl: recordedTtl };
}

/** How often every lease of the throwaway etcd is kept alive; etcd grants no TTL under 2 s by default. */
const KEEPALIVE_MS = 500;

type KeepAliveStream = Awaited<ReturnType<Etcd3['leaseClient']['leaseKeepAlive']>>;

export interface LeaseReplayResult {
  /** Leases granted during the replay (not already in the chain's snapshot). */
  leasesGranted: number;
  /** Keys the point holds that the source had attached to a lease which could not be granted. */
  keysWithoutLease: number;
}

export class LeaseReplay {
  private readonly recorded = new Map<string, number>();
  private readonly existing: Set<string>;
  /** base64 keys whose replayed value lost its lease; a later put or delete of the key takes it out. */
  private readonly withoutLease = new Set<string>();
  private granted = 0;
  private stream: Promise<KeepAliveStream> | undefined;
  private readonly timer: NodeJS.Timeout;
  private stopped = false;

  private constructor(
    private readonly client: Etcd3,
    snapshotLeases: string[],
  ) {
    this.existing = new Set(snapshotLeases);
    this.timer = setInterval(() => void this.keepAlive(), KEEPALIVE_MS);
  }

  /** Takes the leases the throwaway etcd restored from the snapshot and keeps them alive from now on. */
  static async start(client: Etcd3): Promise<LeaseReplay> {
    const { leases } = await client.leaseClient.leaseLeases();
    const replay = new LeaseReplay(
      client,
      leases.map((l) => String(l.ID)),
    );
    await replay.keepAlive();
    return replay;
  }

  /** Notes the TTLs a chunk's changes record (every change read, applied or not). */
  learn(changes: readonly ArchivedChange[]): void {
    for (const c of changes) if (c.leaseTtl !== undefined) this.recorded.set(c.lease, c.leaseTtl);
  }

  /** For one revision's changes, the lease id each put is replayed with ('0': none), granting leases first. */
  async leasesFor(changes: readonly ArchivedChange[]): Promise<string[]> {
    const ids: string[] = [];
    for (const c of changes) {
      const step = leaseStep(c, this.existing.has(c.lease), this.recorded.get(c.lease));
      if (step.kind === 'grant') await this.grant(c.lease, step.ttl);
      if (step.kind === 'without') this.withoutLease.add(c.key);
      else this.withoutLease.delete(c.key);
      ids.push(step.kind === 'grant' || step.kind === 'attach' ? c.lease : '0');
    }
    return ids;
  }

  private async grant(lease: string, ttl: number): Promise<void> {
    try {
      await this.client.leaseClient.leaseGrant({ ID: lease, TTL: ttl });
    } catch (e) {
      // Granted by an earlier attempt that lost its answer: the lease is there, which is all that counts.
      if (!/already exists/i.test(describe(e))) throw e;
    }
    this.existing.add(lease);
    this.granted++;
    await this.keepAlive();
  }

  get result(): LeaseReplayResult {
    return { leasesGranted: this.granted, keysWithoutLease: this.withoutLease.size };
  }

  private async keepAlive(): Promise<void> {
    if (this.stopped) return;
    try {
      if (!this.stream) {
        const opening = this.client.leaseClient.leaseKeepAlive().then((stream) => {
          stream.on('data', () => undefined);
          stream.on('error', () => {
            if (this.stream === opening) this.stream = undefined;
          });
          return stream;
        });
        this.stream = opening;
      }
      const stream = await this.stream;
      if (this.stopped) return;
      for (const id of this.existing) stream.write({ ID: id });
    } catch {
      // The next round opens a new stream; a lease lives at least 2 s, four rounds.
      this.stream = undefined;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    const stream = await this.stream?.catch(() => undefined);
    this.stream = undefined;
    stream?.end();
  }
}
