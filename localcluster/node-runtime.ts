// Binds the stack to the process-backed node implementation in localcluster/node and localcluster/network (owned separately); the only place that names their entry points.
import { startNodeAgent } from './node/node-agent';
import type { NodeRuntime } from './stack';

export const processNodeRuntime: NodeRuntime = {
  startNodeAgent: (options) => startNodeAgent(options),
};
