// The node's side of termination messages: one folder per container instance under the Pod's folder, read after the container exits and removed with the Pod.
import {
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join, posix } from 'node:path';
import type { TerminationFile } from './mount-script';
import { MAX_LOG_MESSAGE_BYTES, MAX_MESSAGE_FILE_BYTES, tailOfLog } from './termination-message';
import type { MessageFile } from './termination-message';

export function terminationRoot(podDir: string): string {
  return join(podDir, 'termination');
}

/** The folder of one container; its `message` file is what the container sees at its terminationMessagePath. */
export function terminationDir(podDir: string, container: string): string {
  return join(terminationRoot(podDir), container);
}

/**
 * A fresh, empty message file for a container instance that is about to start (the kubelet gives every new
 * container its own file, so a restart never shows the previous run's message), plus the overlay's folders.
 */
export function prepareTerminationFile(hostDir: string, containerPath: string): TerminationFile {
  rmSync(hostDir, { recursive: true, force: true });
  for (const sub of ['upper', 'work', 'stage']) mkdirSync(join(hostDir, sub), { recursive: true });
  writeFileSync(join(hostDir, 'message'), '', { mode: 0o666 });
  // The apiserver defaults the path; a relative one (possible from other API clients) is taken from the root.
  return { path: posix.resolve('/', containerPath), hostDir };
}

export function messageFilePath(hostDir: string): string {
  return join(hostDir, 'message');
}

/** Reads `[max(from, size - max), size)` of a file; undefined when it does not exist. */
function readTail(path: string, maxBytes: number, from = 0): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  try {
    const size = fstatSync(fd).size;
    const start = Math.max(from, size - maxBytes, 0);
    const buf = Buffer.alloc(Math.max(0, size - start));
    let read = 0;
    while (read < buf.length) {
      const n = readSync(fd, buf, read, buf.length - read, start + read);
      if (n === 0) break;
      read += n;
    }
    return buf.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

/** The last 4 KiB the container wrote to its termination file, as the kubelet's tail.ReadAtMost reads it. */
export function readMessageFile(path: string): MessageFile {
  try {
    const tail = readTail(path, MAX_MESSAGE_FILE_BYTES);
    return tail === undefined ? { kind: 'missing' } : { kind: 'read', tail };
  } catch (e) {
    return { kind: 'error', error: e instanceof Error ? e.message : String(e) };
  }
}

/** Where this container instance's output starts in its (appended) log file. */
export function logOffset(logPath: string): number {
  try {
    return statSync(logPath).size;
  } catch {
    return 0;
  }
}

/** The log fallback's message: the last 80 lines, at most 2 KiB, of what this instance wrote from `from` on. */
export function readLogTail(logPath: string, from: number): Buffer {
  // 80 lines capped at 2 KiB never reach further back than the last 2 KiB, so that is all that is read.
  return tailOfLog(readTail(logPath, MAX_LOG_MESSAGE_BYTES, from) ?? Buffer.alloc(0));
}

export function removeTerminationFiles(podDir: string): void {
  rmSync(terminationRoot(podDir), { recursive: true, force: true });
}
