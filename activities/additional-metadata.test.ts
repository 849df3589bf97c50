// spec.additionalMetadata as a pure merge: what a new object gets, what patch brings an existing one in step, and that the operator's keys always win.
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import {
  ADDITIONAL_METADATA_ANNOTATION,
  additionalMetadataOf,
  additionalMetadataPatch,
  jobWithAdditionalMetadata,
  metadataRecord,
  podUserMetadata,
  withAdditionalMetadata,
} from './additional-metadata';
import { clientService, disruptionBudget, memberClaim, peerService } from './member-manifests';
import { snapshotJob } from './snapshot-manifests';

const ref = { namespace: 'prod', name: 'main', uid: 'uid-1' };
const am = (labels?: Record<string, string>, annotations?: Record<string, string>) => ({
  additionalMetadata: { ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) },
});
const recordOf = (labels: Record<string, string>, annotations: Record<string, string> = {}) =>
  metadataRecord({ labels, annotations });

describe('additionalMetadataOf', () => {
  test.each<[string, Pick<EtcdClusterSpec, 'additionalMetadata'> | undefined, object]>([
    ['no spec', undefined, { labels: {}, annotations: {} }],
    ['none', {}, { labels: {}, annotations: {} }],
    [
      'labels and annotations',
      am({ team: 'a' }, { note: 'x' }),
      { labels: { team: 'a' }, annotations: { note: 'x' } },
    ],
    [
      // Refused by the CRD; an object stored before that rule still never reaches an object with them.
      'reserved keys dropped',
      am(
        {
          'etcd.conductor.dev/cluster': 'x',
          'app.kubernetes.io/name': 'y',
          'app.kubernetes.io/part-of': 'ok',
        },
        { 'etcd.conductor.dev/pod-metadata': 'x', 'app.kubernetes.io/name': 'fine as an annotation' },
      ),
      {
        labels: { 'app.kubernetes.io/part-of': 'ok' },
        annotations: { 'app.kubernetes.io/name': 'fine as an annotation' },
      },
    ],
  ])('%s', (_case, spec, want) => {
    expect(additionalMetadataOf(spec)).toEqual(want);
  });
});

describe('podUserMetadata', () => {
  test.each<[string, Partial<EtcdClusterSpec>, object]>([
    ['neither', {}, { labels: {}, annotations: {} }],
    ['podLabels only', { podLabels: { p: '1' } }, { labels: { p: '1' }, annotations: {} }],
    ['additionalMetadata only', am({ a: '1' }, { n: 'x' }), { labels: { a: '1' }, annotations: { n: 'x' } }],
    [
      'pod-only extras on top: a key in both takes the pod value',
      {
        ...am({ team: 'all', cost: 'c' }, { n: 'shared' }),
        podLabels: { team: 'pods' },
        podAnnotations: { n: 'pod' },
      },
      { labels: { team: 'pods', cost: 'c' }, annotations: { n: 'pod' } },
    ],
  ])('%s', (_case, spec, want) => {
    expect(podUserMetadata(spec)).toEqual(want);
  });
});

describe('withAdditionalMetadata', () => {
  const obj = () => ({
    metadata: {
      name: 'o',
      labels: { 'app.kubernetes.io/name': 'etcd', own: 'operator' },
      annotations: { 'etcd.conductor.dev/copy-of': 'x' },
    },
  });
  it('adds nothing, not even a record, without additionalMetadata', () => {
    expect(withAdditionalMetadata(obj(), {})).toEqual(obj());
    expect(withAdditionalMetadata(obj(), undefined)).toEqual(obj());
  });
  it("adds the user's keys under the object's own, and records them", () => {
    const out = withAdditionalMetadata(obj(), am({ team: 'a', own: 'user' }, { note: 'x' }));
    expect(out.metadata.labels).toEqual({ 'app.kubernetes.io/name': 'etcd', own: 'operator', team: 'a' });
    expect(out.metadata.annotations).toEqual({
      'etcd.conductor.dev/copy-of': 'x',
      note: 'x',
      [ADDITIONAL_METADATA_ANNOTATION]: recordOf({ team: 'a', own: 'user' }, { note: 'x' }),
    });
  });
  test.each<
    [string, { metadata: { labels?: Record<string, string>; annotations?: Record<string, string> } }]
  >([
    ['peer Service', peerService(ref, am({ team: 'a' }, { note: 'x' }))],
    ['client Service', clientService(ref, am({ team: 'a' }, { note: 'x' }))],
    ['PodDisruptionBudget', disruptionBudget(ref, 3, am({ team: 'a' }, { note: 'x' }))],
    [
      'member claim',
      memberClaim({
        ref,
        member: 'main-0',
        spec: {
          replicas: 3,
          version: '3.6.16',
          storage: { size: '1Gi', medium: '' },
          progressDeadlineSeconds: 600,
          ...am({ team: 'a' }, { note: 'x' }),
        },
      }),
    ],
  ])('the %s builder carries it', (_kind, built) => {
    expect(built.metadata.labels).toMatchObject({ team: 'a', 'etcd.conductor.dev/cluster': 'main' });
    expect(built.metadata.annotations).toMatchObject({ note: 'x' });
  });
});

describe('jobWithAdditionalMetadata', () => {
  const job = () =>
    snapshotJob({
      snapshot: { namespace: 'prod', name: 's1', uid: 'u' },
      attempt: 1,
      image: 'img',
      endpoint: 'http://x:2379',
      destination: { pvc: { claimName: 'backup', subPath: '' } },
      cluster: 'main',
    });
  it('puts the keys on the Job and on the Pods it makes, its own labels winning', () => {
    const out = jobWithAdditionalMetadata(
      job(),
      am({ team: 'a', 'app.kubernetes.io/part-of': 'db' }, { note: 'x' }),
    );
    expect(out.metadata.labels).toMatchObject({ team: 'a', 'app.kubernetes.io/name': 'etcd-snapshot' });
    expect(out.metadata).toMatchObject({
      annotations: { note: 'x', [ADDITIONAL_METADATA_ANNOTATION]: expect.any(String) as unknown },
    });
    expect(out.spec.template.metadata.labels).toMatchObject({
      team: 'a',
      'app.kubernetes.io/name': 'etcd-snapshot',
    });
    expect(out.spec.template.metadata).toMatchObject({ annotations: { note: 'x' } });
    expect(out.spec.template.spec).toEqual(job().spec.template.spec);
  });
  it('leaves a Job alone without additionalMetadata', () => {
    expect(jobWithAdditionalMetadata(job(), {})).toEqual(job());
  });
  it('the snapshot Job builder applies the metadata it is given', () => {
    const built = snapshotJob({
      snapshot: { namespace: 'prod', name: 's1', uid: 'u' },
      attempt: 1,
      image: 'img',
      endpoint: 'http://x:2379',
      destination: { pvc: { claimName: 'backup', subPath: '' } },
      cluster: 'main',
      metadata: am({ team: 'a' }),
    });
    expect(built.metadata.labels).toMatchObject({ team: 'a' });
    expect(built.spec.template.metadata.labels).toMatchObject({ team: 'a' });
  });
});

describe('additionalMetadataPatch', () => {
  const want = (labels: Record<string, string> = {}, annotations: Record<string, string> = {}) => ({
    labels,
    annotations,
  });
  type Meta = { labels: Record<string, string>; annotations: Record<string, string> };
  const objectWith = (
    applied: Meta | undefined,
    extra: { labels?: Record<string, string>; annotations?: Record<string, string> } = {},
  ): Meta => {
    const record = applied ? metadataRecord(applied) : undefined;
    return {
      labels: { 'app.kubernetes.io/name': 'etcd', ...(applied?.labels ?? {}), ...(extra.labels ?? {}) },
      annotations: {
        ...(applied?.annotations ?? {}),
        ...(extra.annotations ?? {}),
        ...(record ? { [ADDITIONAL_METADATA_ANNOTATION]: record } : {}),
      },
    };
  };
  test.each<[string, Meta, Meta, object | undefined]>([
    ['nothing wanted, nothing applied: current', objectWith(undefined), want(), undefined],
    [
      'applied as wanted: current',
      objectWith(want({ a: '1' }, { n: 'x' })),
      want({ a: '1' }, { n: 'x' }),
      undefined,
    ],
    [
      'first time: sets keys and the record',
      objectWith(undefined),
      want({ a: '1' }, { n: 'x' }),
      {
        labels: { a: '1' },
        annotations: { n: 'x', [ADDITIONAL_METADATA_ANNOTATION]: recordOf({ a: '1' }, { n: 'x' }) },
      },
    ],
    [
      'a value changed',
      objectWith(want({ a: '1' })),
      want({ a: '2' }),
      { labels: { a: '2' }, annotations: { [ADDITIONAL_METADATA_ANNOTATION]: recordOf({ a: '2' }) } },
    ],
    [
      'a key the user removed is removed; one someone else set stays',
      objectWith(want({ a: '1', b: '2' }, { n: 'x' }), {
        labels: { theirs: 'y' },
        annotations: { their: 'z' },
      }),
      want({ a: '1' }),
      {
        labels: { b: null },
        annotations: { n: null, [ADDITIONAL_METADATA_ANNOTATION]: recordOf({ a: '1' }) },
      },
    ],
    [
      'everything removed: the keys and the record go',
      objectWith(want({ a: '1' }, { n: 'x' })),
      want(),
      { labels: { a: null }, annotations: { n: null, [ADDITIONAL_METADATA_ANNOTATION]: null } },
    ],
    [
      'a key someone changed by hand is set back',
      objectWith(want({ a: '1' }), { labels: { a: 'hand' } }),
      want({ a: '1' }),
      { labels: { a: '1' }, annotations: {} },
    ],
    [
      'reserved keys are never set or removed, even when recorded',
      objectWith(want({ 'app.kubernetes.io/name': 'etcd' }, { 'etcd.conductor.dev/x': 'y' })),
      want({ 'app.kubernetes.io/instance': 'forged' }, { 'etcd.conductor.dev/pod-metadata': 'forged' }),
      {
        labels: {},
        annotations: {
          [ADDITIONAL_METADATA_ANNOTATION]: recordOf(
            { 'app.kubernetes.io/instance': 'forged' },
            { 'etcd.conductor.dev/pod-metadata': 'forged' },
          ),
        },
      },
    ],
    [
      'a record that does not parse counts as nothing applied',
      { labels: { a: '1' }, annotations: { [ADDITIONAL_METADATA_ANNOTATION]: '{not json' } },
      want({ a: '1' }),
      { labels: {}, annotations: { [ADDITIONAL_METADATA_ANNOTATION]: recordOf({ a: '1' }) } },
    ],
  ])('%s', (_case, current, wanted, patch) => {
    expect(additionalMetadataPatch(current, wanted)).toEqual(patch);
  });
  it('keys the object builder owns are left alone', () => {
    const current = { labels: { own: 'operator' }, annotations: {} };
    expect(additionalMetadataPatch(current, want({ own: 'user' }), { labels: new Set(['own']) })).toEqual({
      labels: {},
      annotations: { [ADDITIONAL_METADATA_ANNOTATION]: recordOf({ own: 'user' }) },
    });
  });
});
