// What the auth activities report to the planner (workflows/auth-plan.ts): states and words only, never a password.

/** What etcd says about its auth, as the planner needs it; no value of the Secret. */
export type EtcdAuthState =
  /** No voter answered (nothing runs yet, or no quorum): nothing can be said. */
  | { state: 'unknown'; message: string }
  /** Auth is on and etcd refuses the credentials the operator has (or that it has none). */
  | { state: 'rejected'; message: string }
  | { state: 'disabled'; rootUser: boolean; rootRole: boolean }
  | { state: 'enabled' };

export interface AuthObservation {
  /** Why the Secret spec.auth names cannot be used (missing, no password, another user); absent when it can. */
  secretProblem?: string;
  etcd: EtcdAuthState;
  /**
   * With auth enabled and a usable Secret: whether the operator's applied copy (the password etcd has) equals
   * the Secret's; 'stale' or 'missing' plans RotateAuth. Absent otherwise (and in histories from before it).
   */
  applied?: 'current' | 'stale' | 'missing';
}

/** What applying did: the password already worked (only the copy was written), etcd's was changed, or neither password is accepted. */
export type RotationResult = 'recorded' | 'changed' | 'rejected';
