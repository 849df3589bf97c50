// Serves /healthz (the process answers), /readyz (the operator started its roles) and /metrics (Prometheus text).
// Readiness says why not in the body, so `kubectl describe pod` shows e.g. an unreachable Temporal frontend.
import { createServer, type Server } from 'node:http';
import { METRICS_CONTENT_TYPE } from './operator-metrics';

export interface HealthState {
  /** undefined: ready; otherwise the reason the operator is not ready. */
  notReady(): string | undefined;
  /** What a ready operator says about itself, e.g. its roles; absent: plain "ok". */
  readyDetail?(): string;
  /** The Prometheus text exposition; absent: no /metrics. */
  metrics?(): Promise<string>;
}

export interface HealthResponse {
  status: number;
  body: string;
  contentType: string;
}

const TEXT = 'text/plain; charset=utf-8';

/** The pure routing, table-tested: path and state in, status and body out. */
export async function healthResponse(path: string, state: HealthState): Promise<HealthResponse> {
  switch (path.split('?')[0]) {
    case '/healthz':
      return { status: 200, body: 'ok\n', contentType: TEXT };
    case '/readyz': {
      const reason = state.notReady();
      if (reason !== undefined) return { status: 503, body: `not ready: ${reason}\n`, contentType: TEXT };
      const detail = state.readyDetail?.();
      return { status: 200, body: detail ? `ok: ${detail}\n` : 'ok\n', contentType: TEXT };
    }
    case '/metrics':
      if (state.metrics)
        return { status: 200, body: await state.metrics(), contentType: METRICS_CONTENT_TYPE };
      break;
    default:
      break;
  }
  return {
    status: 404,
    body: `not found: try /healthz, /readyz${state.metrics ? ' or /metrics' : ''}\n`,
    contentType: TEXT,
  };
}

/** Listens on host:port; resolves once bound, so a port clash fails the start with a clear error. */
export async function startHealthServer(address: string, state: HealthState): Promise<Server> {
  const i = address.lastIndexOf(':');
  const host = address.slice(0, i);
  const port = Number(address.slice(i + 1));
  const server = createServer((req, res) => {
    // The response is written when the metrics are collected; a collection that throws answers 500, not a hang.
    void healthResponse(req.url ?? '/', state).then(
      (r) => {
        res.writeHead(r.status, { 'content-type': r.contentType });
        res.end(r.body);
      },
      (err: unknown) => {
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end(`error: ${String(err)}\n`);
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) =>
      reject(new Error(`cannot serve health endpoints on ${address}: ${String(err)}`, { cause: err })),
    );
    server.listen(port, host, () => resolve());
  });
  return server;
}
