// Decides, from the watcher Lease as last read, whether this replica creates, renews, acquires or steals it, or waits.
//
// Invariant: at most one replica believes it holds the Lease at a time, as far as clocks allow: a Lease held by
// another replica is taken only after it went unchanged for a full lease duration measured on this replica's
// own clock (as client-go's leader election does), so a skewed clock elsewhere cannot shorten it.

export interface LeaseView {
  /** Empty or absent: released, free to take. */
  holder?: string;
  durationSeconds: number;
}

export interface LeaseDecisionInput {
  /** undefined: no Lease object exists. */
  lease: LeaseView | undefined;
  me: string;
  nowMs: number;
  /** When this replica first saw the Lease as it is now (same resourceVersion), on its own clock. */
  unchangedSinceMs: number;
}

export type LeaseDecision =
  | { action: 'create' | 'renew' | 'acquire' | 'steal'; reason: string }
  | { action: 'wait'; reason: string; holder: string };

export function leaseDecision({ lease, me, nowMs, unchangedSinceMs }: LeaseDecisionInput): LeaseDecision {
  if (!lease) return { action: 'create', reason: 'no Lease exists yet' };
  if (lease.holder === me) return { action: 'renew', reason: 'this replica holds the Lease' };
  if (!lease.holder) return { action: 'acquire', reason: 'the Lease was released' };
  const expiresAtMs = unchangedSinceMs + lease.durationSeconds * 1000;
  if (nowMs >= expiresAtMs)
    return {
      action: 'steal',
      reason: `${lease.holder} has not renewed the Lease for ${lease.durationSeconds}s`,
    };
  return {
    action: 'wait',
    holder: lease.holder,
    reason: `held by ${lease.holder}; taken over if not renewed within ${Math.ceil((expiresAtMs - nowMs) / 1000)}s`,
  };
}

/** Kubernetes MicroTime: RFC 3339 with exactly six fractional digits; the apiserver refuses three. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
