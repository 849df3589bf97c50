// The process-backed node implementation as one object for the stack: node agents per node, service network and claim binder once per stack.
import { startServiceNetwork } from '../network/service-network';
import { startClaimBinder } from './claim-binder';
import { startNodeAgent } from './node-agent';

export const processNodeRuntime = { startNodeAgent, startServiceNetwork, startClaimBinder };
export { startClaimBinder, startNodeAgent, startServiceNetwork };
