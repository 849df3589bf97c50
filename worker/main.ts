// Process entry of the operator: reads config, serves health endpoints, runs worker and watcher, stops cleanly on SIGINT/SIGTERM.
import type { Server } from 'node:http';
import { configFromEnv, LOG_LEVELS, type LogLevel } from './config';
import { startHealthServer } from './health';
import { startOperator } from './operator';

let minLevel: LogLevel = 'info';

function log(msg: string, fields: Record<string, unknown> = {}, level: LogLevel = 'info'): void {
  if (LOG_LEVELS.indexOf(level) < LOG_LEVELS.indexOf(minLevel)) return;
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })}\n`);
}

async function main(): Promise<void> {
  const config = configFromEnv(process.env);
  minLevel = config.logLevel;
  let notReady: string | undefined = `connecting to Temporal at ${config.temporalAddress}`;
  let health: Server | undefined;
  // Up before the Temporal connection, so a probe can tell "alive but waiting" from "dead".
  if (config.httpAddress) {
    health = await startHealthServer(config.httpAddress, { notReady: () => notReady });
    log('serving /healthz and /readyz', { address: config.httpAddress });
  }
  const operator = await startOperator(config, log);
  notReady = undefined;
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    notReady = 'stopping';
    log('stopping', { signal });
    operator.stop().catch((err: unknown) => log('stop failed', { error: String(err) }, 'error'));
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  await operator.done;
  health?.close();
  log('stopped');
  // gRPC channels of the etcd and Temporal clients keep the event loop alive after a clean stop.
  process.exit(0);
}

main().catch((err: unknown) => {
  log('operator failed', { error: err instanceof Error ? err.stack : String(err) }, 'error');
  process.exit(1);
});
