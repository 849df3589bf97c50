// Binds the stack to the process-backed node implementation in localcluster/node and localcluster/network (owned separately); the only place that names their entry points.
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { spliceHostsBlock } from './network/hosts-block';
import { startServiceNetwork } from './network/service-network';
import { startClaimBinder } from './node/claim-binder';
import { startNodeAgent } from './node/node-agent';
import type { NodeRuntime } from './stack';

/** Names a stack's block in /etc/hosts; derived from the state folder so `down` finds it without the daemon. */
export function hostsStackId(stateDir: string): string {
  return createHash('sha256').update(stateDir).digest('hex').slice(0, 12);
}

export const processNodeRuntime: NodeRuntime = {
  startNodeAgent: (options) => startNodeAgent(options),
  startServiceNetwork: (options) =>
    startServiceNetwork({
      kubeconfigPath: options.kubeconfigPath,
      stackId: hostsStackId(options.stateDir),
      stateDir: options.stateDir,
      log: options.log,
    }),
  startClaimBinder: (options) =>
    startClaimBinder({
      kubeconfigPath: options.kubeconfigPath,
      stateDir: options.stateDir,
      log: options.log,
    }),
};

/** For `down` after a crash: drops the stack's /etc/hosts block that a dead daemon could not remove. */
export async function removeHostsBlock(stateDir: string, hostsPath = '/etc/hosts'): Promise<void> {
  const current = readFileSync(hostsPath, 'utf8');
  const next = spliceHostsBlock(current, hostsStackId(stateDir), undefined);
  if (next === current) return;
  const tmp = `${hostsPath}.etcd-conductor.${process.pid}.tmp`;
  writeFileSync(tmp, next, { mode: 0o644 });
  renameSync(tmp, hostsPath);
}
