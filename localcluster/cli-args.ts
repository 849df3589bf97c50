// The local stack's command line, parsed (pure): `main.js <command> [options]`. Nodes are real: kubelet, containerd
// and runc per node.
import type { OperatorMode } from './stack';

export interface Cli {
  command: string;
  stateDir: string;
  hostIp: string;
  withOperator: boolean;
  withCertManager: boolean;
  /** Member volumes in memory (`npm test` asks for it): each node's default StorageClass folder is a tmpfs. */
  claimsInMemory: boolean;
  operatorMode: OperatorMode;
  /** Arguments that are not options, in order (the fault command's kind, target and duration). */
  positional: string[];
}

export const USAGE =
  'usage: main.js <tools [host]|images|start|up|down|status|fault> [--state-dir DIR] [--host-ip 127.x.y.z] [--no-operator] [--no-cert-manager] [--claims-in-memory] [--operator=chart]';

/** Throws with a message naming the bad argument. `defaults` are the state folder and host IP the caller resolved. */
export function parseCli(argv: string[], defaults: { stateDir: string; hostIp: string }): Cli {
  const [command = 'help', ...rest] = argv;
  const cli: Cli = {
    command,
    stateDir: defaults.stateDir,
    hostIp: defaults.hostIp,
    withOperator: true,
    withCertManager: true,
    claimsInMemory: false,
    operatorMode: 'process',
    positional: [],
  };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    const value = () => {
      const v = rest[++i];
      if (v === undefined) throw new Error(`${arg} needs a value`);
      return v;
    };
    if (arg === '--state-dir') cli.stateDir = value();
    else if (arg === '--host-ip') cli.hostIp = value();
    else if (arg === '--no-operator') cli.withOperator = false;
    else if (arg === '--no-cert-manager') cli.withCertManager = false;
    // Accepted, and changes nothing, for the scripts written when process-backed nodes were the default.
    else if (arg === '--real-nodes') continue;
    else if (arg === '--process-nodes')
      throw new Error('--process-nodes: process-backed nodes were removed; real nodes are the only runtime');
    else if (arg === '--claims-in-memory') cli.claimsInMemory = true;
    else if (arg?.startsWith('--operator=')) {
      const mode = arg.slice('--operator='.length);
      if (mode !== 'process' && mode !== 'chart')
        throw new Error(`--operator must be process or chart, not "${mode}"`);
      cli.operatorMode = mode;
    } else if (arg !== undefined && !arg.startsWith('--')) cli.positional.push(arg);
    else throw new Error(`unknown option ${arg}`);
  }
  return cli;
}

/**
 * Which tools `main.js tools` builds: every one, or with `host` only those that run on the host without a stack (what
 * the unit tests need). Throws on anything else, so a typo is not taken for "all".
 */
export function toolSetOf(positional: string[]): 'all' | 'host' {
  if (positional.length === 0) return 'all';
  if (positional.length === 1 && positional[0] === 'host') return 'host';
  throw new Error(`tools takes no argument or "host", not "${positional.join(' ')}"`);
}
