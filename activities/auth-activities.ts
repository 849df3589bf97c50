// The EnableAuth and RotateAuth steps' effects on etcd: observe auth, add the root user, grant it the root role, enable auth, apply a changed password; each looks before it acts.
//
// Invariant: inputs and results carry names and states only. The password is read from the Secret inside
// these functions (activities/etcd-auth.ts) and goes to etcd only, so nothing secret reaches Temporal.
import type { Etcd3 } from 'etcd3';
import type { EtcdAdminOptions } from './etcd-admin';
import { withEtcdClient } from './etcd-admin';
import { applyRootPassword, checkPassword } from './auth-rotation';
import type { RotationIO } from './auth-rotation';
import {
  appliedSecretName,
  readAppliedPassword,
  readRootCredentials,
  ROOT_USER,
  writeAppliedPassword,
} from './etcd-auth';
import type { RootCredentials } from './etcd-auth';
import type { KubeObjects } from './kube-objects';
import { clusterCallEndpoints } from './etcd-membership';
import type { ClusterRef } from '../contracts/cluster-ref';
import type { RotationResult } from '../contracts/auth';
import type { AuthObservation, EtcdAuthState } from '../contracts/auth';

export interface AuthActivityDeps {
  kube: KubeObjects;
  /** The same options as the cluster activities' etcd calls: connectionFor adds the root credentials. */
  etcd: EtcdAdminOptions;
}

// A starting member is not waited for: the next observation asks again.
const AUTH_CALL_TIMEOUT_MS = 2000;
const AUTH_FAILED = /authentication failed|invalid user ID or password/i;
const NO_CREDENTIALS = /user name is empty|permission denied|invalid auth token/i;
const USER_NOT_FOUND = /user name not found/i;
const USER_EXISTS = /user name already exists/i;

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

export function createAuthActivities(deps: AuthActivityDeps) {
  const { kube } = deps;

  /** Voters' client URLs (learners refuse auth RPCs), by the one rule in activities/call-targets.ts. */
  const endpointsOf = (ref: ClusterRef) => clusterCallEndpoints(kube, ref);

  async function call<T>(ref: ClusterRef, fn: (c: Etcd3) => Promise<T>): Promise<T> {
    return withEtcdClient(deps.etcd, await endpointsOf(ref), fn, AUTH_CALL_TIMEOUT_MS);
  }

  /** Calls etcd as root with this password instead of the one the connection contributor chose. */
  function rotationIO(ref: ClusterRef): RotationIO {
    return {
      async withPassword(password, fn) {
        const options: EtcdAdminOptions = {
          ...deps.etcd,
          connectionFor: async (hosts) => ({
            ...(deps.etcd.connectionFor ? await deps.etcd.connectionFor(hosts) : {}),
            auth: { username: ROOT_USER, password },
          }),
        };
        return withEtcdClient(options, await endpointsOf(ref), fn, AUTH_CALL_TIMEOUT_MS);
      },
      record: (password) => writeAppliedPassword(kube, ref, password),
    };
  }

  async function usableCredentials(ref: ClusterRef): Promise<Extract<RootCredentials, { ok: true }>> {
    const c = await readRootCredentials(kube, ref);
    if (!c.ok) throw new Error(c.problem ?? `EtcdCluster ${ref.namespace}/${ref.name} has no spec.auth`);
    return c;
  }

  return {
    /** Reads the Secret's usability and etcd's auth status, root user and its roles; never changes anything. */
    async observeAuth(input: { ref: ClusterRef }): Promise<AuthObservation> {
      const { ref } = input;
      const creds = await readRootCredentials(kube, ref);
      const secretProblem = creds.ok ? undefined : creds.problem;
      const withSecret = (etcd: EtcdAuthState): AuthObservation => ({
        ...(secretProblem ? { secretProblem } : {}),
        etcd,
      });
      const appliedPassword = creds.ok ? await readAppliedPassword(kube, ref) : undefined;
      const appliedState = (): AuthObservation['applied'] =>
        !creds.ok
          ? undefined
          : appliedPassword === undefined
            ? 'missing'
            : appliedPassword === creds.password
              ? 'current'
              : 'stale';
      if ((await endpointsOf(ref)).length === 0)
        return withSecret({ state: 'unknown', message: 'no member Pod runs' });
      try {
        const status = await call(ref, (c) => c.auth.authStatus());
        if (status.enabled) {
          const applied = appliedState();
          return { ...withSecret({ state: 'enabled' }), ...(applied ? { applied } : {}) };
        }
        try {
          const user = await call(ref, (c) => c.auth.userGet({ name: ROOT_USER }));
          return withSecret({ state: 'disabled', rootUser: true, rootRole: user.roles.includes(ROOT_USER) });
        } catch (err) {
          if (USER_NOT_FOUND.test(message(err)))
            return withSecret({ state: 'disabled', rootUser: false, rootRole: false });
          throw err;
        }
      } catch (err) {
        const text = message(err);
        if (AUTH_FAILED.test(text)) {
          // The contributor used the applied copy: the Secret's password may be the one etcd has (changed by hand).
          if (creds.ok && appliedPassword !== undefined && appliedPassword !== creds.password) {
            if ((await checkPassword(rotationIO(ref), creds.password)) === 'accepted')
              return { ...withSecret({ state: 'enabled' }), applied: 'stale' };
            return withSecret({
              state: 'rejected',
              message: `etcd refuses both the root password of the Secret named by spec.auth.rootSecretRef and the one the operator last applied (Secret ${ref.namespace}/${appliedSecretName(ref.name)}), so the new password cannot be applied (${text}); put the password etcd's root user has into the Secret named by spec.auth.rootSecretRef`,
            });
          }
          return withSecret({
            state: 'rejected',
            message: `etcd refuses the root credentials of the Secret named by spec.auth.rootSecretRef (${text}); put the password etcd's root user has into the Secret`,
          });
        }
        if (NO_CREDENTIALS.test(text)) {
          return withSecret({
            state: 'rejected',
            message: `etcd has auth enabled and the operator has no usable root credentials (${secretProblem ?? text})`,
          });
        }
        return withSecret({ state: 'unknown', message: `etcd did not answer about auth: ${text}` });
      }
    },

    /** UserAdd root with the Secret's password; a root user that exists already counts as added. */
    async addRootUser(input: { ref: ClusterRef }): Promise<'added' | 'exists'> {
      const { password } = await usableCredentials(input.ref);
      try {
        await call(input.ref, (c) => c.auth.userAdd({ name: ROOT_USER, password }));
        return 'added';
      } catch (err) {
        if (USER_EXISTS.test(message(err))) return 'exists';
        throw err;
      }
    },

    /** UserGrantRole root -> root; granting a role the user has is a no-op in etcd. */
    async grantRootRole(input: { ref: ClusterRef }): Promise<void> {
      await call(input.ref, (c) => c.auth.userGrantRole({ user: ROOT_USER, role: ROOT_USER }));
    },

    /**
     * Sets root's password to the Secret's (a root user made by someone else may have another), then AuthEnable.
     * Both are idempotent: etcd accepts the same password again and enabling auth that is on is a no-op.
     */
    async enableAuth(input: { ref: ClusterRef }): Promise<void> {
      const { password } = await usableCredentials(input.ref);
      await call(input.ref, async (c) => {
        await c.auth.userChangePassword({ name: ROOT_USER, password });
        await c.auth.authEnable();
      });
      // After etcd has it: a crash before this leaves the copy missing, and RotateAuth records it later.
      await writeAppliedPassword(kube, input.ref, password);
    },

    /**
     * Applies the Secret's root password to etcd (RotateAuth): authenticates with the applied copy and calls
     * UserChangePassword, or only records the copy when etcd already accepts the Secret's password.
     */
    async rotateRootPassword(input: { ref: ClusterRef }): Promise<RotationResult> {
      const { password } = await usableCredentials(input.ref);
      const applied = await readAppliedPassword(kube, input.ref);
      return applyRootPassword(rotationIO(input.ref), password, applied);
    },
  };
}

export type AuthActivities = ReturnType<typeof createAuthActivities>;
