// Decides which Kubernetes changes are worth a signal: resyncs and changes that alter nothing the workflow reads cause no work.
import { Annotations, Labels } from '../crds/labels';

interface ObjectLike {
  metadata?: {
    uid?: string;
    generation?: number;
    deletionTimestamp?: unknown;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
  };
}

/** Everything about an EtcdCluster the cluster workflow acts on; equal keys mean no new signal. */
export function clusterChangeKey(obj: ObjectLike): string {
  const m = obj.metadata ?? {};
  return JSON.stringify([
    m.uid ?? '',
    m.generation ?? 0,
    m.annotations?.[Annotations.retry] ?? '',
    Boolean(m.deletionTimestamp),
    // Appended only when set, so an object without it keeps the key it had before the annotation existed.
    ...(m.annotations?.[Annotations.approveRecovery] !== undefined
      ? [m.annotations[Annotations.approveRecovery]]
      : []),
  ]);
}

interface PodLike extends ObjectLike {
  status?: {
    phase?: string;
    podIP?: string;
    conditions?: { type?: string; status?: string }[];
    containerStatuses?: { restartCount?: number; state?: { waiting?: { reason?: string } } }[];
  };
}

/**
 * The kubelet's retries, said once: it alternates ErrImagePull and ImagePullBackOff while an image cannot be
 * pulled, and a crash-looping container between CrashLoopBackOff and a brief run. Neither alternation is news
 * to the workflow, and signalling each would cost it history for as long as the Pod stays stuck.
 */
function waitingKey(reason: string | undefined): string {
  if (reason === 'ErrImagePull' || reason === 'ImagePullBackOff') return 'ImagePull';
  if (reason === 'CrashLoopBackOff') return '';
  return reason ?? '';
}

/**
 * What about a member Pod or claim can change a plan: existence, phase, readiness, whether it has restarted,
 * a waiting reason, deletion, data-lost mark. Further restarts of a container that already restarted are no
 * news (a crash loop would signal every back-off); a restart of a Ready member shows as readiness anyway.
 */
export function memberChangeKey(obj: PodLike): string {
  const m = obj.metadata ?? {};
  const s = obj.status ?? {};
  const ready = s.conditions?.find((c) => c.type === 'Ready')?.status ?? '';
  const restarts = (s.containerStatuses ?? []).map((c) => ((c.restartCount ?? 0) > 0 ? 1 : 0)).join(',');
  const waiting = (s.containerStatuses ?? []).map((c) => waitingKey(c.state?.waiting?.reason)).join(',');
  return JSON.stringify([
    m.uid ?? '',
    s.phase ?? '',
    ready,
    restarts,
    waiting,
    Boolean(m.deletionTimestamp),
    m.labels?.[Labels.role] ?? '',
    m.annotations?.[Annotations.dataLost] ?? '',
  ]);
}

/** The cluster a member object belongs to, from the operator's own label. */
export function owningCluster(
  obj: ObjectLike & { metadata?: { namespace?: string } },
): { namespace: string; name: string } | undefined {
  const name = obj.metadata?.labels?.[Labels.cluster];
  const namespace = (obj.metadata as { namespace?: string } | undefined)?.namespace;
  return name && namespace ? { namespace, name } : undefined;
}
