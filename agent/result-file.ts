// Writes the result line where the control side reads it; the kubelet's /dev/termination-log is only ever written in place, never created.
import { closeSync, ftruncateSync, openSync, writeSync } from 'node:fs';

/**
 * `createIfMissing: false` is for the default /dev/termination-log: every Kubernetes container has it, so its
 * absence means a runtime without termination messages, where creating it would leave a stray file in /dev
 * shared by every process on the machine. Throws when the file cannot be written.
 */
export function writeResultFile(path: string, line: string, createIfMissing: boolean): void {
  const fd = openSync(path, createIfMissing ? 'w' : 'r+');
  try {
    if (!createIfMissing) ftruncateSync(fd, 0);
    writeSync(fd, `${line}\n`);
  } finally {
    closeSync(fd);
  }
}
