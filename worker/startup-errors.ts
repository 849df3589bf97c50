// Turns what goes wrong while the operator starts (Temporal unreachable, a namespace that does not exist, RBAC
// refusing a list) into one plain sentence for the log and /readyz, and says how long to wait before the next try.
//
// Invariant: a start that fails is retried in the process with a growing delay and a message saying what and
// where; the process never exits in a loop without saying why.
import { ApiException } from '@kubernetes/client-node';

export type StartupStep = 'temporal-connect' | 'temporal-namespace' | 'kube-list' | 'worker';

/** The sentence the log and /readyz show. */
export class StartupError extends Error {
  constructor(
    readonly step: StartupStep,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StartupError';
  }
}

const FIRST_DELAY_MS = 1000;
const MAX_DELAY_MS = 60_000;

/** 1 s, 2 s, 4 s ... capped at 60 s: quick while a Temporal frontend starts beside the operator, gentle after. */
export function startupRetryDelayMs(attempt: number): number {
  return Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** Math.max(0, attempt - 1));
}

/** gRPC status codes the Temporal client reports on its errors. */
const GRPC_NOT_FOUND = 5;
const GRPC_PERMISSION_DENIED = 7;
const GRPC_UNAUTHENTICATED = 16;

function firstLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n')[0] ?? text;
}

/** An apiserver error as "HTTP 403 Forbidden: <its message>", without the headers and body dump ApiException prints. */
export function describeKubeError(err: unknown): string {
  if (err instanceof ApiException) {
    let body: { reason?: string; message?: string } | undefined;
    try {
      body = (typeof err.body === 'string' ? JSON.parse(err.body) : err.body) as typeof body;
    } catch {
      body = { message: String(err.body).slice(0, 200) };
    }
    const reason = body?.reason ?? '';
    const message = body?.message ?? '';
    return `HTTP ${err.code}${reason ? ` ${reason}` : ''}${message ? `: ${message}` : ''}`;
  }
  return firstLine(err);
}

/** What failed, where, and what to check, as one sentence. */
export function describeStartupFailure(
  step: StartupStep,
  where: { temporalAddress: string; temporalNamespace: string; resource?: string; apiServer?: string },
  err: unknown,
): string {
  const code = (err as { code?: unknown } | undefined)?.code;
  switch (step) {
    case 'temporal-connect':
      return `cannot reach the Temporal frontend at ${where.temporalAddress}: ${firstLine(err)}; check temporal.address and that the frontend is up`;
    case 'temporal-namespace':
      if (code === GRPC_NOT_FOUND)
        return `Temporal namespace "${where.temporalNamespace}" does not exist at ${where.temporalAddress}; check temporal.namespace or create it`;
      if (code === GRPC_PERMISSION_DENIED || code === GRPC_UNAUTHENTICATED)
        return `Temporal at ${where.temporalAddress} refused access to namespace "${where.temporalNamespace}": ${firstLine(err)}; check the client certificate or API key`;
      return `cannot check Temporal namespace "${where.temporalNamespace}" at ${where.temporalAddress}: ${firstLine(err)}`;
    case 'kube-list': {
      const at = where.apiServer ? ` at ${where.apiServer}` : '';
      if (err instanceof ApiException && (err.code === 401 || err.code === 403))
        return `the Kubernetes API${at} refused to list ${where.resource ?? 'a resource'} (${describeKubeError(err)}); grant the operator's ServiceAccount the chart's RBAC`;
      return `cannot list ${where.resource ?? 'a resource'} from the Kubernetes API${at}: ${describeKubeError(err)}`;
    }
    case 'worker':
      return `the Temporal worker could not start on namespace "${where.temporalNamespace}" at ${where.temporalAddress}: ${firstLine(err)}`;
  }
}
