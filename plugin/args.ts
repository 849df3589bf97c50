// The kubectl etcd command line: which command, which cluster, and the flags kubectl users expect. A bad command
// line is a UsageError (exit code 2), never a guess.
import { parseArgs } from 'node:util';

export const COMMANDS = ['status', 'ops', 'cancel', 'snapshot', 'backups', 'approve-recovery'] as const;
export type Command = (typeof COMMANDS)[number];

export interface PluginArgs {
  command: Command;
  cluster: string;
  namespace?: string;
  kubeconfig?: string;
  context?: string;
  output: 'table' | 'json';
  temporalAddress?: string;
  temporalNamespace?: string;
  /** snapshot and cancel wait for the result unless told not to. */
  wait: boolean;
  timeoutSeconds: number;
  /** ops: how many operations, newest first. */
  limit: number;
}

export class UsageError extends Error {}

export const USAGE = `Usage: kubectl etcd <command> <cluster> [flags]

Commands:
  status     the cluster at a glance: members (leader, role, readiness, version, database size), conditions,
             the operation in flight and the last one
  ops        the cluster's operations from Temporal, newest first, with the step the running one is on
  cancel     cancel the operation in flight (its compensation runs; the status says Cancelled) and wait for it
  snapshot   take an EtcdSnapshot now into spec.backup.destination and wait until it is safe
  backups    the snapshots of the cluster, newest first: the points it can be restored to
  approve-recovery
             after a permanent quorum loss (status says PermanentQuorumLoss): approve the rebuild from the
             surviving member with the newest data (annotates the cluster with its own uid) and wait for it

Flags:
  -n, --namespace NS        the cluster's namespace (default: the kubeconfig context's, else default)
      --kubeconfig FILE     (default: $KUBECONFIG, else ~/.kube/config)
      --context NAME        a kubeconfig context other than the current one
  -o, --output table|json   (default table)
      --temporal-address H:P   for ops and cancel (default: $TEMPORAL_ADDRESS, else localhost:7233)
      --temporal-namespace NS  (default: $TEMPORAL_NAMESPACE, else default)
      --no-wait             snapshot, cancel, approve-recovery: return once asked, without waiting for the result
      --timeout SECONDS     how long snapshot, cancel and approve-recovery wait (default 600)
      --limit N             ops: at most N operations (default 20)

Exit codes: 0 done; 1 failed (not found, refused, the snapshot failed, timed out); 2 bad command line.`;

function positiveInt(flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0)
    throw new UsageError(`${flag} wants a whole number above 0, not "${value}"`);
  return n;
}

/** Parses argv (without node and the script); throws UsageError with a message that says what is wrong. */
export function parsePluginArgs(argv: readonly string[]): PluginArgs | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        namespace: { type: 'string', short: 'n' },
        kubeconfig: { type: 'string' },
        context: { type: 'string' },
        output: { type: 'string', short: 'o' },
        'temporal-address': { type: 'string' },
        'temporal-namespace': { type: 'string' },
        'no-wait': { type: 'boolean' },
        timeout: { type: 'string' },
        limit: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help || positionals.length === 0 || positionals[0] === 'help') return 'help';
  const [command, cluster, ...extra] = positionals;
  if (!COMMANDS.includes(command as Command)) {
    throw new UsageError(`unknown command "${command}": one of ${COMMANDS.join(', ')}`);
  }
  if (!cluster)
    throw new UsageError(`${command} needs the EtcdCluster's name: kubectl etcd ${command} <cluster>`);
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
  const output = values.output ?? 'table';
  if (output !== 'table' && output !== 'json') {
    throw new UsageError(`--output is table or json, not "${output}"`);
  }
  return {
    command: command as Command,
    cluster,
    ...(values.namespace ? { namespace: values.namespace } : {}),
    ...(values.kubeconfig ? { kubeconfig: values.kubeconfig } : {}),
    ...(values.context ? { context: values.context } : {}),
    output,
    ...(values['temporal-address'] ? { temporalAddress: values['temporal-address'] } : {}),
    ...(values['temporal-namespace'] ? { temporalNamespace: values['temporal-namespace'] } : {}),
    wait: !values['no-wait'],
    timeoutSeconds: positiveInt('--timeout', values.timeout, 600),
    limit: positiveInt('--limit', values.limit, 20),
  };
}
