// The EtcdSnapshot API as TypeScript: mirrors crds/etcdsnapshot.yaml field for field (etcd-snapshot.test.ts proves it).
import type { Condition, Toleration } from './etcd-cluster';
import { API_GROUP } from './etcd-cluster';

/** Names of the EtcdSnapshot kind, for clients, informers and RBAC. */
export const ETCD_SNAPSHOT = {
  kind: 'EtcdSnapshot',
  listKind: 'EtcdSnapshotList',
  plural: 'etcdsnapshots',
  singular: 'etcdsnapshot',
  shortNames: ['etcdsnap'],
  crdName: `etcdsnapshots.${API_GROUP}`,
} as const;

/** Labels on the objects snapshots own or belong to. */
export const SnapshotLabels = {
  /** On a snapshot Job: the EtcdSnapshot it works for. */
  snapshot: `${API_GROUP}/snapshot`,
  /** On an EtcdSnapshot a schedule created: the EtcdSnapshotSchedule's name. */
  schedule: `${API_GROUP}/snapshot-schedule`,
} as const;

export const SNAPSHOT_PHASES = ['Pending', 'Running', 'Succeeded', 'Failed'] as const;
export type SnapshotPhase = (typeof SNAPSHOT_PHASES)[number];

/** Condition types of an EtcdSnapshot. */
export const SnapshotConditionTypes = {
  /** True once the artifact is stored and recorded; False says why not (yet). */
  Ready: 'Ready',
  /** True once the stored snapshot was read back, restored and checked; False says what was wrong; Unknown while it runs. */
  Verified: 'Verified',
} as const;

/**
 * A stored snapshot may be checked again: set this annotation to a new value (a date, a counter) and the operator
 * runs another verification; status.verification.request echoes the value once it ran.
 */
export const VERIFY_REQUEST_ANNOTATION = `${API_GROUP}/verify-request`;

export interface ObjectNameRef {
  name: string;
}

/** An S3 bucket location; the Secret holds AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY. */
export interface S3Location {
  /** http(s) URL of the S3 service. */
  endpoint: string;
  bucket: string;
  /** A key prefix for snapshots (defaulted to ""); the full object key for a restore source. */
  key: string;
  region: string;
  /** Defaulted to false. */
  forcePathStyle: boolean;
  credentialsSecretRef: ObjectNameRef;
}

/** A folder (for snapshots) or a file (for a restore source) on a PersistentVolumeClaim. */
export interface PvcLocation {
  claimName: string;
  /** Relative; defaulted to "". */
  subPath: string;
}

/** Exactly one of s3 or pvc (CEL enforces it). */
export interface SnapshotDestination {
  s3?: S3Location;
  pvc?: PvcLocation;
}

/**
 * Where a snapshot's (or a schedule's) Jobs run, in place of the cluster's placement: each field given replaces the
 * cluster's own (an empty one clears it), a field left out keeps the cluster's.
 */
export interface JobPlacementOverride {
  nodeSelector?: Record<string, string>;
  tolerations?: Toleration[];
  priorityClassName?: string;
  nodeAffinity?: Record<string, unknown>;
}

export interface EtcdSnapshotSpec {
  clusterRef: ObjectNameRef;
  destination: SnapshotDestination;
  jobPlacement?: JobPlacementOverride;
}

/** The stored snapshot as the agent reported it; what a restore verifies against. */
export interface SnapshotArtifact {
  /** s3://bucket/key or pvc://claim/subPath/name.db */
  uri: string;
  size: number;
  /** 64 lowercase hex digits. */
  sha256: string;
  revision: number;
  etcdVersion: string;
  /** RFC 3339. */
  takenAt: string;
}

/** What the last verification of the stored snapshot found; docs/backup-restore.md explains each figure. */
export interface SnapshotVerificationStatus {
  /** The verification Job (its Pod's log has the agent's line). */
  jobName: string;
  /** 1 for the check after upload, then one more for every re-check. */
  run: number;
  /** The value of the verify-request annotation this run answered; absent for the check after upload. */
  request?: string;
  /** RFC 3339, when the result was read. */
  verifiedAt?: string;
  /** The revision the restored member serves. */
  revision?: number;
  /** Keys it holds at that revision. */
  keys?: number;
  /** The revision hashed: the artifact's revision, unless compacted away in the snapshot. */
  hashRevision?: number;
  /** hashkv of the restored member at hashRevision. */
  hash?: number;
  compactRevision?: number;
  /** hashkv of the member the snapshot came from at the artifact's revision, asked right after the upload. */
  sourceHash?: number;
  sourceCompactRevision?: number;
}

export interface EtcdSnapshotStatus {
  phase?: SnapshotPhase;
  workflowId?: string;
  jobName?: string;
  attempts?: number;
  /** RFC 3339. */
  startedAt?: string;
  /** RFC 3339. */
  finishedAt?: string;
  conditions?: Condition[];
  artifact?: SnapshotArtifact;
  verification?: SnapshotVerificationStatus;
}

export interface SnapshotMetadata {
  name: string;
  namespace: string;
  uid?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string }[];
}

export interface EtcdSnapshot {
  apiVersion: string;
  kind: typeof ETCD_SNAPSHOT.kind;
  metadata: SnapshotMetadata;
  spec: EtcdSnapshotSpec;
  status?: EtcdSnapshotStatus;
}

/** A finished snapshot is never worked on again. */
export const isFinished = (phase: SnapshotPhase | undefined): boolean =>
  phase === 'Succeeded' || phase === 'Failed';
