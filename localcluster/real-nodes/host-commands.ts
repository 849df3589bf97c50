// Runs the host commands the real nodes are built from (ip, umount, iptables...), with errors that say which command failed and why.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export async function sh(command: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await execFileAsync(command, args, { maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new Error(`${command} ${args.join(' ')} failed: ${(err.stderr ?? '').trim() || err.message}`, {
      cause: e,
    });
  }
}

/** For clean-up: a failure (usually "does not exist") is fine, since every clean-up step must be idempotent. */
export async function shQuiet(command: string, args: string[]): Promise<boolean> {
  try {
    await execFileAsync(command, args);
    return true;
  } catch {
    return false;
  }
}
