// `up --claims-in-memory` (what `npm test` uses): the process-backed nodes' claim data in a tmpfs instead of the
// machine's disk. Side by side on two cores, the suite's clusters share one disk with everything else the machine
// does, and etcd's WAL fdatasync stalled there for over a second at a time (seen in CI: "slow fdatasync took 1.15s"
// on all three members of one cluster at once), which the tests' 1 s write-gap bound counts against the operator.
// The data lives as long as the stack: `down` removes it. `<state dir>/claims` stays the path everything uses, as a
// symbolic link into /dev/shm, so the claim binder, Pods' volumes and tests are the same in both modes.
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

/** One folder per state folder: two checkouts' stacks never share claims. */
const stackFolder = (stateDir: string, shmRoot: string) =>
  join(shmRoot, 'etcd-conductor', createHash('sha256').update(stateDir).digest('hex').slice(0, 12));

/** Where a stack's claims live in memory: one folder per state folder, under /dev/shm (or `shmRoot`). */
export function memoryClaimsDir(stateDir: string, shmRoot = '/dev/shm'): string {
  return join(stackFolder(stateDir, shmRoot), 'claims');
}

/**
 * Points `<stateDir>/claims` at the in-memory folder. A real folder there that holds claims is kept (its data is on
 * disk and would be lost): the answer says so and nothing changes.
 */
export function useMemoryClaims(stateDir: string, shmRoot = '/dev/shm'): { dir: string; kept?: string } {
  const link = join(stateDir, 'claims');
  const target = memoryClaimsDir(stateDir, shmRoot);
  const stat = lstatSync(link, { throwIfNoEntry: false });
  if (stat?.isDirectory() && readdirSync(link).length > 0)
    return { dir: link, kept: `${link} holds claims on disk; they stay there` };
  if (stat) rmSync(link, { recursive: true, force: true });
  mkdirSync(target, { recursive: true });
  mkdirSync(stateDir, { recursive: true });
  symlinkSync(target, link, 'dir');
  return { dir: target };
}

/** For `down`: the in-memory claims of this state folder and their link go with the stack. */
export function removeMemoryClaims(stateDir: string, shmRoot = '/dev/shm'): void {
  const link = join(stateDir, 'claims');
  if (lstatSync(link, { throwIfNoEntry: false })?.isSymbolicLink()) rmSync(link, { force: true });
  const target = stackFolder(stateDir, shmRoot);
  if (existsSync(target)) rmSync(target, { recursive: true, force: true });
}
