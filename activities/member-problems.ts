// Reads why a member Pod does not run from what the kubelet and scheduler wrote: the one place that turns their words into a reason.
//
// Pure. The message keeps the kubelet's or scheduler's own words but drops what changes on every retry
// (back-off seconds, "Back-off pulling" versus "Failed to pull"), so status is not rewritten each time the
// kubelet retries and an Event is told once per Pod and reason.

import type { MemberProblem, MemberProblemReason } from '../contracts/member-problems';

export type { MemberProblem, MemberProblemReason };

/** The kubelet's waiting reasons for an image it cannot get. */
const IMAGE_PULL_REASONS = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
  'ErrImageNeverPull',
]);

/**
 * A Pod the scheduler has not placed, or a claim not bound, is normal for a moment after it is created (the
 * scheduler retries, a provisioner binds): only one that stays so this long is reported.
 */
export const PENDING_GRACE_MS = 10_000;

export interface ProblemPod {
  name: string;
  creationTimestamp?: string;
  conditions?: {
    type: string;
    status: string;
    reason?: string;
    message?: string;
    lastTransitionTime?: string;
  }[];
  etcd?: {
    image?: string;
    waiting?: { reason?: string; message?: string };
    lastTerminated?: { exitCode?: number; message?: string };
  };
  /** The Pod's init containers that wait (a restored seed's `restore`, which runs the agent image). */
  init?: { name: string; image?: string; waiting?: { reason?: string; message?: string } }[];
}

export interface ProblemClaim {
  name: string;
  phase?: string;
  creationTimestamp?: string;
  storageClassName?: string;
  /** Whether the named StorageClass exists (undefined when the claim names none or it was not read). */
  classExists?: boolean;
  /**
   * The class binds on first consumer (volumeBindingMode WaitForFirstConsumer): its claim stays Pending until the
   * scheduler has picked a node for the Pod, so a Pending claim there is the Pod's problem first.
   */
  bindsOnFirstConsumer?: boolean;
  /** The node the scheduler picked for the claim's volume (annotation volume.kubernetes.io/selected-node). */
  selectedNode?: string;
}

const olderThan = (iso: string | undefined, now: number, ms: number) =>
  iso !== undefined && now - Date.parse(iso) >= ms;

/** `Back-off pulling image "x": ErrImagePull: why` and `Failed to pull image "x": why` both become `why`. */
export function pullFailureCause(message: string): string {
  return message
    .replace(/^Back-off pulling image "[^"]*"(: )?/, '')
    .replace(/^ErrImagePull: /, '')
    .replace(/^Failed to pull image "[^"]*": /, '');
}

/** zap's levels that end the process: etcd's last words before it exits. */
const DYING_LEVELS = new Set(['fatal', 'panic', 'dpanic']);

/** The fields of etcd's zap log lines that say why it stopped. */
interface ZapEntry {
  level?: unknown;
  msg?: unknown;
  error?: unknown;
  panic?: unknown;
}

/** A log line as etcd's zap logger writes it (JSON), or undefined for any other line. */
function zapEntry(line: string): ZapEntry | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    return JSON.parse(line) as ZapEntry;
  } catch {
    return undefined;
  }
}

/**
 * What etcd said last before it exited, from the tail of its log (the termination message, or the previous run's
 * log), without what changes on every run: etcd logs JSON, whose `msg` and `error` say why it stopped while `ts`
 * and `pid` differ each time. A panic prints Go's stack trace after etcd's line, so the line that says why is the
 * last one logged at fatal or panic level that carries an `error`, else the last at those levels, then Go's own
 * `panic: ` or `fatal error: ` line, then the last line. A panic inside one of etcd's scheduled jobs is logged twice:
 * first where it happened, with its error (`failed to ...`, `error: ... no space left on device`), then by the
 * scheduler that caught it (`execute job failed`, the first message under `panic`); the first says why.
 */
export function lastWords(text: string | undefined): string | undefined {
  const lines = (text ?? '')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const isDying = (l: string) => {
    const level = zapEntry(l)?.level;
    return typeof level === 'string' && DYING_LEVELS.has(level);
  };
  const dying =
    lines.findLast((l) => isDying(l) && typeof zapEntry(l)?.error === 'string') ?? lines.findLast(isDying);
  const line =
    dying ?? lines.findLast((l) => l.startsWith('panic: ') || l.startsWith('fatal error: ')) ?? lines.at(-1);
  if (line === undefined) return undefined;
  const entry = zapEntry(line);
  const why = typeof entry?.error === 'string' ? entry.error : entry?.panic;
  const said =
    typeof entry?.msg === 'string' ? (typeof why === 'string' ? `${entry.msg}: ${why}` : entry.msg) : line;
  return said.length > 300 ? `${said.slice(0, 297)}...` : said;
}

function pullFailure(
  pod: string,
  image: string | undefined,
  waiting: { reason?: string; message?: string },
  container = '',
): MemberProblem {
  const named = image ? ` "${image}"` : '';
  const cause = waiting.message ? `: ${pullFailureCause(waiting.message)}` : ` (${waiting.reason})`;
  return { reason: 'ImagePullFailed', message: `Pod ${pod} cannot pull image${named}${container}${cause}` };
}

/**
 * What keeps this member from running, if anything the user must act on: a claim that stays Pending, a Pod
 * the scheduler cannot place, an image the kubelet cannot pull, a container that keeps exiting.
 */
export function memberProblem(
  pod: ProblemPod | undefined,
  claim: ProblemClaim | undefined,
  now: number,
): MemberProblem | undefined {
  const pending =
    claim?.phase === 'Pending' && olderThan(claim.creationTimestamp, now, PENDING_GRACE_MS)
      ? claim
      : undefined;
  // A class that binds on first consumer binds only once the scheduler has placed the Pod: until a node was picked,
  // nothing is wrong with the claim, and a Pod that cannot be placed is told below in the scheduler's words.
  const awaitsPlacement =
    pending?.classExists === true &&
    pending.bindsOnFirstConsumer === true &&
    pending.selectedNode === undefined;
  if (pending && !awaitsPlacement) {
    const why =
      pending.storageClassName === undefined
        ? 'it names no StorageClass and no volume was bound to it'
        : pending.classExists === false
          ? `StorageClass "${pending.storageClassName}" does not exist`
          : pending.selectedNode !== undefined
            ? `no volume of StorageClass "${pending.storageClassName}" was provisioned for it on node ${pending.selectedNode} yet`
            : `no volume of StorageClass "${pending.storageClassName}" was bound to it yet`;
    return { reason: 'ClaimPending', message: `claim ${pending.name} is Pending: ${why}` };
  }
  if (!pod) return undefined;
  const scheduled = pod.conditions?.find((c) => c.type === 'PodScheduled');
  if (
    scheduled?.status === 'False' &&
    scheduled.reason === 'Unschedulable' &&
    olderThan(scheduled.lastTransitionTime ?? pod.creationTimestamp, now, PENDING_GRACE_MS)
  ) {
    return {
      reason: 'PodUnschedulable',
      message: `Pod ${pod.name} cannot be scheduled: ${scheduled.message ?? 'Unschedulable'}`,
    };
  }
  // An init container runs before etcd: while its image cannot be pulled, etcd's container only says PodInitializing.
  const init = pod.init?.find((c) => c.waiting?.reason && IMAGE_PULL_REASONS.has(c.waiting.reason));
  if (init?.waiting)
    return pullFailure(pod.name, init.image, init.waiting, ` for init container ${init.name}`);
  const waiting = pod.etcd?.waiting;
  if (waiting?.reason && IMAGE_PULL_REASONS.has(waiting.reason))
    return pullFailure(pod.name, pod.etcd?.image, waiting);
  if (waiting?.reason === 'CrashLoopBackOff') {
    const last = pod.etcd?.lastTerminated;
    const code = last?.exitCode !== undefined ? ` with exit code ${last.exitCode}` : '';
    const said = lastWords(last?.message);
    return {
      reason: 'MemberCrashLooping',
      message: `Pod ${pod.name}: etcd keeps exiting${code} (CrashLoopBackOff)${said ? `: ${said}` : ''}`,
    };
  }
  return undefined;
}
