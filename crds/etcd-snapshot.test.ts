// Proves crds/etcdsnapshot.yaml and crds/etcdsnapshotschedule.yaml describe the same API as their TS types: a field added on one side only fails here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ScheduleReasons, SnapshotReasons, VerificationReasons } from './conditions';
import { API_GROUP, API_VERSION_NAME, CONDITION_STATUSES } from './etcd-cluster';
import type { Condition } from './etcd-cluster';
import type {
  EtcdSnapshotSpec,
  EtcdSnapshotStatus,
  JobPlacementOverride,
  ObjectNameRef,
  PvcLocation,
  S3Location,
  SnapshotArtifact,
  SnapshotVerificationStatus,
  SnapshotDestination,
} from './etcd-snapshot';
import { ETCD_SNAPSHOT, SNAPSHOT_PHASES } from './etcd-snapshot';
import type {
  EtcdSnapshotScheduleSpec,
  EtcdSnapshotScheduleStatus,
  SnapshotRetention,
} from './etcd-snapshot-schedule';
import { ETCD_SNAPSHOT_SCHEDULE, RETENTION_LIMITS } from './etcd-snapshot-schedule';
import type { Mirror, Schema } from '../test/support/schema-mirror';
import { at, loadCrd, mirrorOf } from '../test/support/schema-mirror';

const ref = { name: { shape: 'string', required: true } } as const satisfies Mirror<ObjectNameRef>;
const destinationFields = {
  s3: { shape: 'object', required: false },
  pvc: { shape: 'object', required: false },
} as const satisfies Mirror<SnapshotDestination>;
const s3Fields = {
  endpoint: { shape: 'string', required: true },
  bucket: { shape: 'string', required: true },
  key: { shape: 'string', required: true },
  region: { shape: 'string', required: true },
  forcePathStyle: { shape: 'boolean', required: true },
  credentialsSecretRef: { shape: 'object', required: true },
} as const satisfies Mirror<S3Location>;
const pvcFields = {
  claimName: { shape: 'string', required: true },
  subPath: { shape: 'string', required: true },
} as const satisfies Mirror<PvcLocation>;
const conditionFields = {
  type: { shape: 'string', required: true },
  status: { shape: 'string', required: true },
  reason: { shape: 'string', required: true },
  message: { shape: 'string', required: true },
  lastTransitionTime: { shape: 'string', required: true },
  observedGeneration: { shape: 'integer', required: false },
} as const satisfies Mirror<Condition>;

const snapshotSpecFields = {
  clusterRef: { shape: 'object', required: true },
  destination: { shape: 'object', required: true },
  jobPlacement: { shape: 'object', required: false },
} as const satisfies Mirror<EtcdSnapshotSpec>;
const jobPlacementFields = {
  nodeSelector: { shape: 'map', required: false },
  tolerations: { shape: 'array', required: false },
  priorityClassName: { shape: 'string', required: false },
  nodeAffinity: { shape: 'object', required: false },
} as const satisfies Mirror<JobPlacementOverride>;
const snapshotStatusFields = {
  phase: { shape: 'string', required: false },
  workflowId: { shape: 'string', required: false },
  jobName: { shape: 'string', required: false },
  attempts: { shape: 'integer', required: false },
  startedAt: { shape: 'string', required: false },
  finishedAt: { shape: 'string', required: false },
  conditions: { shape: 'array', required: false },
  artifact: { shape: 'object', required: false },
  verification: { shape: 'object', required: false },
} as const satisfies Mirror<EtcdSnapshotStatus>;
const verificationFields = {
  jobName: { shape: 'string', required: true },
  run: { shape: 'integer', required: true },
  request: { shape: 'string', required: false },
  verifiedAt: { shape: 'string', required: false },
  revision: { shape: 'integer', required: false },
  keys: { shape: 'integer', required: false },
  hashRevision: { shape: 'integer', required: false },
  hash: { shape: 'integer', required: false },
  compactRevision: { shape: 'integer', required: false },
  sourceHash: { shape: 'integer', required: false },
  sourceCompactRevision: { shape: 'integer', required: false },
} as const satisfies Mirror<SnapshotVerificationStatus>;
const artifactFields = {
  uri: { shape: 'string', required: true },
  size: { shape: 'integer', required: true },
  sha256: { shape: 'string', required: true },
  revision: { shape: 'integer', required: true },
  etcdVersion: { shape: 'string', required: true },
  takenAt: { shape: 'string', required: true },
} as const satisfies Mirror<SnapshotArtifact>;

const scheduleSpecFields = {
  clusterRef: { shape: 'object', required: true },
  schedule: { shape: 'string', required: true },
  destination: { shape: 'object', required: true },
  jobPlacement: { shape: 'object', required: false },
  retention: { shape: 'object', required: false },
  suspend: { shape: 'boolean', required: true },
} as const satisfies Mirror<EtcdSnapshotScheduleSpec>;
const retentionFields = {
  keepLast: { shape: 'integer', required: false },
  maxAge: { shape: 'string', required: false },
} as const satisfies Mirror<SnapshotRetention>;
const scheduleStatusFields = {
  observedGeneration: { shape: 'integer', required: false },
  scheduleId: { shape: 'string', required: false },
  lastScheduleTime: { shape: 'string', required: false },
  lastSnapshot: { shape: 'string', required: false },
  lastSuccessfulSnapshot: { shape: 'string', required: false },
  conditions: { shape: 'array', required: false },
} as const satisfies Mirror<EtcdSnapshotScheduleStatus>;

const snapshotCrd = loadCrd('etcdsnapshot.yaml');
const scheduleCrd = loadCrd('etcdsnapshotschedule.yaml');
const snap: Schema = snapshotCrd.spec.versions[0].schema.openAPIV3Schema;
const sched: Schema = scheduleCrd.spec.versions[0].schema.openAPIV3Schema;

function rulesOf(root: Schema): { rule: string; message?: string }[] {
  const rules: { rule: string; message?: string }[] = [];
  const walk = (s: Schema) => {
    rules.push(...(s['x-kubernetes-validations'] ?? []));
    Object.values(s.properties ?? {}).forEach(walk);
    if (s.items) walk(s.items);
  };
  walk(root);
  return rules;
}

describe('the EtcdSnapshot CRD and its TypeScript types', () => {
  test.each([
    ['spec', at(snap, 'spec'), snapshotSpecFields],
    ['spec.clusterRef', at(snap, 'spec', 'clusterRef'), ref],
    ['spec.destination', at(snap, 'spec', 'destination'), destinationFields],
    ['spec.destination.s3', at(snap, 'spec', 'destination', 's3'), s3Fields],
    [
      'spec.destination.s3.credentialsSecretRef',
      at(snap, 'spec', 'destination', 's3', 'credentialsSecretRef'),
      ref,
    ],
    ['spec.destination.pvc', at(snap, 'spec', 'destination', 'pvc'), pvcFields],
    ['spec.jobPlacement', at(snap, 'spec', 'jobPlacement'), jobPlacementFields],
    ['status', at(snap, 'status'), snapshotStatusFields],
    ['status.artifact', at(snap, 'status', 'artifact'), artifactFields],
    ['status.verification', at(snap, 'status', 'verification'), verificationFields],
    ['status.conditions[]', at(snap, 'status', 'conditions', '[]'), conditionFields],
  ])('%s has the same fields, shapes and optionality in YAML and TS', (_name, schema, fields) => {
    expect(mirrorOf(schema)).toEqual(fields);
  });

  test('names, group and version in the YAML are the TS constants', () => {
    expect(snapshotCrd.metadata.name).toBe(ETCD_SNAPSHOT.crdName);
    expect(snapshotCrd.spec.group).toBe(API_GROUP);
    expect(snapshotCrd.spec.scope).toBe('Namespaced');
    expect(snapshotCrd.spec.names).toEqual({
      kind: ETCD_SNAPSHOT.kind,
      listKind: ETCD_SNAPSHOT.listKind,
      plural: ETCD_SNAPSHOT.plural,
      singular: ETCD_SNAPSHOT.singular,
      shortNames: [...ETCD_SNAPSHOT.shortNames],
      categories: ['etcd-conductor'],
    });
    expect(snapshotCrd.spec.versions[0]).toMatchObject({
      name: API_VERSION_NAME,
      served: true,
      storage: true,
    });
    expect(snapshotCrd.spec.versions[0].subresources).toEqual({ status: {} });
  });

  test.each([
    ['status.phase', ['status', 'phase'], SNAPSHOT_PHASES],
    ['status.conditions[].status', ['status', 'conditions', '[]', 'status'], CONDITION_STATUSES],
  ])('the enum of %s is the TS list', (_name, path, values) => {
    expect([...(at(snap, ...path).enum ?? [])].sort()).toEqual([...values].sort());
  });

  test('the spec is immutable and the destination is exactly one of s3 or pvc', () => {
    expect(at(snap, 'spec')['x-kubernetes-validations']?.map((r) => r.rule)).toEqual(['self == oldSelf']);
    expect(at(snap, 'spec', 'destination')['x-kubernetes-validations']?.map((r) => r.rule)).toEqual([
      'has(self.s3) != has(self.pvc)',
    ]);
  });
});

describe('the EtcdSnapshotSchedule CRD and its TypeScript types', () => {
  test.each([
    ['spec', at(sched, 'spec'), scheduleSpecFields],
    ['spec.clusterRef', at(sched, 'spec', 'clusterRef'), ref],
    ['spec.destination', at(sched, 'spec', 'destination'), destinationFields],
    ['spec.destination.s3', at(sched, 'spec', 'destination', 's3'), s3Fields],
    ['spec.destination.pvc', at(sched, 'spec', 'destination', 'pvc'), pvcFields],
    ['spec.jobPlacement', at(sched, 'spec', 'jobPlacement'), jobPlacementFields],
    ['spec.retention', at(sched, 'spec', 'retention'), retentionFields],
    ['status', at(sched, 'status'), scheduleStatusFields],
    ['status.conditions[]', at(sched, 'status', 'conditions', '[]'), conditionFields],
  ])('%s has the same fields, shapes and optionality in YAML and TS', (_name, schema, fields) => {
    expect(mirrorOf(schema)).toEqual(fields);
  });

  test('the destination schema is the EtcdSnapshot one, so a schedule can hand it on unchanged', () => {
    expect(at(sched, 'spec', 'destination')).toEqual(at(snap, 'spec', 'destination'));
  });

  test('so is the jobPlacement schema (only its description names the schedule)', () => {
    expect(at(sched, 'spec', 'jobPlacement').properties).toEqual(at(snap, 'spec', 'jobPlacement').properties);
  });

  test('names, group and version in the YAML are the TS constants', () => {
    expect(scheduleCrd.metadata.name).toBe(ETCD_SNAPSHOT_SCHEDULE.crdName);
    expect(scheduleCrd.spec.group).toBe(API_GROUP);
    expect(scheduleCrd.spec.names).toEqual({
      kind: ETCD_SNAPSHOT_SCHEDULE.kind,
      listKind: ETCD_SNAPSHOT_SCHEDULE.listKind,
      plural: ETCD_SNAPSHOT_SCHEDULE.plural,
      singular: ETCD_SNAPSHOT_SCHEDULE.singular,
      shortNames: [...ETCD_SNAPSHOT_SCHEDULE.shortNames],
      categories: ['etcd-conductor'],
    });
    expect(scheduleCrd.spec.versions[0]).toMatchObject({
      name: API_VERSION_NAME,
      served: true,
      storage: true,
    });
  });

  test('retention bounds equal the TS limits and suspend defaults to false', () => {
    expect(at(sched, 'spec', 'retention', 'keepLast')).toMatchObject({
      minimum: RETENTION_LIMITS.minKeepLast,
      maximum: RETENTION_LIMITS.maxKeepLast,
    });
    expect(at(sched, 'spec', 'suspend').default).toBe(false);
  });
});

describe('CEL rules of both CRDs', () => {
  test.each([
    ['EtcdSnapshot', snap],
    ['EtcdSnapshotSchedule', sched],
  ])('every rule of %s carries a message a user can act on', (_name, root) => {
    const rules = rulesOf(root);
    expect(rules.length).toBeGreaterThanOrEqual(4);
    for (const r of rules) expect(r.message?.length).toBeGreaterThan(20);
  });

  test.each([
    ['30m', true],
    ['36h', true],
    ['7d', true],
    ['1d12h', true],
    ['7 days', false],
    ['h', false],
    ['-1h', false],
    ['', false],
  ])('retention.maxAge %p matches the schema pattern: %p', (value, ok) => {
    const rule = at(sched, 'spec', 'retention', 'maxAge')['x-kubernetes-validations']?.[0]?.rule ?? '';
    const pattern = /matches\('(.*)'\)/.exec(rule)?.[1] ?? '';
    expect(new RegExp(pattern).test(value)).toBe(ok);
  });
});

describe('docs/status.md', () => {
  const doc = readFileSync(join(__dirname, '..', 'docs', 'status.md'), 'utf8');
  test.each([
    ...Object.values(SnapshotReasons),
    ...Object.values(ScheduleReasons),
    ...Object.values(VerificationReasons),
  ])('explains the reason %s', (reason) => {
    expect(doc).toMatch(new RegExp(`^\\| \`${reason}\` +\\|`, 'm'));
  });
});
