// Says which member runs which etcd version after an Upgrade or Downgrade stopped half-way, for lastOperation.message.
//
// Pure and sandbox-safe. A member that does not answer yet is named with its Pod's image version (what it
// runs once started), so a member restarted by the halt is not reported as unknown.
import type { ClusterObservation } from '../contracts/observation';

/** `members run: main-0 3.5.35, main-1 3.6.16, main-2 3.5.35`. */
export function membersRunning(o: Pick<ClusterObservation, 'etcd' | 'kube'>): string {
  const versions = (o.etcd?.members ?? [])
    .map((m) => `${m.name} ${m.version ?? o.kube.find((k) => k.name === m.name)?.pod?.version ?? 'unknown'}`)
    .sort();
  return `members run: ${versions.join(', ') || 'unknown (no member answered)'}`;
}
