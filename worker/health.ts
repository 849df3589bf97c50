// Serves /healthz (the process answers) and /readyz (the operator started its roles) for Kubernetes probes.
// Readiness says why not in the body, so `kubectl describe pod` shows e.g. an unreachable Temporal frontend.
import { createServer, type Server } from 'node:http';

export interface HealthState {
  /** undefined: ready; otherwise the reason the operator is not ready. */
  notReady(): string | undefined;
}

export interface HealthResponse {
  status: number;
  body: string;
}

/** The pure routing, table-tested: path and state in, status and body out. */
export function healthResponse(path: string, state: HealthState): HealthResponse {
  switch (path.split('?')[0]) {
    case '/healthz':
      return { status: 200, body: 'ok\n' };
    case '/readyz': {
      const reason = state.notReady();
      return reason === undefined
        ? { status: 200, body: 'ok\n' }
        : { status: 503, body: `not ready: ${reason}\n` };
    }
    default:
      return { status: 404, body: 'not found: try /healthz or /readyz\n' };
  }
}

/** Listens on host:port; resolves once bound, so a port clash fails the start with a clear error. */
export async function startHealthServer(address: string, state: HealthState): Promise<Server> {
  const i = address.lastIndexOf(':');
  const host = address.slice(0, i);
  const port = Number(address.slice(i + 1));
  const server = createServer((req, res) => {
    const r = healthResponse(req.url ?? '/', state);
    res.writeHead(r.status, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(r.body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) =>
      reject(new Error(`cannot serve health endpoints on ${address}: ${String(err)}`, { cause: err })),
    );
    server.listen(port, host, () => resolve());
  });
  return server;
}
