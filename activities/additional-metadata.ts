// spec.additionalMetadata on every object the operator creates for a cluster: put on at creation, kept in step on change.
//
// Each object carries a record of the keys it was given (ADDITIONAL_METADATA_ANNOTATION), so that a key the user
// later removes from the spec is removed from the object too, while keys someone else put there stay. The operator's
// own keys (reservedMetadataKey, and whatever the object's builder set) always win: the CRD refuses them up front,
// and an object stored before that rule still never has an operator key overwritten or removed from here.
// Member Pods use the same merge, with spec.podLabels/podAnnotations on top, through their own record
// (rollout-template.ts podMetadataRecord), because their metadata is patched by the Rollout's metadata step.
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { API_GROUP, reservedMetadataKey } from '../crds/etcd-cluster';

/** JSON {labels, annotations}: the spec.additionalMetadata keys last applied to an object (absent: none). */
export const ADDITIONAL_METADATA_ANNOTATION = `${API_GROUP}/additional-metadata`;

export interface UserMetadata {
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

type MetadataSpec = Pick<EtcdClusterSpec, 'additionalMetadata'> | undefined;

interface WithMetadata {
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
}

/** The spec's additionalMetadata without the keys only the operator may set. */
export function additionalMetadataOf(spec: MetadataSpec): UserMetadata {
  const pick = (m: Record<string, string> | undefined, kind: 'label' | 'annotation') =>
    Object.fromEntries(Object.entries(m ?? {}).filter(([k]) => !reservedMetadataKey(k, kind)));
  return {
    labels: pick(spec?.additionalMetadata?.labels, 'label'),
    annotations: pick(spec?.additionalMetadata?.annotations, 'annotation'),
  };
}

/** Member Pods: additionalMetadata with spec.podLabels/podAnnotations on top (a pod-only key wins over a shared one). */
export function podUserMetadata(
  spec: Pick<EtcdClusterSpec, 'additionalMetadata' | 'podLabels' | 'podAnnotations'>,
): UserMetadata {
  const shared = additionalMetadataOf(spec);
  return {
    labels: { ...shared.labels, ...(spec.podLabels ?? {}) },
    annotations: { ...shared.annotations, ...(spec.podAnnotations ?? {}) },
  };
}

const sorted = (m: Record<string, string>) =>
  Object.fromEntries(Object.entries(m).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

const isEmpty = (m: UserMetadata) =>
  Object.keys(m.labels).length === 0 && Object.keys(m.annotations).length === 0;

/** The record annotation's value for `applied`; undefined when nothing is applied (objects then carry no record). */
export function metadataRecord(applied: UserMetadata): string | undefined {
  if (isEmpty(applied)) return undefined;
  return JSON.stringify({ annotations: sorted(applied.annotations), labels: sorted(applied.labels) });
}

/** What an object's record says was applied; nothing for no record or one that does not parse. */
export function recordedMetadata(annotations: Record<string, string> | undefined): UserMetadata {
  const text = annotations?.[ADDITIONAL_METADATA_ANNOTATION];
  if (text === undefined) return { labels: {}, annotations: {} };
  try {
    const parsed = JSON.parse(text) as Partial<UserMetadata> | null;
    return { labels: parsed?.labels ?? {}, annotations: parsed?.annotations ?? {} };
  } catch {
    return { labels: {}, annotations: {} };
  }
}

/**
 * A freshly built object with the spec's additionalMetadata under its own labels and annotations (its own win),
 * and the record of what was applied.
 */
export function withAdditionalMetadata<T extends WithMetadata>(obj: T, spec: MetadataSpec): T {
  const user = additionalMetadataOf(spec);
  const record = metadataRecord(user);
  if (record === undefined) return obj;
  const labels = { ...user.labels, ...(obj.metadata.labels ?? {}) };
  const annotations = {
    ...user.annotations,
    ...(obj.metadata.annotations ?? {}),
    [ADDITIONAL_METADATA_ANNOTATION]: record,
  };
  return { ...obj, metadata: { ...obj.metadata, labels, annotations } };
}

export type MetadataPatch = {
  labels: Record<string, string | null>;
  annotations: Record<string, string | null>;
};

/**
 * The merge patch that brings an existing object's metadata to `wanted`: keys it had applied and no longer wants
 * are removed (null), wanted keys are set, the operator's own keys (`owned`, and reserved ones) are never touched.
 * Undefined when the object is current (its record matches and every wanted key has its value).
 */
export function additionalMetadataPatch(
  current: { labels?: Record<string, string>; annotations?: Record<string, string> },
  wanted: UserMetadata,
  owned: { labels?: ReadonlySet<string>; annotations?: ReadonlySet<string> } = {},
): MetadataPatch | undefined {
  const before = recordedMetadata(current.annotations);
  const diff = (
    had: Record<string, string>,
    want: Record<string, string>,
    now: Record<string, string>,
    skip: (k: string) => boolean,
  ) => {
    const patch: Record<string, string | null> = {};
    for (const k of Object.keys(had)) if (!(k in want) && !skip(k) && k in now) patch[k] = null;
    for (const [k, v] of Object.entries(want)) if (!skip(k) && now[k] !== v) patch[k] = v;
    return patch;
  };
  const labels = diff(
    before.labels,
    wanted.labels,
    current.labels ?? {},
    (k) => reservedMetadataKey(k, 'label') || Boolean(owned.labels?.has(k)),
  );
  const annotations = diff(
    before.annotations,
    wanted.annotations,
    current.annotations ?? {},
    (k) => reservedMetadataKey(k, 'annotation') || Boolean(owned.annotations?.has(k)),
  );
  const record = metadataRecord(wanted);
  const recordNow = current.annotations?.[ADDITIONAL_METADATA_ANNOTATION];
  if (record !== recordNow) annotations[ADDITIONAL_METADATA_ANNOTATION] = record ?? null;
  if (Object.keys(labels).length === 0 && Object.keys(annotations).length === 0) return undefined;
  return { labels, annotations };
}

interface JobLike extends WithMetadata {
  spec: {
    template: {
      metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
      spec: unknown;
    };
  };
}

/**
 * A Job (snapshot, prune) with additionalMetadata on itself and on the Pods it makes (the Job's own keys win); both
 * carry the record, so a later change reaches a running Job's Pods too.
 */
export function jobWithAdditionalMetadata<T extends JobLike>(job: T, spec: MetadataSpec): T {
  const user = additionalMetadataOf(spec);
  const record = metadataRecord(user);
  if (record === undefined) return job;
  const withJob = withAdditionalMetadata(job, spec);
  const podMeta = job.spec.template.metadata ?? {};
  const annotations = {
    ...user.annotations,
    ...(podMeta.annotations ?? {}),
    [ADDITIONAL_METADATA_ANNOTATION]: record,
  };
  return {
    ...withJob,
    spec: {
      ...withJob.spec,
      template: {
        ...withJob.spec.template,
        metadata: {
          ...podMeta,
          labels: { ...user.labels, ...(podMeta.labels ?? {}) },
          annotations,
        },
      },
    },
  };
}
