// A member's own readiness checks, asked over its metrics port (plain HTTP on the Pod's address, with or without
// spec.tls): what tells a learner that has applied its leader's snapshot from one still receiving it
// (contracts/learner-restart.ts). etcd's /readyz fails for every learner on its `non_learner` check, so that one
// check is left out; the rest (data corruption, a serializable and a linearizable read) pass only on a member that
// is running and has caught up with its leader's commit index.
import { PORTS } from '../crds/names';
import { hostOf } from './member-addresses';

/** Whether the member at `podIP` passes its readiness checks other than being a voter, within `timeoutMs`. */
export async function passesLearnerReadiness(podIP: string, timeoutMs: number): Promise<boolean> {
  try {
    const res = await fetch(`http://${hostOf(podIP)}:${PORTS.metrics}/readyz?exclude=non_learner`, {
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}
