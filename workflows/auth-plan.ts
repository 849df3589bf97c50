// Decides, from spec.auth and what etcd says about its auth, whether the cluster needs the EnableAuth step (and which of its actions comes next) or RotateAuth.
//
// Pure and sandbox-safe; plan.ts calls planAuth as one named check of its chain (and authBlocked before the
// chain), and the EnableAuth step repeats nextAuthAction after each action, so a crash between any two
// actions is recovered by observing again: every action is idempotent in etcd.
import { Reasons } from '../crds/conditions';
import type { AuthObservation, RotationResult } from '../contracts/auth';

/** Make sure root exists with the Secret's password and the root role, and auth is on. */
export interface EnableAuthStep {
  kind: 'EnableAuth';
}

/** Make etcd's root password the Secret's, authenticating with the one the operator last applied. */
export interface RotateAuthStep {
  kind: 'RotateAuth';
}

export type AuthWaitReason =
  typeof Reasons.AuthSecretInvalid | typeof Reasons.AuthFailed | typeof Reasons.AuthUnknown;

export type AuthPlanWait = { kind: 'Wait'; reason: AuthWaitReason; message: string };

/**
 * The check in the plan chain (run once etcd has quorum and every member answers): EnableAuth while the
 * spec asks for auth and etcd has it off; a wait naming the Secret when its values cannot be used.
 * With `unknownWaits`, auth that could not be read is a wait too (AuthUnknown): until etcd says auth is on, the
 * cluster is not what its spec asks, and status must not call it converged.
 * Undefined when nothing is to be done, or when auth was not observed (a cluster without spec.auth).
 */
export function planAuth(
  wanted: boolean,
  observed: AuthObservation | undefined,
  unknownWaits = false,
): EnableAuthStep | AuthPlanWait | undefined {
  if (!wanted || !observed) return undefined;
  if (observed.etcd.state === 'unknown' && unknownWaits) {
    return {
      kind: 'Wait',
      reason: Reasons.AuthUnknown,
      message: `spec.auth is set and etcd did not say whether auth is on (${observed.etcd.message}); looking again`,
    };
  }
  if (observed.etcd.state !== 'disabled') return undefined;
  if (observed.secretProblem) {
    return {
      kind: 'Wait',
      reason: Reasons.AuthSecretInvalid,
      message: `auth is not enabled yet: ${observed.secretProblem}`,
    };
  }
  return { kind: 'EnableAuth' };
}

/**
 * Whether etcd refuses the operator's credentials: then every observation of etcd fails, and a plan made
 * from "no member answers" would be wrong, so nothing is done until the Secret matches etcd again.
 */
export function authBlocked(
  wanted: boolean,
  observed: AuthObservation | undefined,
): AuthPlanWait | undefined {
  if (!wanted || observed?.etcd.state !== 'rejected') return undefined;
  return { kind: 'Wait', reason: Reasons.AuthFailed, message: observed.etcd.message };
}

export type AuthAction =
  | { kind: 'AddRootUser' }
  | { kind: 'GrantRootRole' }
  /** Set root's password to the Secret's and turn auth on. */
  | { kind: 'EnableAuth' }
  | { kind: 'Done' }
  /** The step cannot go on now; the plan says why (and waits) once the operation observes again. */
  | { kind: 'Stop'; message: string };

/** The next action inside the EnableAuth step. */
export function nextAuthAction(observed: AuthObservation): AuthAction {
  const etcd = observed.etcd;
  if (etcd.state === 'enabled') return { kind: 'Done' };
  if (etcd.state !== 'disabled') return { kind: 'Stop', message: etcd.message };
  if (observed.secretProblem) return { kind: 'Stop', message: observed.secretProblem };
  if (!etcd.rootUser) return { kind: 'AddRootUser' };
  if (!etcd.rootRole) return { kind: 'GrantRootRole' };
  return { kind: 'EnableAuth' };
}

export function describeAuthAction(action: AuthAction): string {
  switch (action.kind) {
    case 'AddRootUser':
      return 'add the root user with the password of the Secret spec.auth names';
    case 'GrantRootRole':
      return 'grant the root role to the root user';
    case 'EnableAuth':
      return "set root's password from the Secret and enable auth";
    case 'Done':
      return 'auth is enabled';
    case 'Stop':
      return `auth cannot be enabled now: ${action.message}`;
  }
}

/**
 * The check in the plan chain once membership is settled: RotateAuth while auth is on and the Secret's
 * password differs from the copy of what etcd has (or no copy exists yet: the step then only records it).
 * Undefined without an applied-copy observation, so histories from before it plan as they did.
 */
export function planAuthRotation(
  wanted: boolean,
  observed: AuthObservation | undefined,
): RotateAuthStep | undefined {
  if (!wanted || observed?.etcd.state !== 'enabled' || observed.secretProblem) return undefined;
  if (observed.applied === undefined || observed.applied === 'current') return undefined;
  return { kind: 'RotateAuth' };
}

/**
 * Whether a look must come again soon because auth could not be read: spec.auth is on and etcd answered its member
 * list, yet the auth state stayed unknown (a call that timed out). Nothing else would look again before the 10-minute
 * drift check, and until auth is known neither a rotation nor the applied copy of the root password can follow.
 */
export function authNeedsAnotherLook(
  wanted: boolean,
  etcdAnswered: boolean,
  observed: AuthObservation | undefined,
): boolean {
  return wanted && etcdAnswered && observed?.etcd.state === 'unknown';
}

export function describeRotation(result: RotationResult): string {
  switch (result) {
    case 'recorded':
      return "etcd already accepts the Secret's root password; recorded it as applied";
    case 'changed':
      return "changed etcd's root password to the Secret's and recorded it as applied";
    case 'rejected':
      return "etcd accepts neither the Secret's root password nor the one last applied; planning again";
  }
}
