// Binds the stack to the process-backed node implementation in localcluster/node and localcluster/network (owned separately); the only place that names their entry points.
import { startServiceNetwork } from './network/service-network';
import { startClaimBinder } from './node/claim-binder';
import { startNodeAgent } from './node/node-agent';
import { hostsStackId } from './real-nodes/host-names';
import type { NodeRuntime } from './stack';

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
