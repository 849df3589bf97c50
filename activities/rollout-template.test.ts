// The template hash: what changes it (anything the spec puts in the Pod) and what does not (member identity, user metadata), and what an out-of-date Pod says changed.
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { memberPod } from './member-manifests';
import { metadataPatch } from './rollout-activities';
import {
  podMetadataRecord,
  podTemplate,
  RolloutAnnotations,
  templateObservation,
  withRolloutAnnotations,
} from './rollout-template';

const ref = { namespace: 'prod', name: 'main', uid: 'uid-1' };
const image = 'quay.io/coreos/etcd:v3.6.16';
const spec = (more: Partial<EtcdClusterSpec> = {}): EtcdClusterSpec => ({
  replicas: 3,
  version: '3.6.16',
  storage: { size: '1Gi', medium: '' },
  progressDeadlineSeconds: 600,
  ...more,
});
const hashOf = (s: EtcdClusterSpec, img = image) => podTemplate({ ref, spec: s, image: img }).hash;

describe('podTemplate', () => {
  const base = hashOf(spec());
  it("leaves out the member's own host alias: Pods made before it are not out of date for lacking it", () => {
    const made = memberPod({
      ref,
      spec: spec(),
      image,
      member: 'main-0',
      role: 'voter',
      initialClusterState: 'existing',
      initialCluster: '',
    });
    expect(made.spec.hostAliases).toHaveLength(1);
    const { parts } = podTemplate({ ref, spec: spec(), image });
    expect(Object.keys(parts).filter((k) => k.includes('hostAliases'))).toEqual([]);
  });
  test.each<[string, Partial<EtcdClusterSpec>]>([
    ['options', { options: { 'snapshot-count': '5000' } }],
    ['resources', { resources: { requests: { cpu: '100m' } } }],
    ['affinity', { affinity: { nodeAffinity: {} } }],
    ['nodeSelector', { nodeSelector: { disk: 'ssd' } }],
    ['tolerations', { tolerations: [{ key: 'k', operator: 'Exists' }] }],
    ['priorityClassName', { priorityClassName: 'high' }],
    ['imagePullSecrets', { imagePullSecrets: [{ name: 'mirror' }] }],
    [
      'topologySpreadConstraints',
      {
        topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule' }],
      },
    ],
  ])('a change of %s changes the hash', (_field, more) => {
    expect(hashOf(spec(more))).not.toBe(base);
  });
  it('another image changes the hash', () => {
    expect(hashOf(spec(), 'quay.io/coreos/etcd:v3.6.17')).not.toBe(base);
  });
  test.each<[string, Partial<EtcdClusterSpec>]>([
    ['podLabels', { podLabels: { team: 'a' } }],
    ['podAnnotations', { podAnnotations: { note: 'x' } }],
    ['additionalMetadata.labels', { additionalMetadata: { labels: { team: 'a' } } }],
    ['additionalMetadata.annotations', { additionalMetadata: { annotations: { note: 'x' } } }],
    ['additionalMetadata, both', { additionalMetadata: { labels: { a: '1' }, annotations: { b: '2' } } }],
    ['replicas', { replicas: 5 }],
    // A cluster from before imagePullSecrets existed keeps its hash: no roll on operator upgrade.
    ['an empty imagePullSecrets', { imagePullSecrets: [] }],
  ])('a change of %s leaves the hash alone', (_field, more) => {
    expect(hashOf(spec(more))).toBe(base);
  });
  it('option order does not matter', () => {
    expect(hashOf(spec({ options: { a: '1', b: '2' } }))).toBe(hashOf(spec({ options: { b: '2', a: '1' } })));
  });
  it('every member of a cluster gets the same hash, whatever its role or initial cluster', () => {
    const pods = (['main-0', 'main-1'] as const).map((member, i) =>
      withRolloutAnnotations(
        memberPod({
          ref,
          spec: spec(),
          member,
          role: i === 0 ? 'voter' : 'learner',
          image,
          initialClusterState: i === 0 ? 'new' : 'existing',
          initialCluster: i === 0 ? 'main-0=x' : 'main-0=x,main-1=y',
        }),
        { ref, spec: spec(), image },
      ),
    );
    expect(pods.map((p) => p.metadata.annotations[RolloutAnnotations.podTemplateHash])).toEqual([base, base]);
  });
});

describe('templateObservation', () => {
  const desired = podTemplate({ ref, spec: spec({ options: { 'snapshot-count': '5000' } }), image });
  const annotationsOf = (s: EtcdClusterSpec) =>
    withRolloutAnnotations({ metadata: { annotations: {} } }, { ref, spec: s, image }).metadata.annotations;

  it('a Pod rendered from the spec is up to date', () => {
    const s = spec({ options: { 'snapshot-count': '5000' } });
    expect(templateObservation(annotationsOf(s), desired, s)).toEqual({
      upToDate: true,
      changed: [],
      hash: desired.hash,
      metadataCurrent: true,
    });
  });
  it('a Pod rendered before an options change says options changed', () => {
    const s = spec({ options: { 'snapshot-count': '5000' } });
    expect(templateObservation(annotationsOf(spec()), desired, s)).toMatchObject({
      upToDate: false,
      changed: ['options'],
    });
  });
  it('new pull Secrets are named as such', () => {
    const s = spec({ imagePullSecrets: [{ name: 'mirror' }] });
    const want = podTemplate({ ref, spec: s, image });
    expect(templateObservation(annotationsOf(spec()), want, s).changed).toEqual(['imagePullSecrets']);
  });
  it('a new CA bundle is named as such, not as annotations', () => {
    const s = spec();
    const before = withRolloutAnnotations(
      { metadata: { annotations: {} } },
      { ref, spec: s, image, tlsCAHash: 'old' },
    );
    const want = podTemplate({ ref, spec: s, image, tlsCAHash: 'new' });
    expect(templateObservation(before.metadata.annotations, want, s).changed).toEqual(['trusted CA bundle']);
  });
  it('resources and options together are both named', () => {
    const s = spec({ options: { 'snapshot-count': '5000' }, resources: { limits: { memory: '1Gi' } } });
    const want = podTemplate({ ref, spec: s, image });
    expect(templateObservation(annotationsOf(spec()), want, s).changed).toEqual(['options', 'resources']);
  });
  it('a Pod without a recorded hash is out of date and says so', () => {
    expect(templateObservation({}, desired, spec()).changed).toEqual([
      'pod template (no hash recorded on the Pod)',
    ]);
  });
  test.each<[string, Partial<EtcdClusterSpec>, Partial<EtcdClusterSpec>]>([
    ['an additionalMetadata label added', {}, { additionalMetadata: { labels: { team: 'b' } } }],
    [
      'an additionalMetadata annotation changed',
      { additionalMetadata: { annotations: { note: 'x' } } },
      { additionalMetadata: { annotations: { note: 'y' } } },
    ],
    ['additionalMetadata removed', { additionalMetadata: { labels: { team: 'b' } } }, {}],
  ])('%s: the template stays current (no roll), the metadata does not', (_case, was, now) => {
    const base = { options: { 'snapshot-count': '5000' } };
    const observed = templateObservation(
      annotationsOf(spec({ ...base, ...was })),
      desired,
      spec({ ...base, ...now }),
    );
    expect(observed).toMatchObject({ upToDate: true, changed: [], metadataCurrent: false });
  });
  it('a Pod made before additionalMetadata existed is current while the spec has none (no patch on upgrade)', () => {
    const s = spec({ podLabels: { team: 'a' }, podAnnotations: { note: 'x' } });
    const old = JSON.stringify({ annotations: { note: 'x' }, labels: { team: 'a' } });
    expect(podMetadataRecord(s)).toBe(old);
    expect(podMetadataRecord({ ...s, additionalMetadata: {} })).toBe(old);
  });
  it('a podLabels change leaves the template current but not the metadata', () => {
    const before = spec({ options: { 'snapshot-count': '5000' } });
    const after = { ...before, podLabels: { team: 'b' } };
    expect(templateObservation(annotationsOf(before), desired, after)).toMatchObject({
      upToDate: true,
      metadataCurrent: false,
    });
  });
});

describe('metadataPatch', () => {
  const operatorLabels = new Set(['etcd.conductor.dev/cluster', 'app.kubernetes.io/name']);
  const podWith = (applied: EtcdClusterSpec) => ({
    metadata: { annotations: { [RolloutAnnotations.podMetadata]: podMetadataRecord(applied) } },
  });
  it('sets new keys, removes the ones the spec dropped, and records what it applied', () => {
    const before = spec({ podLabels: { team: 'a', tier: 'db' }, podAnnotations: { old: '1' } });
    const after = spec({ podLabels: { team: 'b' }, podAnnotations: { fresh: '2' } });
    expect(metadataPatch(podWith(before), after, operatorLabels)).toEqual({
      labels: { tier: null, team: 'b' },
      annotations: { old: null, fresh: '2', [RolloutAnnotations.podMetadata]: podMetadataRecord(after) },
    });
  });
  it('applies additionalMetadata with podLabels/podAnnotations on top, and removes a shared key the spec dropped', () => {
    const before = spec({ additionalMetadata: { labels: { team: 'a', cost: 'c1' } } });
    const after = spec({
      additionalMetadata: { labels: { team: 'a' }, annotations: { note: 'shared' } },
      podLabels: { team: 'pods' },
    });
    expect(metadataPatch(podWith(before), after, operatorLabels)).toEqual({
      labels: { cost: null, team: 'pods' },
      annotations: { note: 'shared', [RolloutAnnotations.podMetadata]: podMetadataRecord(after) },
    });
  });
  it("never sets or removes the operator's own labels and annotations", () => {
    const before = spec({ podLabels: { 'app.kubernetes.io/name': 'mine' } });
    const after = spec({
      podLabels: {},
      podAnnotations: { [RolloutAnnotations.podTemplateHash]: 'forged' },
    });
    expect(metadataPatch(podWith(before), after, operatorLabels)).toEqual({
      labels: {},
      annotations: { [RolloutAnnotations.podMetadata]: podMetadataRecord(after) },
    });
  });
});
