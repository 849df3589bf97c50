// The operator of the local stack as a process: its pid from stack.json, and a SIGKILL that waits until the stack has
// restarted it (the stack daemon supervises the operator the way a Deployment would). For tests that kill the operator
// in the middle of an operation.
import { join } from 'node:path';
import { readStackInfo } from '../../localcluster/stack-info';
import { pidAlive } from '../../localcluster/tools';
import { eventually, type Harness } from './cluster-harness';

export function operatorPid(h: Harness): number {
  const pid = readStackInfo(join(h.stack.stateDir, 'stack.json'))?.pids.operator;
  if (!pid) throw new Error('the local stack runs no operator as a host process');
  return pid;
}

/** SIGKILL, as a crash or an OOM kill would; resolves with the new pid once the stack has started it again. */
export async function killOperator(h: Harness, timeoutMs = 60_000): Promise<number> {
  const killed = operatorPid(h);
  process.kill(killed, 'SIGKILL');
  return eventually(
    'the operator is restarted',
    async () => {
      const pid = operatorPid(h);
      return pid !== killed && pidAlive(pid) && !pidAlive(killed) ? pid : undefined;
    },
    timeoutMs,
  );
}

/**
 * Pure: a step's kind, the same for every member, version and figure ("add member ks-3 as a learner" and "add member
 * ks-4 as a learner" are one kind), so a test can act once at each kind of step boundary.
 */
export function stepKind(step: string, cluster: string): string {
  const escaped = cluster.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return step
    .replace(new RegExp(`\\b${escaped}-\\d+\\b`, 'g'), '<m>')
    .replace(/\b\d+\.\d+\.\d+\b/g, '<v>')
    .replace(/\d+/g, 'N');
}
