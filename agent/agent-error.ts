// The one error the agent's steps throw on purpose: a failure reason from the contract plus a short message that never carries secrets.
import type { AgentFailureReason } from '../contracts/agent-result';

export class AgentError extends Error {
  constructor(
    readonly reason: AgentFailureReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'AgentError';
  }
}

/** `e`'s first line, for messages; errors from gRPC and the AWS SDK carry multi-line details. */
export function describe(e: unknown): string {
  const message = (e as { message?: unknown } | null)?.message;
  const text = typeof message === 'string' ? message : String(e);
  return (text.split('\n')[0] ?? '').trim() || (e instanceof Error ? e.name : 'unknown error');
}
