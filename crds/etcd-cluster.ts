// The EtcdCluster API as TypeScript: mirrors crds/etcdcluster.yaml field for field (etcd-cluster.test.ts proves it).
// Over 400 lines on purpose: it is as long as the API is, and one file per CRD keeps the mirror test one-to-one.

/** API group and version of every kind the operator serves; defined here once. */
export const API_GROUP = 'etcd.conductor.dev';
export const API_VERSION_NAME = 'v1alpha1';
export const API_VERSION = `${API_GROUP}/${API_VERSION_NAME}` as const;

/** Names of the EtcdCluster kind, for clients, informers and RBAC. */
export const ETCD_CLUSTER = {
  kind: 'EtcdCluster',
  listKind: 'EtcdClusterList',
  plural: 'etcdclusters',
  singular: 'etcdcluster',
  shortNames: ['etcd'],
  crdName: `etcdclusters.${API_GROUP}`,
} as const;

/** Defaults the apiserver applies (the schema's `default`s); the same values, for code that builds specs. */
export const ETCD_CLUSTER_DEFAULTS = {
  replicas: 3,
  version: '3.6.16',
  storage: { size: '1Gi', medium: '' },
  progressDeadlineSeconds: 600,
} as const satisfies Pick<EtcdClusterSpec, 'replicas' | 'version' | 'storage' | 'progressDeadlineSeconds'>;

/** Bounds the schema enforces. */
export const ETCD_CLUSTER_LIMITS = {
  minReplicas: 0,
  maxReplicas: 9,
  minProgressDeadlineSeconds: 30,
  /** 24 h: past it an operation is Stalled; the CEL rule on spec.progressDeadlineSeconds says so. */
  maxProgressDeadlineSeconds: 86400,
} as const;

/**
 * etcd flags the operator sets itself and `spec.options` may not override: identity, URLs, the initial
 * cluster, discovery, the learner limit and strict reconfig checks (the planner relies on both), and TLS
 * (owned by spec.tls once it exists). The CEL rule in the YAML lists exactly these.
 */
export const OPERATOR_OWNED_FLAGS = [
  'name',
  'data-dir',
  'wal-dir',
  'listen-client-urls',
  'listen-client-http-urls',
  'listen-peer-urls',
  'listen-metrics-urls',
  'advertise-client-urls',
  'initial-advertise-peer-urls',
  'initial-cluster',
  'initial-cluster-state',
  'initial-cluster-token',
  'force-new-cluster',
  'discovery',
  'discovery-srv',
  'discovery-srv-name',
  'discovery-endpoints',
  'discovery-token',
  'config-file',
  'max-learners',
  'strict-reconfig-check',
  'cert-file',
  'key-file',
  'trusted-ca-file',
  'client-cert-auth',
  'auto-tls',
  'peer-cert-file',
  'peer-key-file',
  'peer-trusted-ca-file',
  'peer-client-cert-auth',
  'peer-auto-tls',
] as const;

export const STORAGE_MEDIA = ['', 'Memory'] as const;
export type StorageMedium = (typeof STORAGE_MEDIA)[number];

export const MEMBER_ROLES = ['voter', 'learner'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

/** The operations the cluster workflow runs as child workflows, one at a time. */
export const OPERATION_TYPES = [
  'Bootstrap',
  'ScaleUp',
  'ScaleDown',
  'Heal',
  'Pause',
  'Resume',
  'Upgrade',
  'Downgrade',
  'Rollout',
  'EnableAuth',
  'Defrag',
  'RotateAuth',
  'Recover',
  'Rebuild',
] as const;
export type OperationType = (typeof OPERATION_TYPES)[number];

export const OPERATION_RESULTS = ['Succeeded', 'Failed', 'Cancelled', 'DeadlineExceeded'] as const;
export type OperationResult = (typeof OPERATION_RESULTS)[number];

export const CONDITION_STATUSES = ['True', 'False', 'Unknown'] as const;
export type ConditionStatus = (typeof CONDITION_STATUSES)[number];

/** A Kubernetes quantity: the apiserver keeps whichever form the user wrote ("1Gi" or 1073741824). */
export type Quantity = string | number;

export interface EtcdStorageSpec {
  /** Defaulted to 1Gi; may grow, never shrink. */
  size: Quantity;
  /** Immutable once set. */
  storageClassName?: string;
  /** Defaulted to ""; immutable. */
  medium: StorageMedium;
}

/** Core ResourceRequirements. */
export interface ResourceRequirements {
  limits?: Record<string, Quantity>;
  requests?: Record<string, Quantity>;
  claims?: { name: string; request?: string }[];
}

/** Core TopologySpreadConstraint; fields beyond the three required ones pass through unchecked. */
export interface TopologySpreadConstraint {
  maxSkew: number;
  topologyKey: string;
  whenUnsatisfiable: 'DoNotSchedule' | 'ScheduleAnyway';
  [passThrough: string]: unknown;
}

/** Core Toleration. */
export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal';
  value?: string;
  effect?: '' | 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
  tolerationSeconds?: number;
}

/** An S3 object to restore from; the same shape as an EtcdSnapshot's destination.s3, with `key` the full object key. */
export interface RestoreS3Source {
  endpoint: string;
  bucket: string;
  key: string;
  region: string;
  /** Defaulted to false. */
  forcePathStyle: boolean;
  /** A Secret holding AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY. */
  credentialsSecretRef: { name: string };
}

/** A snapshot file on a claim: `subPath` is the file's relative path. */
export interface RestorePvcSource {
  claimName: string;
  subPath: string;
}

/** The continuous backup of a cluster (its spec.backup.continuous) to restore from. */
export interface ContinuousRestoreSource {
  destination: { s3: BackupS3Location };
  /** The source cluster: its archive is under <s3.key>/continuous/<uid>/; the uid is read from it while it exists. */
  cluster: { name: string; namespace?: string; uid?: string };
}

/** Exactly one of snapshotRef, s3, pvc or continuous; sha256 with s3 or pvc only (CEL enforces both). */
export interface RestoreSource {
  /** An EtcdSnapshot in the same namespace; its status.artifact gives the location and sha256. */
  snapshotRef?: { name: string };
  s3?: RestoreS3Source;
  pvc?: RestorePvcSource;
  continuous?: ContinuousRestoreSource;
  /** 64 hex digits, either case. */
  sha256?: string;
}

/** Exactly one of revision or time (CEL). */
export interface PointInTime {
  revision?: number;
  /** RFC 3339. */
  time?: string;
}

export interface EtcdClusterRestore {
  source: RestoreSource;
  /** With source.continuous only (CEL); left out: the newest point. */
  pointInTime?: PointInTime;
}

/**
 * The point to roll the cluster back to in place; exactly one of pointInTime (this cluster's continuous backup) or
 * snapshotRef (CEL). Acted on only while the approve-rollback annotation names the cluster's uid.
 */
export interface EtcdClusterRollback {
  pointInTime?: PointInTime;
  snapshotRef?: { name: string };
}

/** How the first member starts; immutable once the EtcdCluster exists. */
export interface EtcdClusterBootstrap {
  restore?: EtcdClusterRestore;
}

/** An S3 bucket location for snapshots; the same shape as an EtcdSnapshot's destination.s3 (key is a prefix). */
export interface BackupS3Location {
  endpoint: string;
  bucket: string;
  /** Key prefix, defaulted to "". */
  key: string;
  region: string;
  /** Defaulted to false. */
  forcePathStyle: boolean;
  /** A Secret holding AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY. */
  credentialsSecretRef: { name: string };
}

/** A folder on a claim; subPath defaulted to "". */
export interface BackupPvcLocation {
  claimName: string;
  subPath: string;
}

/** Exactly one of s3 or pvc (CEL enforces it); structurally an EtcdSnapshot destination. */
export interface BackupDestination {
  s3?: BackupS3Location;
  pvc?: BackupPvcLocation;
}

/**
 * Continuous backup (docs/backup-restore.md): full snapshots at least every fullSnapshotInterval and every change in
 * between, uploaded at most maxLagSeconds after it happened; needs destination.s3 (CEL). Durations are Go-style hours,
 * minutes and seconds ("1h", "90m").
 */
export interface ContinuousBackupSpec {
  /** Defaulted to 1h; at least 1m. */
  fullSnapshotInterval: string;
  /** 1..300; defaulted to 5. */
  maxLagSeconds: number;
  /** How long every point stays restorable; defaulted to 168h; at least 1h and at least fullSnapshotInterval. */
  retention: string;
}

/** The schema's defaults of spec.backup.continuous. */
export const CONTINUOUS_BACKUP_DEFAULTS = {
  fullSnapshotInterval: '1h',
  maxLagSeconds: 5,
  retention: '168h',
} as const satisfies ContinuousBackupSpec;

/** Snapshots the operator takes on its own (before an upgrade) go here, and the continuous backup when it is on. */
export interface EtcdClusterBackup {
  destination: BackupDestination;
  continuous?: ContinuousBackupSpec;
}

/** A cert-manager issuer that signs the cluster's certificates (docs/operations.md "TLS"). */
export interface CertManagerIssuerRef {
  name: string;
  /** Defaulted to Issuer. */
  kind: 'Issuer' | 'ClusterIssuer';
  /** Defaulted to cert-manager.io. */
  group: string;
}

/**
 * Exactly one of secretName (a kubernetes.io/tls Secret with tls.crt, tls.key and ca.crt) or issuerRef
 * (cert-manager issues the Secret); CEL enforces it.
 */
export interface EtcdPeerTLS {
  secretName?: string;
  issuerRef?: CertManagerIssuerRef;
}

/** Client TLS; members then require client certificates, so the operator needs one too (operatorSecretName). */
export interface EtcdClientTLS extends EtcdPeerTLS {
  /** The operator's (and snapshot Jobs') client certificate; required with secretName, issued with issuerRef. */
  operatorSecretName?: string;
}

/** The values spec.tls.mode takes: Auto has the operator make a CA and every certificate itself. */
export const TLS_MODES = ['Auto'] as const;
export type TLSMode = (typeof TLS_MODES)[number];

/**
 * Lifetimes of operator-made certificates (spec.tls.mode Auto), as Go-style durations of hours, minutes and
 * seconds ("2160h", "90m", "1h30m"); CEL keeps renewBefore < certificateDuration <= caDuration.
 */
export interface AutoTLSLifetimes {
  /** Defaulted to 43800h (5 years). */
  caDuration: string;
  /** Peer, serving and client certificates; defaulted to 2160h (90 days). */
  certificateDuration: string;
  /** A certificate (or the CA) is renewed this long before it expires; defaulted to 720h (30 days). */
  renewBefore: string;
}

/** The schema's defaults of spec.tls.auto, also what applies when mode Auto comes without it. */
export const AUTO_TLS_DEFAULTS = {
  caDuration: '43800h',
  certificateDuration: '2160h',
  renewBefore: '720h',
} as const satisfies AutoTLSLifetimes;

/**
 * TLS of member-to-member and client traffic; each half can be turned on only when the cluster is created.
 * Either mode Auto (the operator makes the CA and the certificates; peer and client left out) or peer/client.
 */
export interface EtcdClusterTLS {
  mode?: TLSMode;
  /** Only with mode Auto. */
  auto?: AutoTLSLifetimes;
  peer?: EtcdPeerTLS;
  client?: EtcdClientTLS;
}

/** etcd authentication; the Secret's values are read only inside the operator's worker process. */
export interface EtcdClusterAuth {
  /** Same namespace; keys `password` and optionally `username` (must be root). Immutable. */
  rootSecretRef: { name: string };
}

/**
 * When members are defragmented (workflows/defrag-plan.ts): on a cron schedule, when a member's database is
 * more than thresholdPercent free space, or both. CEL requires at least one of the two.
 */
export interface EtcdDefragSpec {
  /** Five-field cron in UTC (e.g. "0 3 * * *") or @hourly/@daily/@weekly/@monthly; every member is defragmented. */
  schedule?: string;
  /** 1..99: defragment a member when (dbSize - dbSizeInUse) / dbSize exceeds this many percent. */
  thresholdPercent?: number;
  /** Defaulted to 100Mi: a smaller database is never defragmented for the threshold (it would only churn). */
  minDbSize: Quantity;
}

/** Routine upkeep of the members' databases. */
export interface EtcdMaintenanceSpec {
  defrag?: EtcdDefragSpec;
}

/**
 * What the user asks for. Fields with a schema default are required here because the apiserver always
 * fills them in before anyone reads the object.
 */
/** A mirror of quay.io/coreos/etcd (tag v<version> appended), or one whole reference carrying that tag. */
export interface EtcdImageSpec {
  repository?: string;
  /** e.g. registry.example.com/etcd:v3.6.16@sha256:...; the apiserver checks it carries spec.version's tag. */
  ref?: string;
}

/** spec.additionalMetadata: the operator's own keys win on conflict, and the CRD refuses RESERVED_LABELS and the API group's prefix. */
export interface AdditionalMetadata {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** Label keys the operator sets on its objects besides its own `etcd.conductor.dev/` prefix: additionalMetadata may not use them. */
export const RESERVED_LABELS = [
  'app.kubernetes.io/name',
  'app.kubernetes.io/instance',
  'app.kubernetes.io/managed-by',
] as const;

/** True for a label (or annotation) key only the operator may set on its objects. */
export function reservedMetadataKey(key: string, kind: 'label' | 'annotation'): boolean {
  if (key.startsWith(`${API_GROUP}/`)) return true;
  return kind === 'label' && (RESERVED_LABELS as readonly string[]).includes(key);
}

export interface EtcdClusterSpec {
  /** 0..9; 0 pauses the cluster and keeps its last member's data. */
  replicas: number;
  /** major.minor.patch, e.g. 3.6.16; a change runs an Upgrade (workflows/upgrade-path.ts has the rules). */
  version: string;
  storage: EtcdStorageSpec;
  resources?: ResourceRequirements;
  /** Core Affinity, passed through to member Pods. */
  affinity?: Record<string, unknown>;
  topologySpreadConstraints?: TopologySpreadConstraint[];
  nodeSelector?: Record<string, string>;
  tolerations?: Toleration[];
  priorityClassName?: string;
  /** Where member Pods pull etcd from (activities/etcd-images.ts memberImage); Jobs run the operator's image. */
  image?: EtcdImageSpec;
  /** Pull Secrets for member Pods and the cluster's Jobs. */
  imagePullSecrets?: { name: string }[];
  /** Labels and annotations on every object the operator creates for the cluster (activities/additional-metadata.ts). */
  additionalMetadata?: AdditionalMetadata;
  /** Pod-only extras on top of additionalMetadata. */
  podLabels?: Record<string, string>;
  podAnnotations?: Record<string, string>;
  /** Extra etcd flags by name without dashes; never one of OPERATOR_OWNED_FLAGS. */
  options?: Record<string, string>;
  /** Per operation; at least 30. */
  progressDeadlineSeconds: number;
  /** Immutable: how the seed member starts (e.g. from a snapshot). */
  bootstrap?: EtcdClusterBootstrap;
  /** Roll back in place to this point once approved (docs/backup-restore.md). */
  rollback?: EtcdClusterRollback;
  /** Where a pre-upgrade snapshot is stored; without it an upgrade takes none. */
  backup?: EtcdClusterBackup;
  /** Peer and client TLS; immutable on/off (docs/operations.md "TLS"). */
  tls?: EtcdClusterTLS;
  /** Root credentials from a Secret; once set it cannot be removed (CEL). */
  auth?: EtcdClusterAuth;
  /** Defragmentation; a NOSPACE alarm is cleared whether or not this is set. */
  maintenance?: EtcdMaintenanceSpec;
}

/** One etcd member as status shows it, keyed by its etcd member id. */
export interface MemberStatus {
  /** Decimal uint64: etcd member ids exceed 2^53, so never a JSON number. */
  id: string;
  /** The id in hex, as etcdctl prints it. */
  hexId?: string;
  name: string;
  role: MemberRole;
  ready: boolean;
  leader: boolean;
  /** etcd server version the member reports. */
  version?: string;
  /** Its Pod runs the spec's template and carries its additionalMetadata and podLabels/podAnnotations (absent when not known). */
  upToDate?: boolean;
  /** Bytes of the member's database file (Maintenance.Status dbSize). */
  dbSize?: number;
  /** Bytes of it in use; the rest is free pages a defragmentation gives back. */
  dbSizeInUse?: number;
  /**
   * Raft entries it is behind the leader, rounded down to a power of ten (0 within 100, the normal in-flight
   * window), so that status changes only when the lag does by an order of magnitude.
   */
  raftLag?: number;
  /** Why it is not well, in words: its Pod's problem, an etcd alarm it raised, or that it did not answer. */
  lastError?: string;
}

/** The standard metav1.Condition shape. */
export interface Condition {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
  /** RFC 3339; moves only when `status` flips. */
  lastTransitionTime: string;
  observedGeneration?: number;
}

export interface CurrentOperation {
  type: OperationType;
  workflowId: string;
  /** RFC 3339. */
  startedAt: string;
  /** The step in progress, as in the Temporal UI's current details. */
  step?: string;
}

export interface LastOperation {
  type: OperationType;
  result: OperationResult;
  /** RFC 3339. */
  finishedAt: string;
  message?: string;
  workflowId: string;
  /** The spec generation the operation worked toward; a halted operation is not restarted for the same one. */
  observedGeneration?: number;
}

/** What clients need to know of an auto-TLS cluster's certificates (spec.tls.mode Auto). */
export interface TLSStatus {
  /** The Secret (tls.crt, tls.key, ca.crt) clients use to reach the members: <cluster>-client-tls. */
  clientSecretName: string;
  /** RFC 3339: when the CA the operator made expires (it is renewed renewBefore ahead of that). */
  caNotAfter?: string;
  /** RFC 3339: when the first of the peer, serving and client certificates expires. */
  certificatesNotAfter?: string;
  /** RFC 3339: when the operator renews next (a certificate or the CA). */
  renewalTime?: string;
}

/** A stretch of revisions the continuous backup does not hold (the watch fell behind a compaction, the store refused writes). */
export interface BackupGap {
  /** The last revision restorable before it. */
  afterRevision: number;
  /** The first revision restorable after it (the full snapshot that closed it). */
  beforeRevision: number;
  afterTime: string;
  beforeTime: string;
  reason: 'compacted' | 'store' | 'restart';
}

/** What the continuous backup holds, read from the store (the archiver's state object). */
export interface BackupStatus {
  /** Every change up to this revision is in the store. */
  latestRevision?: number;
  /** RFC 3339: when the store was last known to hold everything etcd had. */
  latestTime?: string;
  /** How far the store was behind etcd when the operator last looked, in whole seconds (0 when current). */
  lagSeconds?: number;
  /** Gaps in the retained range, oldest first. */
  gaps: BackupGap[];
}

/** The point a restored cluster's first member was restored to, as its restore reported it once it succeeded. */
export interface RestoreStatus {
  /** The source's revision the restored data holds (a snapshot's newest revision, or the point in time reached). */
  revision?: number;
  /** RFC 3339; with source.continuous: when the source applied that revision (as the archiver received it). */
  time?: string;
  /** With source.continuous: leases the replay granted again (with their source ids and TTLs), besides the snapshot's. */
  leasesGranted?: number;
  /**
   * With source.continuous: keys restored without their lease, because the lease was granted before the full snapshot
   * the replay started from and was not in it (its keys would otherwise never expire). 0 when every lease was known.
   */
  keysWithoutLease?: number;
}

export interface EtcdClusterStatus {
  observedGeneration?: number;
  /** Members etcd lists (voters and learners); 0 while paused. */
  replicas?: number;
  /** Voters that answer and whose Pod is Ready. */
  readyReplicas?: number;
  /** Members whose Pod runs the spec's template (members[].upToDate); absent when not known. */
  updatedReplicas?: number;
  /** Label selector of the member Pods, for /scale. */
  selector?: string;
  /** Decimal uint64; the same across pause and resume. */
  clusterId?: string;
  /** URL of the voters-only client Service. */
  clientEndpoint?: string;
  /** The leading member's name, when etcd answered and one leads. */
  leader?: string;
  members?: MemberStatus[];
  conditions?: Condition[];
  currentOperation?: CurrentOperation;
  lastOperation?: LastOperation;
  /** With spec.tls.mode Auto: the client Secret and the certificates' expiry. */
  tls?: TLSStatus;
  /** With spec.backup.continuous: what the store holds. */
  backup?: BackupStatus;
  /** With spec.bootstrap.restore: the point reached. */
  restore?: RestoreStatus;
}

/** The metadata fields the operator reads; a subset of ObjectMeta so this module needs no client library. */
export interface EtcdClusterMetadata {
  name: string;
  namespace: string;
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface EtcdCluster {
  apiVersion: typeof API_VERSION;
  kind: typeof ETCD_CLUSTER.kind;
  metadata: EtcdClusterMetadata;
  spec: EtcdClusterSpec;
  status?: EtcdClusterStatus;
}
