// Decides a terminated container's `message` the way the kubelet does: the termination file's tail, else (FallbackToLogsOnError, non-zero exit) the log's tail, capped per Pod.

/** The apiserver's default `terminationMessagePath`. */
export const DEFAULT_TERMINATION_MESSAGE_PATH = '/dev/termination-log';

/** kubelet `MaxContainerTerminationMessageLength`: the last 4 KiB of the file are read. */
export const MAX_MESSAGE_FILE_BYTES = 4096;
/** kubelet `MaxContainerTerminationMessageLogLength` and `...LogLines`: the log fallback keeps at most this much. */
export const MAX_LOG_MESSAGE_BYTES = 2048;
export const MAX_LOG_MESSAGE_LINES = 80;
/** kubelet `MaxPodTerminationMessageLogLength`: all messages of a Pod share 12 KiB, split evenly per container. */
export const MAX_POD_MESSAGE_BYTES = 12 * 1024;

export type TerminationMessagePolicy = 'File' | 'FallbackToLogsOnError';

/** What the node found at the container's termination file after it exited. */
export type MessageFile =
  { kind: 'missing' } | { kind: 'read'; tail: Buffer } | { kind: 'error'; error: string };

export interface TerminationMessageInput {
  policy: TerminationMessagePolicy;
  exitCode: number;
  /** The container never ran (StartError): there is no file and no log to fall back to. */
  couldNotRun: boolean;
  file: MessageFile;
  /** Where the file lives on this machine, for the read-error message. */
  hostPath: string;
  /** The last bytes this container instance wrote to its log (only read when the fallback applies). */
  logTail: () => Buffer;
}

/** The last `lines` lines (a final line without newline counts), then the last `bytes` bytes of those. */
export function tailOfLog(log: Buffer, lines = MAX_LOG_MESSAGE_LINES, bytes = MAX_LOG_MESSAGE_BYTES): Buffer {
  let start = log.length;
  // A trailing newline ends the last line; it does not start an empty one.
  let searchFrom = log.length > 0 && log[log.length - 1] === 0x0a ? log.length - 2 : log.length - 1;
  for (let seen = 0; seen < lines; seen++) {
    if (searchFrom < 0) {
      start = 0;
      break;
    }
    const nl = log.lastIndexOf(0x0a, searchFrom);
    start = nl + 1;
    if (nl < 0) break;
    searchFrom = nl - 1;
  }
  const tail = log.subarray(start);
  return tail.length > bytes ? tail.subarray(tail.length - bytes) : tail;
}

/** The message to put into `state.terminated.message`, or undefined for none (the field is then left out). */
export function terminationMessage(input: TerminationMessageInput): string | undefined {
  const fallback = input.policy === 'FallbackToLogsOnError' && input.exitCode !== 0 && !input.couldNotRun;
  let message = '';
  let useLogs = fallback;
  if (input.file.kind === 'error') {
    message = `Error on reading termination log ${input.hostPath}: ${input.file.error}`;
    useLogs = false;
  } else if (input.file.kind === 'read') {
    message = input.file.tail.toString('utf8');
    useLogs = fallback && input.file.tail.length === 0;
  }
  if (useLogs) message = input.logTail().toString('utf8');
  return message === '' ? undefined : message;
}

/** Bytes each container's messages may take in the Pod's status (the kubelet's normalizeStatus). */
export function messageBytesPerContainer(containerCount: number): number {
  return containerCount > 0 ? Math.floor(MAX_POD_MESSAGE_BYTES / containerCount) : MAX_POD_MESSAGE_BYTES;
}

/** Cuts a message to `maxBytes` of UTF-8, as Go's byte slicing does (a split character becomes U+FFFD). */
export function truncateMessage(message: string, maxBytes: number): string {
  const bytes = Buffer.from(message, 'utf8');
  return bytes.length <= maxBytes ? message : bytes.subarray(0, maxBytes).toString('utf8');
}
