#!/usr/bin/env node
// kubectl etcd: the daily questions about an EtcdCluster as one command each (see plugin/args.ts for the usage).
// kubectl runs any executable named kubectl-etcd on the PATH as `kubectl etcd`.
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import { Client as TemporalClient, Connection } from '@temporalio/client';
import { parsePluginArgs, USAGE, UsageError } from './args';
import { CommandFailed, runCommand } from './commands';

async function main(argv: string[]): Promise<number> {
  let args;
  try {
    args = parsePluginArgs(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`error: ${err.message}\nRun 'kubectl etcd --help' for usage.\n`);
    return 2;
  }
  if (args === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const kc = new KubeConfig();
  if (args.kubeconfig) kc.loadFromFile(args.kubeconfig);
  else kc.loadFromDefault();
  if (args.context) kc.setCurrentContext(args.context);
  const namespace = args.namespace ?? kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
  let connection: Connection | undefined;
  const address = args.temporalAddress ?? process.env['TEMPORAL_ADDRESS'] ?? 'localhost:7233';
  const temporal = async (): Promise<Client> => {
    try {
      connection ??= await Connection.connect({ address, connectTimeout: '10s' });
    } catch (err) {
      throw new CommandFailed(
        `cannot reach Temporal at ${address} (--temporal-address or TEMPORAL_ADDRESS): ${(err as Error).message}`,
      );
    }
    return new TemporalClient({
      connection,
      namespace: args.temporalNamespace ?? process.env['TEMPORAL_NAMESPACE'] ?? 'default',
    });
  };
  try {
    await runCommand(args, {
      custom: kc.makeApiClient(CustomObjectsApi),
      temporal,
      namespace,
      out: (text) => process.stdout.write(`${text}\n`),
      now: () => Date.now(),
      sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    });
    return 0;
  } catch (err) {
    const message = err instanceof CommandFailed ? err.message : `unexpected error: ${String(err)}`;
    process.stderr.write(`error: ${message}\n`);
    return 1;
  } finally {
    await connection?.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`error: ${String(err)}\n`);
    process.exit(1);
  },
);
