// Hashes what a member Pod's spec controls, so a member whose Pod was rendered from another spec is known to be out of date.
//
// The hash is taken over the Pod that memberPod() renders for a placeholder member, so every field the
// manifests ever add (a CA-bundle annotation, a new probe) takes part without more code, while what must
// stay per member (its name, role, --initial-cluster and initial members, the restore init container of a seed) does not.
// podLabels, podAnnotations and additionalMetadata are left out on purpose: they are patched onto running Pods in
// place (metadata changes need no restart, and users expect a label change not to restart their database); the
// record of what was applied sits in its own annotation so that removed keys can be removed too.
import { createHash } from 'node:crypto';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { API_GROUP } from '../crds/etcd-cluster';
import { podUserMetadata } from './additional-metadata';
import type { MemberPodInput } from './member-manifests';
import { memberPod } from './member-manifests';
import type { PodTemplate, PodTemplateObservation } from '../contracts/rollout';

export const RolloutAnnotations = {
  /** Hash of the Pod template the member's Pod was rendered from (everything but member identity and user metadata). */
  podTemplateHash: `${API_GROUP}/pod-template-hash`,
  /** JSON object: a short hash per part of that template, so an out-of-date Pod can say what changed. */
  podTemplateParts: `${API_GROUP}/pod-template-parts`,
  /** JSON object: the user labels and annotations (additionalMetadata, podLabels/podAnnotations on top) last applied to the Pod. */
  podMetadata: `${API_GROUP}/pod-metadata`,
} as const;

/** A member Pod's input without what belongs to one member: the same for every member of a cluster. */
export type TemplateInput = Omit<
  MemberPodInput,
  'member' | 'role' | 'initialClusterState' | 'initialCluster' | 'initialMembers' | 'restore'
>;

const PLACEHOLDER_MEMBER = '$(MEMBER)';

// Key order must not change a hash: objects are written with sorted keys.
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const digest = (text: string, length: number) =>
  createHash('sha256').update(text).digest('hex').slice(0, length);

function withoutUserMetadata(spec: EtcdClusterSpec): EtcdClusterSpec {
  const { podLabels: _labels, podAnnotations: _annotations, additionalMetadata: _metadata, ...rest } = spec;
  return rest;
}

/** Splits a rendered Pod into named parts: metadata.<field>, spec.<field>, containers.<name>.<field>. */
function partsOf(pod: ReturnType<typeof memberPod>): Record<string, unknown> {
  const parts: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(pod.metadata)) parts[`metadata.${k}`] = v;
  for (const [k, v] of Object.entries(pod.spec)) {
    // Per member (its own name), and Pods made before it existed must not count as out of date for lacking it.
    if (k === 'hostAliases') continue;
    if (k === 'containers' || k === 'initContainers') {
      for (const c of v as { name: string }[]) {
        for (const [field, value] of Object.entries(c)) parts[`${k}.${c.name}.${field}`] = value;
      }
    } else {
      parts[`spec.${k}`] = v;
    }
  }
  return parts;
}

/** The template every member of the cluster should run: its hash and a hash per part. */
export function podTemplate(input: TemplateInput): PodTemplate {
  const pod = memberPod({
    ...input,
    spec: withoutUserMetadata(input.spec),
    member: PLACEHOLDER_MEMBER,
    role: 'voter',
    initialClusterState: 'existing',
    initialCluster: '',
  });
  const parts = Object.fromEntries(
    Object.entries(partsOf(pod))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => [k, digest(stableJson(v), 10)]),
  );
  return { hash: digest(stableJson(parts), 16), parts };
}

/**
 * The record of the user metadata applied to a Pod: additionalMetadata with podLabels/podAnnotations on top. Without
 * additionalMetadata it is exactly the record of podLabels/podAnnotations that Pods made before it existed carry, so
 * an operator upgrade patches no Pod.
 */
export function podMetadataRecord(spec: EtcdClusterSpec): string {
  const { labels, annotations } = podUserMetadata(spec);
  return stableJson({ labels, annotations });
}

/** The annotations createMemberPod adds to a member Pod so that later observations can compare it. */
export function rolloutAnnotations(template: PodTemplate, spec: EtcdClusterSpec): Record<string, string> {
  return {
    [RolloutAnnotations.podTemplateHash]: template.hash,
    [RolloutAnnotations.podTemplateParts]: stableJson(template.parts),
    [RolloutAnnotations.podMetadata]: podMetadataRecord(spec),
  };
}

/** A rendered member Pod with the rollout annotations of the template it was rendered from. */
export function withRolloutAnnotations<P extends { metadata: { annotations?: Record<string, string> } }>(
  pod: P,
  input: TemplateInput,
): P {
  const annotations = rolloutAnnotations(podTemplate(input), input.spec);
  return {
    ...pod,
    metadata: { ...pod.metadata, annotations: { ...pod.metadata.annotations, ...annotations } },
  };
}

// What a person reading "roll out ns/name: options changed" should see for each part of the template.
const READABLE: Record<string, string> = {
  'containers.etcd.args': 'options',
  'containers.etcd.resources': 'resources',
  'containers.etcd.image': 'image',
  'spec.affinity': 'affinity',
  'spec.nodeSelector': 'nodeSelector',
  'spec.tolerations': 'tolerations',
  'spec.topologySpreadConstraints': 'topologySpreadConstraints',
  'spec.priorityClassName': 'priorityClassName',
  'spec.imagePullSecrets': 'imagePullSecrets',
  'spec.volumes': 'volumes',
  // User annotations are kept out of the template (they are patched in place), so the only annotation left in
  // it is the hash of the CA bundle members trust: a change there is a CA change, and says so.
  'metadata.annotations': 'trusted CA bundle',
};

function recordedParts(text: string | undefined): Record<string, string> | undefined {
  if (text === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, string>) : undefined;
  } catch {
    return undefined;
  }
}

/** Compares a Pod's rollout annotations with the spec's template and metadata record. */
export function templateObservation(
  annotations: Record<string, string> | undefined,
  desired: PodTemplate,
  spec: EtcdClusterSpec,
): PodTemplateObservation {
  const hash = annotations?.[RolloutAnnotations.podTemplateHash];
  const metadataCurrent = annotations?.[RolloutAnnotations.podMetadata] === podMetadataRecord(spec);
  if (hash === desired.hash) return { upToDate: true, changed: [], hash: desired.hash, metadataCurrent };
  const recorded = recordedParts(annotations?.[RolloutAnnotations.podTemplateParts]);
  let changed: string[];
  if (hash === undefined) changed = ['pod template (no hash recorded on the Pod)'];
  else if (!recorded) changed = ['pod template'];
  else {
    const names = new Set([...Object.keys(recorded), ...Object.keys(desired.parts)]);
    changed = [...names]
      .filter((n) => recorded[n] !== desired.parts[n])
      .map((n) => READABLE[n] ?? n)
      .sort();
    if (changed.length === 0) changed = ['pod template'];
  }
  return { upToDate: false, changed: [...new Set(changed)], hash: desired.hash, metadataCurrent };
}
