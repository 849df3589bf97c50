// Proves crds/etcdcluster.yaml and crds/etcd-cluster.ts describe the same API: a field added on one side only fails here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  API_GROUP,
  API_VERSION_NAME,
  CONDITION_STATUSES,
  ETCD_CLUSTER,
  ETCD_CLUSTER_DEFAULTS,
  ETCD_CLUSTER_LIMITS,
  MEMBER_ROLES,
  OPERATION_RESULTS,
  OPERATION_TYPES,
  OPERATOR_OWNED_FLAGS,
  RESERVED_LABELS,
  reservedMetadataKey,
  STORAGE_MEDIA,
  TLS_MODES,
  AUTO_TLS_DEFAULTS,
  CONTINUOUS_BACKUP_DEFAULTS,
} from './etcd-cluster';
import type {
  AutoTLSLifetimes,
  TLSStatus,
  EtcdImageSpec,
  BackupDestination,
  BackupPvcLocation,
  BackupS3Location,
  CertManagerIssuerRef,
  Condition,
  EtcdClientTLS,
  EtcdClusterTLS,
  EtcdPeerTLS,
  EtcdClusterBackup,
  ContinuousBackupSpec,
  ContinuousRestoreSource,
  PointInTime,
  BackupStatus,
  RestoreStatus,
  BackupGap,
  EtcdClusterAuth,
  CurrentOperation,
  EtcdClusterBootstrap,
  EtcdClusterRestore,
  EtcdClusterRollback,
  EtcdClusterSpec,
  EtcdClusterStatus,
  EtcdDefragSpec,
  EtcdMaintenanceSpec,
  RestorePvcSource,
  RestoreS3Source,
  RestoreSource,
  EtcdStorageSpec,
  LastOperation,
  MemberStatus,
} from './etcd-cluster';
import { BackupReasons, Reasons } from './conditions';
import { Labels, clusterSelector, memberName, memberOrdinal } from './labels';
import type { Mirror, Schema } from '../test/support/schema-mirror';
import { at, loadCrd, mirrorOf } from '../test/support/schema-mirror';

const specFields = {
  replicas: { shape: 'integer', required: true },
  version: { shape: 'string', required: true },
  storage: { shape: 'object', required: true },
  resources: { shape: 'object', required: false },
  affinity: { shape: 'object', required: false },
  topologySpreadConstraints: { shape: 'array', required: false },
  nodeSelector: { shape: 'map', required: false },
  tolerations: { shape: 'array', required: false },
  priorityClassName: { shape: 'string', required: false },
  image: { shape: 'object', required: false },
  imagePullSecrets: { shape: 'array', required: false },
  additionalMetadata: { shape: 'object', required: false },
  podLabels: { shape: 'map', required: false },
  podAnnotations: { shape: 'map', required: false },
  options: { shape: 'map', required: false },
  progressDeadlineSeconds: { shape: 'integer', required: true },
  bootstrap: { shape: 'object', required: false },
  rollback: { shape: 'object', required: false },
  backup: { shape: 'object', required: false },
  tls: { shape: 'object', required: false },
  auth: { shape: 'object', required: false },
  maintenance: { shape: 'object', required: false },
} as const satisfies Mirror<EtcdClusterSpec>;

const tlsFields = {
  mode: { shape: 'string', required: false },
  auto: { shape: 'object', required: false },
  peer: { shape: 'object', required: false },
  client: { shape: 'object', required: false },
} as const satisfies Mirror<EtcdClusterTLS>;

const autoTLSFields = {
  caDuration: { shape: 'string', required: true },
  certificateDuration: { shape: 'string', required: true },
  renewBefore: { shape: 'string', required: true },
} as const satisfies Mirror<AutoTLSLifetimes>;

const tlsStatusFields = {
  clientSecretName: { shape: 'string', required: true },
  caNotAfter: { shape: 'string', required: false },
  certificatesNotAfter: { shape: 'string', required: false },
  renewalTime: { shape: 'string', required: false },
} as const satisfies Mirror<TLSStatus>;

const peerTLSFields = {
  secretName: { shape: 'string', required: false },
  issuerRef: { shape: 'object', required: false },
} as const satisfies Mirror<EtcdPeerTLS>;

const clientTLSFields = {
  ...peerTLSFields,
  operatorSecretName: { shape: 'string', required: false },
} as const satisfies Mirror<EtcdClientTLS>;

const issuerRefFields = {
  name: { shape: 'string', required: true },
  kind: { shape: 'string', required: true },
  group: { shape: 'string', required: true },
} as const satisfies Mirror<CertManagerIssuerRef>;

const authFields = {
  rootSecretRef: { shape: 'object', required: true },
} as const satisfies Mirror<EtcdClusterAuth>;

const imageFields = {
  repository: { shape: 'string', required: false },
  ref: { shape: 'string', required: false },
} as const satisfies Mirror<EtcdImageSpec>;

const maintenanceFields = {
  defrag: { shape: 'object', required: false },
} as const satisfies Mirror<EtcdMaintenanceSpec>;

const defragFields = {
  schedule: { shape: 'string', required: false },
  thresholdPercent: { shape: 'integer', required: false },
  minDbSize: { shape: 'quantity', required: true },
} as const satisfies Mirror<EtcdDefragSpec>;

const backupFields = {
  destination: { shape: 'object', required: true },
  continuous: { shape: 'object', required: false },
} as const satisfies Mirror<EtcdClusterBackup>;

const continuousFields = {
  fullSnapshotInterval: { shape: 'string', required: true },
  maxLagSeconds: { shape: 'integer', required: true },
  retention: { shape: 'string', required: true },
} as const satisfies Mirror<ContinuousBackupSpec>;

const backupStatusFields = {
  latestRevision: { shape: 'integer', required: false },
  latestTime: { shape: 'string', required: false },
  lagSeconds: { shape: 'integer', required: false },
  gaps: { shape: 'array', required: true },
} as const satisfies Mirror<BackupStatus>;

const restoreStatusFields = {
  revision: { shape: 'integer', required: false },
  time: { shape: 'string', required: false },
  leasesGranted: { shape: 'integer', required: false },
  keysWithoutLease: { shape: 'integer', required: false },
} as const satisfies Mirror<RestoreStatus>;

const backupGapFields = {
  afterRevision: { shape: 'integer', required: true },
  beforeRevision: { shape: 'integer', required: true },
  afterTime: { shape: 'string', required: true },
  beforeTime: { shape: 'string', required: true },
  reason: { shape: 'string', required: true },
} as const satisfies Mirror<BackupGap>;

const backupDestinationFields = {
  s3: { shape: 'object', required: false },
  pvc: { shape: 'object', required: false },
} as const satisfies Mirror<BackupDestination>;

const backupS3Fields = {
  endpoint: { shape: 'string', required: true },
  bucket: { shape: 'string', required: true },
  key: { shape: 'string', required: true },
  region: { shape: 'string', required: true },
  forcePathStyle: { shape: 'boolean', required: true },
  credentialsSecretRef: { shape: 'object', required: true },
} as const satisfies Mirror<BackupS3Location>;

const backupPvcFields = {
  claimName: { shape: 'string', required: true },
  subPath: { shape: 'string', required: true },
} as const satisfies Mirror<BackupPvcLocation>;

const bootstrapFields = {
  restore: { shape: 'object', required: false },
} as const satisfies Mirror<EtcdClusterBootstrap>;

const rollbackFields = {
  pointInTime: { shape: 'object', required: false },
  snapshotRef: { shape: 'object', required: false },
} as const satisfies Mirror<EtcdClusterRollback>;

const restoreFields = {
  source: { shape: 'object', required: true },
  pointInTime: { shape: 'object', required: false },
} as const satisfies Mirror<EtcdClusterRestore>;

const pointInTimeFields = {
  revision: { shape: 'integer', required: false },
  time: { shape: 'string', required: false },
} as const satisfies Mirror<PointInTime>;

const continuousSourceFields = {
  destination: { shape: 'object', required: true },
  cluster: { shape: 'object', required: true },
} as const satisfies Mirror<ContinuousRestoreSource>;

const continuousClusterFields = {
  name: { shape: 'string', required: true },
  namespace: { shape: 'string', required: false },
  uid: { shape: 'string', required: false },
} as const satisfies Mirror<ContinuousRestoreSource['cluster']>;

const restoreSourceFields = {
  snapshotRef: { shape: 'object', required: false },
  s3: { shape: 'object', required: false },
  pvc: { shape: 'object', required: false },
  continuous: { shape: 'object', required: false },
  sha256: { shape: 'string', required: false },
} as const satisfies Mirror<RestoreSource>;

const restoreS3Fields = {
  endpoint: { shape: 'string', required: true },
  bucket: { shape: 'string', required: true },
  key: { shape: 'string', required: true },
  region: { shape: 'string', required: true },
  forcePathStyle: { shape: 'boolean', required: true },
  credentialsSecretRef: { shape: 'object', required: true },
} as const satisfies Mirror<RestoreS3Source>;

const restorePvcFields = {
  claimName: { shape: 'string', required: true },
  subPath: { shape: 'string', required: true },
} as const satisfies Mirror<RestorePvcSource>;

const storageFields = {
  size: { shape: 'quantity', required: true },
  storageClassName: { shape: 'string', required: false },
  medium: { shape: 'string', required: true },
} as const satisfies Mirror<EtcdStorageSpec>;

const statusFields = {
  observedGeneration: { shape: 'integer', required: false },
  replicas: { shape: 'integer', required: false },
  readyReplicas: { shape: 'integer', required: false },
  updatedReplicas: { shape: 'integer', required: false },
  selector: { shape: 'string', required: false },
  clusterId: { shape: 'string', required: false },
  clientEndpoint: { shape: 'string', required: false },
  leader: { shape: 'string', required: false },
  members: { shape: 'array', required: false },
  conditions: { shape: 'array', required: false },
  currentOperation: { shape: 'object', required: false },
  lastOperation: { shape: 'object', required: false },
  tls: { shape: 'object', required: false },
  backup: { shape: 'object', required: false },
  restore: { shape: 'object', required: false },
} as const satisfies Mirror<EtcdClusterStatus>;

const memberFields = {
  id: { shape: 'string', required: true },
  hexId: { shape: 'string', required: false },
  name: { shape: 'string', required: true },
  role: { shape: 'string', required: true },
  ready: { shape: 'boolean', required: true },
  leader: { shape: 'boolean', required: true },
  version: { shape: 'string', required: false },
  upToDate: { shape: 'boolean', required: false },
  dbSize: { shape: 'integer', required: false },
  dbSizeInUse: { shape: 'integer', required: false },
  raftLag: { shape: 'integer', required: false },
  lastError: { shape: 'string', required: false },
} as const satisfies Mirror<MemberStatus>;

const conditionFields = {
  type: { shape: 'string', required: true },
  status: { shape: 'string', required: true },
  reason: { shape: 'string', required: true },
  message: { shape: 'string', required: true },
  lastTransitionTime: { shape: 'string', required: true },
  observedGeneration: { shape: 'integer', required: false },
} as const satisfies Mirror<Condition>;

const currentOperationFields = {
  type: { shape: 'string', required: true },
  workflowId: { shape: 'string', required: true },
  startedAt: { shape: 'string', required: true },
  step: { shape: 'string', required: false },
} as const satisfies Mirror<CurrentOperation>;

const lastOperationFields = {
  type: { shape: 'string', required: true },
  result: { shape: 'string', required: true },
  finishedAt: { shape: 'string', required: true },
  message: { shape: 'string', required: false },
  workflowId: { shape: 'string', required: true },
  observedGeneration: { shape: 'integer', required: false },
} as const satisfies Mirror<LastOperation>;

const crd = loadCrd('etcdcluster.yaml');
const version = crd.spec.versions[0];
const root: Schema = version.schema.openAPIV3Schema;

const sorted = <T>(xs: readonly T[]) => [...xs].sort();

describe('the EtcdCluster CRD and its TypeScript types', () => {
  test.each([
    ['spec', at(root, 'spec'), specFields],
    ['spec.storage', at(root, 'spec', 'storage'), storageFields],
    ['status', at(root, 'status'), statusFields],
    ['status.members[]', at(root, 'status', 'members', '[]'), memberFields],
    ['status.conditions[]', at(root, 'status', 'conditions', '[]'), conditionFields],
    ['status.currentOperation', at(root, 'status', 'currentOperation'), currentOperationFields],
    ['status.lastOperation', at(root, 'status', 'lastOperation'), lastOperationFields],
    ['spec.bootstrap', at(root, 'spec', 'bootstrap'), bootstrapFields],
    ['spec.bootstrap.restore', at(root, 'spec', 'bootstrap', 'restore'), restoreFields],
    [
      'spec.bootstrap.restore.source',
      at(root, 'spec', 'bootstrap', 'restore', 'source'),
      restoreSourceFields,
    ],
    [
      'spec.bootstrap.restore.source.s3',
      at(root, 'spec', 'bootstrap', 'restore', 'source', 's3'),
      restoreS3Fields,
    ],
    ['spec.backup', at(root, 'spec', 'backup'), backupFields],
    ['spec.rollback', at(root, 'spec', 'rollback'), rollbackFields],
    ['spec.rollback.pointInTime', at(root, 'spec', 'rollback', 'pointInTime'), pointInTimeFields],
    [
      'spec.bootstrap.restore.pointInTime',
      at(root, 'spec', 'bootstrap', 'restore', 'pointInTime'),
      pointInTimeFields,
    ],
    [
      'spec.bootstrap.restore.source.continuous',
      at(root, 'spec', 'bootstrap', 'restore', 'source', 'continuous'),
      continuousSourceFields,
    ],
    [
      'spec.bootstrap.restore.source.continuous.cluster',
      at(root, 'spec', 'bootstrap', 'restore', 'source', 'continuous', 'cluster'),
      continuousClusterFields,
    ],
    [
      'spec.bootstrap.restore.source.continuous.destination.s3',
      at(root, 'spec', 'bootstrap', 'restore', 'source', 'continuous', 'destination', 's3'),
      backupS3Fields,
    ],
    ['spec.backup.continuous', at(root, 'spec', 'backup', 'continuous'), continuousFields],
    ['status.backup', at(root, 'status', 'backup'), backupStatusFields],
    ['status.restore', at(root, 'status', 'restore'), restoreStatusFields],
    ['status.backup.gaps[]', at(root, 'status', 'backup', 'gaps', '[]'), backupGapFields],
    ['spec.tls', at(root, 'spec', 'tls'), tlsFields],
    ['spec.tls.auto', at(root, 'spec', 'tls', 'auto'), autoTLSFields],
    ['status.tls', at(root, 'status', 'tls'), tlsStatusFields],
    ['spec.tls.peer', at(root, 'spec', 'tls', 'peer'), peerTLSFields],
    ['spec.tls.client', at(root, 'spec', 'tls', 'client'), clientTLSFields],
    ['spec.tls.peer.issuerRef', at(root, 'spec', 'tls', 'peer', 'issuerRef'), issuerRefFields],
    ['spec.tls.client.issuerRef', at(root, 'spec', 'tls', 'client', 'issuerRef'), issuerRefFields],
    ['spec.image', at(root, 'spec', 'image'), imageFields],
    ['spec.maintenance', at(root, 'spec', 'maintenance'), maintenanceFields],
    ['spec.maintenance.defrag', at(root, 'spec', 'maintenance', 'defrag'), defragFields],
    ['spec.backup.destination', at(root, 'spec', 'backup', 'destination'), backupDestinationFields],
    ['spec.backup.destination.s3', at(root, 'spec', 'backup', 'destination', 's3'), backupS3Fields],
    ['spec.backup.destination.pvc', at(root, 'spec', 'backup', 'destination', 'pvc'), backupPvcFields],
    ['spec.auth', at(root, 'spec', 'auth'), authFields],
    [
      'spec.bootstrap.restore.source.pvc',
      at(root, 'spec', 'bootstrap', 'restore', 'source', 'pvc'),
      restorePvcFields,
    ],
  ])('%s has the same fields, shapes and optionality in YAML and TS', (_name, schema, fields) => {
    expect(mirrorOf(schema)).toEqual(fields);
  });

  test('spec.backup.destination has the schema of an EtcdSnapshot destination (descriptions aside)', () => {
    const snapshotCrd = loadCrd('etcdsnapshot.yaml');
    const snapshotRoot: Schema = snapshotCrd.spec.versions[0].schema.openAPIV3Schema;
    const strip = (s: Schema): unknown =>
      JSON.parse(
        JSON.stringify(s, (k, v: unknown) => (k === 'description' || k === 'message' ? undefined : v)),
      );
    expect(strip(at(root, 'spec', 'backup', 'destination'))).toEqual(
      strip(at(snapshotRoot, 'spec', 'destination')),
    );
  });

  test('names, group and version in the YAML are the TS constants', () => {
    expect(crd.metadata.name).toBe(ETCD_CLUSTER.crdName);
    expect(crd.spec.group).toBe(API_GROUP);
    expect(crd.spec.scope).toBe('Namespaced');
    expect(crd.spec.names).toEqual({
      kind: ETCD_CLUSTER.kind,
      listKind: ETCD_CLUSTER.listKind,
      plural: ETCD_CLUSTER.plural,
      singular: ETCD_CLUSTER.singular,
      shortNames: [...ETCD_CLUSTER.shortNames],
      categories: ['etcd-conductor'],
    });
    expect(crd.spec.versions).toHaveLength(1);
    expect(version).toMatchObject({ name: API_VERSION_NAME, served: true, storage: true });
  });

  test('schema defaults equal the TS default constants', () => {
    for (const [k, v] of Object.entries(AUTO_TLS_DEFAULTS))
      expect(at(root, 'spec', 'tls', 'auto', k).default).toBe(v);
    for (const [k, v] of Object.entries(CONTINUOUS_BACKUP_DEFAULTS))
      expect(at(root, 'spec', 'backup', 'continuous', k).default).toBe(v);
    expect(at(root, 'spec').default).toEqual({});
    expect(at(root, 'spec', 'storage').default).toEqual({});
    expect(at(root, 'spec', 'replicas').default).toBe(ETCD_CLUSTER_DEFAULTS.replicas);
    expect(at(root, 'spec', 'version').default).toBe(ETCD_CLUSTER_DEFAULTS.version);
    expect(at(root, 'spec', 'storage', 'size').default).toBe(ETCD_CLUSTER_DEFAULTS.storage.size);
    expect(at(root, 'spec', 'storage', 'medium').default).toBe(ETCD_CLUSTER_DEFAULTS.storage.medium);
    expect(at(root, 'spec', 'progressDeadlineSeconds').default).toBe(
      ETCD_CLUSTER_DEFAULTS.progressDeadlineSeconds,
    );
  });

  test('schema bounds equal the TS limits', () => {
    expect(at(root, 'spec', 'replicas')).toMatchObject({
      minimum: ETCD_CLUSTER_LIMITS.minReplicas,
      maximum: ETCD_CLUSTER_LIMITS.maxReplicas,
    });
    expect(at(root, 'spec', 'progressDeadlineSeconds').minimum).toBe(
      ETCD_CLUSTER_LIMITS.minProgressDeadlineSeconds,
    );
    // The maximum is a CEL rule, so the refusal can say what happens past it (Stalled) and what to do instead.
    const [deadline] = at(root, 'spec', 'progressDeadlineSeconds')['x-kubernetes-validations'] ?? [];
    expect(deadline?.rule).toBe(`self <= ${ETCD_CLUSTER_LIMITS.maxProgressDeadlineSeconds}`);
    expect(deadline?.message).toMatch(/at most 86400 \(24 h\).*Stalled/);
  });

  test.each([
    ['spec.storage.medium', ['spec', 'storage', 'medium'], STORAGE_MEDIA],
    ['spec.tls.mode', ['spec', 'tls', 'mode'], TLS_MODES],
    ['status.members[].role', ['status', 'members', '[]', 'role'], MEMBER_ROLES],
    ['status.conditions[].status', ['status', 'conditions', '[]', 'status'], CONDITION_STATUSES],
    ['status.currentOperation.type', ['status', 'currentOperation', 'type'], OPERATION_TYPES],
    ['status.lastOperation.type', ['status', 'lastOperation', 'type'], OPERATION_TYPES],
    ['status.lastOperation.result', ['status', 'lastOperation', 'result'], OPERATION_RESULTS],
  ])('the enum of %s is the TS list', (_name, path, values) => {
    expect(sorted(at(root, ...path).enum ?? [])).toEqual(sorted(values));
  });

  test('the options rule and its message refuse exactly the flags the TS list names', () => {
    // A static message: a messageExpression that filters the list exceeds the apiserver's CEL cost budget.
    const rules = at(root, 'spec', 'options')['x-kubernetes-validations'] ?? [];
    const owned = rules.find((r) => r.rule.includes("'data-dir'"));
    const listIn = (cel: string) =>
      [...(/\[([^\]]*)\]/.exec(cel)?.[1] ?? '').matchAll(/'([^']+)'/g)].map((m) => m[1]);
    expect(owned).toBeDefined();
    expect(listIn(owned?.rule ?? '')).toEqual([...OPERATOR_OWNED_FLAGS]);
    expect(owned?.message?.split(': ')[1]?.split(', ')).toEqual([...OPERATOR_OWNED_FLAGS]);
  });

  test('every CEL rule carries a message a user can act on', () => {
    const rules: { rule: string; message?: string }[] = [];
    const walk = (s: Schema) => {
      rules.push(...(s['x-kubernetes-validations'] ?? []));
      Object.values(s.properties ?? {}).forEach(walk);
      if (s.items) walk(s.items);
      if (s.additionalProperties) walk(s.additionalProperties);
    };
    walk(root);
    expect(rules.length).toBeGreaterThanOrEqual(8);
    for (const r of rules) expect(r.message?.length).toBeGreaterThan(20);
  });

  test.each([
    ['.spec.replicas', ['spec', 'replicas']],
    ['.status.readyReplicas', ['status', 'readyReplicas']],
    ['.spec.version', ['spec', 'version']],
    ['.status.currentOperation.type', ['status', 'currentOperation', 'type']],
  ])('printer column %s points at a schema field', (jsonPath, path) => {
    expect(version.additionalPrinterColumns.map((c: { jsonPath: string }) => c.jsonPath)).toContain(jsonPath);
    expect(() => at(root, ...path)).not.toThrow();
  });

  test('the scale subresource points at replicas and the selector', () => {
    expect(version.subresources).toEqual({
      status: {},
      scale: {
        specReplicasPath: '.spec.replicas',
        statusReplicasPath: '.status.replicas',
        labelSelectorPath: '.status.selector',
      },
    });
  });

  test('podLabels refuses the label prefix the operator selects by', () => {
    const rule = at(root, 'spec', 'podLabels')['x-kubernetes-validations']?.[0]?.rule ?? '';
    expect(Object.values(Labels).every((key) => key.startsWith(`${API_GROUP}/`))).toBe(true);
    expect(rule).toContain(`'${API_GROUP}/'`);
  });

  test("additionalMetadata refuses exactly the operator's keys, and the message names the key", () => {
    const labels = at(root, 'spec', 'additionalMetadata', 'labels')['x-kubernetes-validations'] ?? [];
    const annotations =
      at(root, 'spec', 'additionalMetadata', 'annotations')['x-kubernetes-validations'] ?? [];
    const [l] = labels as { rule: string; messageExpression?: string }[];
    const [a] = annotations as { rule: string; messageExpression?: string }[];
    for (const key of RESERVED_LABELS) expect(l?.rule).toContain(`'${key}'`);
    expect(l?.rule.match(/'app\.kubernetes\.io\/[a-z-]+'/g)).toEqual(RESERVED_LABELS.map((k) => `'${k}'`));
    expect(l?.rule).toContain(`'${API_GROUP}/'`);
    expect(a?.rule).toContain(`'${API_GROUP}/'`);
    // The refusal says which key: the messageExpression filters with the same condition as the rule.
    expect(l?.messageExpression).toContain(l?.rule.slice('!self.exists('.length, -1));
    expect(a?.messageExpression).toContain(a?.rule.slice('!self.exists('.length, -1));
    // The operator's own label keys are all reserved, so none of its selectors can be forged.
    for (const key of Object.values(Labels)) expect(reservedMetadataKey(key, 'label')).toBe(true);
    expect(reservedMetadataKey('app.kubernetes.io/part-of', 'label')).toBe(false);
    expect(reservedMetadataKey('app.kubernetes.io/name', 'annotation')).toBe(false);
  });
});

describe('member names and selectors', () => {
  test.each([
    ['main', 'main-0', 0],
    ['main', 'main-12', 12],
    ['main', 'main-1-0', undefined],
    ['main-1', 'main-1-0', 0],
    ['main', 'main-01', undefined],
    ['main', 'other-0', undefined],
    ['main', 'main-', undefined],
  ])('in cluster %s the name %s has ordinal %s', (cluster, name, ordinal) => {
    expect(memberOrdinal(cluster, name)).toBe(ordinal);
  });

  test('a generated member name parses back to its ordinal', () => {
    expect(memberOrdinal('main', memberName('main', 7))).toBe(7);
  });

  test('the selector selects by the cluster label', () => {
    expect(clusterSelector('main')).toBe('etcd.conductor.dev/cluster=main');
  });
});

describe('docs/status.md', () => {
  const doc = readFileSync(join(__dirname, '..', 'docs', 'status.md'), 'utf8');
  test.each([...Object.values(Reasons), ...Object.values(BackupReasons)])(
    'explains the reason %s',
    (reason) => {
      // A table row whose first cell is the reason; Prettier pads the cell, hence the spaces.
      expect(doc).toMatch(new RegExp(`^\\| \`${reason}\` +\\|`, 'm'));
    },
  );
});
