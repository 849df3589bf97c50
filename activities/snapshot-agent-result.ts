// TEMPORARY local copy of the agent's result contract (/work/briefs/agent-contract.md) until agent/result.ts lands in main; then this file re-exports it.
//
// The agent writes one JSON line to its termination message; this is the control side's reading of it.

export const AgentFailureReasons = {
  InvalidCredentials: 'InvalidCredentials',
  BucketNotFound: 'BucketNotFound',
  DestinationUnavailable: 'DestinationUnavailable',
  EtcdUnavailable: 'EtcdUnavailable',
  InvalidArguments: 'InvalidArguments',
  ChecksumMismatch: 'ChecksumMismatch',
  SourceNotFound: 'SourceNotFound',
} as const;
export type AgentFailureReason = (typeof AgentFailureReasons)[keyof typeof AgentFailureReasons];

export interface AgentArtifact {
  uri: string;
  size: number;
  sha256: string;
  revision: number;
  etcdVersion: string;
  takenAt: string;
}

export type AgentResult =
  | { ok: true; artifact: AgentArtifact }
  | { ok: true; restored: boolean; sha256?: string; size?: number }
  | { ok: false; reason: AgentFailureReason; message: string };

const REASONS = new Set<string>(Object.values(AgentFailureReasons));

/** Parses the agent's result line; throws on anything that is not one. */
export function parseAgentResult(text: string): AgentResult {
  const v = JSON.parse(text.trim()) as Record<string, unknown>;
  if (v.ok === false) {
    if (typeof v.reason !== 'string' || !REASONS.has(v.reason)) {
      throw new Error(`agent result has an unknown reason: ${String(v.reason)}`);
    }
    return { ok: false, reason: v.reason as AgentFailureReason, message: String(v.message ?? '') };
  }
  if (v.ok !== true) throw new Error('agent result has no boolean "ok"');
  const a = v.artifact as Record<string, unknown> | undefined;
  if (a) {
    if (
      typeof a.uri !== 'string' ||
      typeof a.size !== 'number' ||
      typeof a.sha256 !== 'string' ||
      !/^[0-9a-f]{64}$/.test(a.sha256) ||
      typeof a.revision !== 'number' ||
      typeof a.etcdVersion !== 'string' ||
      typeof a.takenAt !== 'string'
    ) {
      throw new Error('agent result has an incomplete artifact');
    }
    return { ok: true, artifact: a as unknown as AgentArtifact };
  }
  return {
    ok: true,
    restored: Boolean(v.restored),
    ...(typeof v.sha256 === 'string' ? { sha256: v.sha256 } : {}),
    ...(typeof v.size === 'number' ? { size: v.size } : {}),
  };
}
