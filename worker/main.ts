// Process entry of the operator: reads config, serves health and metrics, starts worker and watcher (retrying a
// failed start with back-off and saying why), stops cleanly on SIGINT/SIGTERM.
import type { Server } from 'node:http';
import { configFromEnv, LOG_LEVELS, type LogLevel, processFacts } from './config';
import { startHealthServer } from './health';
import type { Operator } from './operator';
import { startOperator } from './operator';
import { createOperatorMetrics } from './operator-metrics';
import { StartupError, startupRetryDelayMs } from './startup-errors';

let minLevel: LogLevel = 'info';

function log(msg: string, fields: Record<string, unknown> = {}, level: LogLevel = 'info'): void {
  if (LOG_LEVELS.indexOf(level) < LOG_LEVELS.indexOf(minLevel)) return;
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })}\n`);
}

async function main(): Promise<void> {
  const config = configFromEnv(process.env, processFacts());
  minLevel = config.logLevel;
  const metrics = createOperatorMetrics();
  let notReady: string | undefined = `connecting to Temporal at ${config.temporalAddress}`;
  let operator: Operator | undefined;
  let health: Server | undefined;
  // Up before the Temporal connection, so a probe can tell "alive but waiting" from "dead".
  if (config.httpAddress) {
    health = await startHealthServer(config.httpAddress, {
      notReady: () => notReady,
      readyDetail: () => operator?.describe() ?? '',
      metrics: () => metrics.render(),
    });
    log('serving /healthz, /readyz and /metrics', { address: config.httpAddress });
  }

  let stopping = false;
  let wake: () => void = () => undefined;
  let stopped: Promise<void> = Promise.resolve();
  const stopOperator = (op: Operator) => {
    stopped = op.stop().catch((err: unknown) => log('stop failed', { error: String(err) }, 'error'));
  };
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    notReady = 'stopping';
    log('stopping', { signal });
    wake();
    if (operator) stopOperator(operator);
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));

  // Temporal or the apiserver may come up after the operator, or be misconfigured: retry here, saying why,
  // rather than exit and leave a crash loop to Kubernetes.
  for (let attempt = 1; !operator && !stopping; attempt++) {
    try {
      operator = await startOperator(config, log, metrics);
    } catch (err) {
      if (!(err instanceof StartupError)) throw err;
      const retryInMs = startupRetryDelayMs(attempt);
      notReady = err.message;
      log('cannot start; retrying', { reason: err.message, attempt, retryInMs }, 'error');
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, retryInMs);
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
  }
  if (operator && stopping) stopOperator(operator);
  if (operator) {
    notReady = stopping ? 'stopping' : undefined;
    log('started', { detail: operator.describe() });
    await operator.done;
    // The Temporal worker ends on SIGTERM by itself; the watchers and the Lease release may still be going.
    await stopped;
  }
  health?.close();
  log('stopped');
  // gRPC channels of the etcd and Temporal clients keep the event loop alive after a clean stop.
  process.exit(0);
}

main().catch((err: unknown) => {
  log('operator failed', { error: err instanceof Error ? err.stack : String(err) }, 'error');
  process.exit(1);
});
