// What the quorum-loss activities report to the workflows: each survivor's own answer and the newest backup.
// Plain data; the decisions on it live in workflows/quorum-loss.ts.

/** What one surviving member says about itself without a quorum (Maintenance.Status answers alone). */
export interface SurvivorProbe {
  name: string;
  answered: boolean;
  /** Decimal member id. */
  id?: string;
  /** The newest revision this member applied (its status header). */
  revision?: string;
  raftIndex?: string;
  isLearner?: boolean;
  /** Why it did not answer. */
  error?: string;
  /**
   * This answer is the member's own from an earlier look: it did not answer this one (workflows/quorum-loss.ts
   * withEarlierAnswers). Good enough to show; never enough to act on.
   */
  earlier?: true;
}

/** The newest snapshot of the cluster that succeeded (EtcdSnapshot status.artifact). */
export interface BackupPoint {
  snapshot: string;
  revision: number;
  takenAt: string;
  uri: string;
  /** The snapshot's Verified condition status, when it was checked. */
  verified?: 'True' | 'False' | 'Unknown';
}

/** What the planner knows of a permanent loss beyond Kubernetes' objects (asked by the cluster workflow). */
export interface LossFindings {
  survivors: SurvivorProbe[];
  /** The newest snapshot of this cluster that succeeded; absent when none did. */
  backup?: BackupPoint;
  /** The newest snapshot that succeeded and did not fail its check (Verified not False): what a rebuild may use. */
  restorable?: BackupPoint;
  /** With spec.backup.continuous: the newest point status.backup said is safe in the store. */
  continuous?: { revision: number; time?: string };
  /** The EtcdSnapshots could not be listed at this look (why): `backup` and `restorable` say nothing then. */
  snapshotsUnread?: string;
}
