// Applies the user's root password to etcd by authenticating with the one etcd has (the operator's applied copy), and says which password etcd accepts.
//
// Invariant: passwords come in as arguments inside the worker process and go only to etcd and to the applied
// copy; results are words. Every path is idempotent: a retry after UserChangePassword finds the new password
// accepted and only records it, so a crash between the change and the record loses nothing.
import type { Etcd3 } from 'etcd3';
import { ROOT_USER } from './etcd-auth';
import type { RotationResult } from '../contracts/auth';

export interface RotationIO {
  /** Runs `fn` as root with `password` (authenticating first); etcd's refusal of the password throws. */
  withPassword<T>(password: string, fn: (c: Etcd3) => Promise<T>): Promise<T>;
  /** Records `password` as the one etcd's root user has (the applied copy). */
  record(password: string): Promise<void>;
}

// etcd's answer to Authenticate with a wrong password; anything else (no leader, timeout) is transient.
const PASSWORD_REFUSED = /authentication failed|invalid user ID or password/i;

const text = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Whether etcd accepts root with `password`: 'refused' only on etcd's refusal; other errors throw. */
export async function checkPassword(io: RotationIO, password: string): Promise<'accepted' | 'refused'> {
  try {
    await io.withPassword(password, (c) => c.auth.authStatus());
    return 'accepted';
  } catch (err) {
    if (PASSWORD_REFUSED.test(text(err))) return 'refused';
    throw err;
  }
}

/**
 * Makes etcd's root password `wanted`: if etcd accepts it already, records it; otherwise authenticates with
 * `applied` (what the operator last set) and calls UserChangePassword, then records it. 'rejected' when
 * neither is accepted: only a person who knows etcd's password can fix that, by putting it into the Secret.
 */
export async function applyRootPassword(
  io: RotationIO,
  wanted: string,
  applied: string | undefined,
): Promise<RotationResult> {
  if ((await checkPassword(io, wanted)) === 'accepted') {
    await io.record(wanted);
    return 'recorded';
  }
  if (applied === undefined || applied === wanted) return 'rejected';
  try {
    await io.withPassword(applied, (c) => c.auth.userChangePassword({ name: ROOT_USER, password: wanted }));
  } catch (err) {
    if (PASSWORD_REFUSED.test(text(err))) return 'rejected';
    throw err;
  }
  await io.record(wanted);
  return 'changed';
}
