import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  logOffset,
  messageFilePath,
  prepareTerminationFile,
  readLogTail,
  readMessageFile,
  removeTerminationFiles,
  terminationDir,
} from './termination-files';

describe('termination files of a container', () => {
  const podDir = mkdtempSync(join(tmpdir(), 'termination-files-'));

  it('prepares an empty message file and the overlay folders, and a restart starts from an empty file again', () => {
    const dir = terminationDir(podDir, 'main');
    const t = prepareTerminationFile(dir, '/dev/termination-log');
    expect(t).toEqual({ path: '/dev/termination-log', hostDir: dir });
    expect(readdirSync(dir).sort()).toEqual(['message', 'stage', 'upper', 'work']);
    writeFileSync(messageFilePath(dir), 'first run');
    writeFileSync(join(dir, 'upper', 'left-over'), 'x');
    prepareTerminationFile(dir, '/dev/termination-log');
    expect(readFileSync(messageFilePath(dir), 'utf8')).toBe('');
    expect(readdirSync(join(dir, 'upper'))).toEqual([]);
  });

  it('takes a relative path from the root', () => {
    expect(prepareTerminationFile(terminationDir(podDir, 'rel'), 'tmp/msg').path).toBe('/tmp/msg');
  });

  it('reads the last 4096 bytes of the message file, and tells a missing file apart', () => {
    const dir = terminationDir(podDir, 'big');
    prepareTerminationFile(dir, '/dev/termination-log');
    writeFileSync(messageFilePath(dir), 'a'.repeat(100) + 'b'.repeat(4096));
    const read = readMessageFile(messageFilePath(dir));
    expect(read.kind === 'read' && read.tail.toString()).toBe('b'.repeat(4096));
    expect(readMessageFile(join(podDir, 'nowhere'))).toEqual({ kind: 'missing' });
  });

  it('tails only the log written after the instance started', () => {
    const log = join(podDir, 'c.log');
    expect(logOffset(log)).toBe(0);
    writeFileSync(log, 'previous run\n');
    const from = logOffset(log);
    appendFileSync(log, 'this run\nfailed\n');
    expect(readLogTail(log, from).toString()).toBe('this run\nfailed\n');
    expect(readLogTail(join(podDir, 'missing.log'), 0).toString()).toBe('');
  });

  it('removes every container folder with the Pod', () => {
    prepareTerminationFile(terminationDir(podDir, 'gone'), '/dev/termination-log');
    removeTerminationFiles(podDir);
    expect(existsSync(join(podDir, 'termination'))).toBe(false);
  });
});
