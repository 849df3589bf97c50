// Keeps spec.additionalMetadata applied on the objects the operator made for a cluster, other than member Pods.
//
// Member Pods follow through the Rollout's metadata step (rollout-activities.ts patchMemberPodMetadata); this runs
// there and after a member Pod is created, so whenever a Pod is given the spec's metadata the cluster's other
// objects are given it too. It reads the objects by name where names are known (Services, the PodDisruptionBudget,
// Secrets, cert-manager Certificates) so it never lists Secrets, lists claims, snapshot Jobs and their Pods by label,
// and patches only what is out of step and made for this cluster: a second run patches nothing.
// Prune Jobs (EtcdSnapshotSchedule retention, gone 10 minutes after they finish) get it when created only.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { Labels } from '../crds/labels';
import { clientServiceName, peerServiceName } from '../crds/names';
import { autoCASecretName, autoTLSOn, issuedTLSSecrets } from '../crds/tls-names';
import type { ClusterRef } from '../contracts/cluster-ref';
import { additionalMetadataOf, additionalMetadataPatch } from './additional-metadata';
import { appliedSecretName } from './etcd-auth';
import type { KubeObjects, ObjectRef } from './kube-objects';
import { isStatus } from './kube-objects';
import { CERTIFICATE_API_VERSION, CERTIFICATE_KIND } from './tls-certificates';

type MetadataSpec = Pick<EtcdClusterSpec, 'additionalMetadata' | 'auth' | 'tls'>;

/** The objects of the cluster whose names are known from its spec (each may not exist). */
export function namedClusterObjects(ref: ClusterRef, spec: MetadataSpec): ObjectRef[] {
  const at = (apiVersion: string, kind: string, name: string): ObjectRef => ({
    apiVersion,
    kind,
    namespace: ref.namespace,
    name,
  });
  const tls = issuedTLSSecrets(spec, ref.name);
  const auto = autoTLSOn(spec);
  return [
    at('v1', 'Service', peerServiceName(ref.name)),
    at('v1', 'Service', clientServiceName(ref.name)),
    at('policy/v1', 'PodDisruptionBudget', ref.name),
    ...(spec.auth ? [at('v1', 'Secret', appliedSecretName(ref.name))] : []),
    // cert-manager's Certificate and the Secret it issues share a name; the operator owns both, and its copy.
    // With mode Auto the operator issues the Secrets itself (no Certificates) from its CA Secret.
    ...tls.flatMap((s) => [
      ...(auto ? [] : [at(CERTIFICATE_API_VERSION, CERTIFICATE_KIND, s.issued)]),
      at('v1', 'Secret', s.issued),
      at('v1', 'Secret', s.applied),
    ]),
    ...(auto ? [at('v1', 'Secret', autoCASecretName(ref.name))] : []),
  ];
}

/**
 * Whether the operator made this object for this cluster and this sync keeps it: its controller is the EtcdCluster,
 * or it is a snapshot Job of the cluster or one of that Job's Pods. Member Pods are the Rollout's (never here).
 */
export function madeFor(ref: ClusterRef, o: KubernetesObject): boolean {
  const labels = o.metadata?.labels ?? {};
  if (o.kind === 'Pod') {
    const ofJob = o.metadata?.ownerReferences?.some((r) => r.kind === 'Job') === true;
    return ofJob && !(Labels.member in labels) && ofCluster(ref, labels);
  }
  if (o.metadata?.ownerReferences?.some((r) => r.uid === ref.uid)) return true;
  return o.kind === 'Job' && ofCluster(ref, labels);
}

const ofCluster = (ref: ClusterRef, labels: Record<string, string>) =>
  labels['app.kubernetes.io/managed-by'] === 'etcd-conductor' &&
  labels['app.kubernetes.io/instance'] === ref.name;

/** Patches additionalMetadata onto the cluster's objects that are out of step; returns the ones it patched. */
export async function syncAdditionalMetadata(
  kube: KubeObjects,
  ref: ClusterRef,
  spec: MetadataSpec,
): Promise<string[]> {
  const wanted = additionalMetadataOf(spec);
  const objects: KubernetesObject[] = [];
  for (const named of namedClusterObjects(ref, spec)) {
    try {
      const o = await kube.read(named);
      if (o) objects.push({ ...o, apiVersion: named.apiVersion, kind: named.kind });
    } catch (err) {
      // Not allowed to read it (an older chart's RBAC) or a kind that is not installed (no cert-manager): nothing
      // to keep in step there.
      const unknownKind = /unrecognized api version and kind/i.test(err instanceof Error ? err.message : '');
      if (isStatus(err, 403) || isStatus(err, 404) || unknownKind) continue;
      throw err;
    }
  }
  const claims = await kube.list(
    'v1',
    'PersistentVolumeClaim',
    ref.namespace,
    `${Labels.cluster}=${ref.name}`,
  );
  const snapshotJobs = `app.kubernetes.io/managed-by=etcd-conductor,app.kubernetes.io/instance=${ref.name}`;
  const jobs = await kube.list('batch/v1', 'Job', ref.namespace, snapshotJobs);
  // Only when a Job exists: an idle cluster's sync lists no Pods.
  const jobPods =
    jobs.length > 0 ? await kube.list('v1', 'Pod', ref.namespace, `${snapshotJobs},!${Labels.member}`) : [];
  objects.push(
    ...claims.map((o) => ({ ...o, apiVersion: 'v1', kind: 'PersistentVolumeClaim' })),
    ...jobs.map((o) => ({ ...o, apiVersion: 'batch/v1', kind: 'Job' })),
    ...jobPods.map((o) => ({ ...o, apiVersion: 'v1', kind: 'Pod' })),
  );
  const patched: string[] = [];
  for (const o of objects) {
    if (!madeFor(ref, o) || o.metadata?.deletionTimestamp) continue;
    const patch = additionalMetadataPatch(o.metadata ?? {}, wanted);
    if (!patch) continue;
    const name = o.metadata?.name ?? '';
    await kube.mergePatch(
      { apiVersion: o.apiVersion ?? '', kind: o.kind ?? '', namespace: ref.namespace, name },
      { metadata: patch },
    );
    patched.push(`${o.kind}/${name}`);
  }
  return patched;
}
