// Elects the one replica that runs the watchers: holds the coordination.k8s.io Lease etcd-conductor-watcher,
// renews it, hands the watchers over when it loses it, and releases it on a clean stop so a peer takes over at once.
//
// Invariant: this replica runs the watchers only while its last renewal is younger than the renew deadline
// (two thirds of the lease duration), so it has stopped before a peer may steal the Lease.
import type { KubeConfig, V1Lease } from '@kubernetes/client-node';
import { ApiException, CoordinationV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { describeKubeError } from './startup-errors';
import { leaseDecision, microTime } from './lease-decision';

export const WATCHER_LEASE_NAME = 'etcd-conductor-watcher';

export interface WatcherLeaseOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  identity: string;
  durationSeconds?: number;
  log: (msg: string, fields?: Record<string, unknown>) => void;
  /** Start the watchers; awaited before the next renewal. */
  onLeading: () => Promise<void>;
  /** Stop the watchers. */
  onStopLeading: () => Promise<void>;
  onLeaderChange?: (leader: boolean) => void;
}

export interface WatcherLease {
  /** What readiness shows: holding the Lease, or who holds it. */
  describe(): string;
  /** Stops electing; a holder stops its watchers and releases the Lease. */
  stop(): Promise<void>;
}

export function startWatcherLease(opts: WatcherLeaseOptions): WatcherLease {
  const { namespace, identity, log } = opts;
  const name = WATCHER_LEASE_NAME;
  const durationSeconds = opts.durationSeconds ?? 15;
  const renewDeadlineMs = (durationSeconds * 1000 * 2) / 3;
  const renewEveryMs = (durationSeconds * 1000) / 3;
  const retryEveryMs = 2000;
  const api = opts.kubeConfig.makeApiClient(CoordinationV1Api);
  const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

  let leader = false;
  let lastRenewMs = 0;
  let seenVersion: string | undefined;
  let unchangedSinceMs = Date.now();
  let detail = `electing: waiting for the Lease ${namespace}/${name}`;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let tickDone: Promise<void> = Promise.resolve();

  async function setLeader(next: boolean, why: string): Promise<void> {
    if (next === leader) return;
    leader = next;
    opts.onLeaderChange?.(next);
    log(
      next
        ? 'holding the watcher Lease; starting the watchers'
        : 'lost the watcher Lease; stopping the watchers',
      {
        lease: `${namespace}/${name}`,
        identity,
        why,
      },
    );
    if (next) await opts.onLeading();
    else await opts.onStopLeading();
  }

  async function read(): Promise<V1Lease | undefined> {
    try {
      return await api.readNamespacedLease({ name, namespace });
    } catch (err) {
      if (err instanceof ApiException && err.code === 404) return undefined;
      throw err;
    }
  }

  async function tick(): Promise<void> {
    const now = Date.now();
    try {
      const lease = await read();
      const version = lease?.metadata?.resourceVersion;
      if (version !== seenVersion) {
        seenVersion = version;
        unchangedSinceMs = now;
      }
      const decision = leaseDecision({
        lease: lease
          ? {
              ...(lease.spec?.holderIdentity ? { holder: lease.spec.holderIdentity } : {}),
              durationSeconds: lease.spec?.leaseDurationSeconds ?? durationSeconds,
            }
          : undefined,
        me: identity,
        nowMs: now,
        unchangedSinceMs,
      });
      if (decision.action === 'wait') {
        detail = `standby: the watcher Lease is ${decision.reason}`;
        await setLeader(false, decision.reason);
        return;
      }
      if (decision.action === 'create') {
        // Times are set by the first renewal: the typed client writes MicroTime with three digits, which is refused.
        await api.createNamespacedLease({
          namespace,
          body: {
            metadata: { name, namespace },
            spec: { holderIdentity: identity, leaseDurationSeconds: durationSeconds },
          },
        });
      } else {
        const taking = decision.action !== 'renew';
        await api.patchNamespacedLease(
          {
            name,
            namespace,
            body: {
              // The resourceVersion makes the patch conditional: a peer that wrote first wins, this one gets 409.
              metadata: { resourceVersion: version },
              spec: {
                holderIdentity: identity,
                leaseDurationSeconds: durationSeconds,
                renewTime: microTime(now),
                ...(taking
                  ? {
                      acquireTime: microTime(now),
                      leaseTransitions: (lease?.spec?.leaseTransitions ?? 0) + 1,
                    }
                  : {}),
              },
            },
          },
          mergePatch,
        );
      }
      lastRenewMs = now;
      detail = `holds the watcher Lease ${namespace}/${name}`;
      await setLeader(true, decision.reason);
    } catch (err) {
      const conflict = err instanceof ApiException && (err.code === 409 || err.code === 422);
      if (!conflict)
        log('cannot read or write the watcher Lease; retrying', {
          lease: `${namespace}/${name}`,
          error: describeKubeError(err),
        });
      if (leader && (conflict || Date.now() - lastRenewMs > renewDeadlineMs)) {
        detail = `lost the watcher Lease ${namespace}/${name}`;
        await setLeader(
          false,
          conflict ? 'a peer changed the Lease first' : 'no renewal within the renew deadline',
        );
      } else if (!leader) {
        detail = `electing: ${conflict ? 'a peer took the Lease first' : describeKubeError(err)}`;
      }
    }
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(
      () => {
        tickDone = tick().finally(schedule);
      },
      leader ? renewEveryMs : retryEveryMs,
    );
  }
  tickDone = tick().finally(schedule);

  return {
    describe: () => detail,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await tickDone.catch(() => undefined);
      if (!leader) return;
      await setLeader(false, 'stopping');
      try {
        const lease = await read();
        if (lease?.spec?.holderIdentity === identity)
          await api.patchNamespacedLease(
            {
              name,
              namespace,
              body: {
                metadata: { resourceVersion: lease.metadata?.resourceVersion },
                spec: { holderIdentity: null },
              },
            },
            mergePatch,
          );
        log('released the watcher Lease', { lease: `${namespace}/${name}`, identity });
      } catch (err) {
        log('could not release the watcher Lease; a peer takes it after it expires', {
          error: describeKubeError(err),
        });
      }
    },
  };
}
