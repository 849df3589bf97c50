// Process entry of the operator: reads config, runs worker and watcher, stops cleanly on SIGINT/SIGTERM.
import { configFromEnv } from './config';
import { startOperator } from './operator';

function log(msg: string, fields: Record<string, unknown> = {}): void {
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), msg, ...fields })}\n`);
}

async function main(): Promise<void> {
  const operator = await startOperator(configFromEnv(process.env), log);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log('stopping', { signal });
    operator.stop().catch((err: unknown) => log('stop failed', { error: String(err) }));
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  await operator.done;
  log('stopped');
  // gRPC channels of the etcd and Temporal clients keep the event loop alive after a clean stop.
  process.exit(0);
}

main().catch((err: unknown) => {
  log('operator failed', { error: err instanceof Error ? err.stack : String(err) });
  process.exit(1);
});
