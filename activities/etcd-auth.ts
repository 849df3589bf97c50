// Reads a cluster's root credentials from the Secret spec.auth names and hands them to etcd calls (a ConnectionContributor).
//
// Invariant: the password is read here, inside the worker process, and goes only into etcd clients: never into
// an activity's input or result, a log line, status or an Event. Problems are described by Secret and key name.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { API_VERSION, ETCD_CLUSTER } from '../crds/etcd-cluster';
import type { ClusterKey, ConnectionContributor } from './etcd-connection';
import type { KubeObjects } from './kube-objects';
import type { ClusterRef } from '../contracts/cluster-ref';
import { ownerReference } from './member-manifests';
import { withAdditionalMetadata } from './additional-metadata';

/** etcd's one user that may enable auth and change membership; the Secret's `username` must be this one. */
export const ROOT_USER = 'root';
export const AUTH_SECRET_KEYS = { username: 'username', password: 'password' } as const;

export type RootCredentials =
  | { ok: true; username: string; password: string }
  | { ok: false; problem: string }
  /** The cluster has no spec.auth (or no longer exists): calls carry no credentials. */
  | { ok: false; problem?: undefined };

type SecretLike = KubernetesObject & { data?: Record<string, string> };

/** The Secret's values, or why they cannot be used; the problem names the Secret and key, never a value. */
export function credentialsFromSecret(
  namespace: string,
  name: string,
  secret: SecretLike | undefined,
): RootCredentials {
  const where = `the Secret ${namespace}/${name} named by spec.auth.rootSecretRef`;
  if (!secret) return { ok: false, problem: `${where} does not exist` };
  const decode = (key: string) => {
    const b64 = secret.data?.[key];
    return b64 === undefined ? undefined : Buffer.from(b64, 'base64').toString('utf8');
  };
  const password = decode(AUTH_SECRET_KEYS.password);
  if (!password) return { ok: false, problem: `${where} has no non-empty key ${AUTH_SECRET_KEYS.password}` };
  const username = decode(AUTH_SECRET_KEYS.username) ?? ROOT_USER;
  if (username !== ROOT_USER) {
    return {
      ok: false,
      problem: `${where} names user "${username}" in key ${AUTH_SECRET_KEYS.username}; the operator needs etcd's root user: leave the key out or set it to ${ROOT_USER}`,
    };
  }
  return { ok: true, username, password };
}

/** Reads the cluster's spec.auth and its Secret; `{ ok: false }` without a problem when the cluster has no auth. */
export async function readRootCredentials(kube: KubeObjects, cluster: ClusterKey): Promise<RootCredentials> {
  const obj = await kube.read<KubernetesObject & { spec?: Partial<EtcdClusterSpec> }>({
    apiVersion: API_VERSION,
    kind: ETCD_CLUSTER.kind,
    namespace: cluster.namespace,
    name: cluster.name,
  });
  const secretName = obj?.spec?.auth?.rootSecretRef?.name;
  if (!secretName) return { ok: false };
  const secret = await kube.read<SecretLike>({
    apiVersion: 'v1',
    kind: 'Secret',
    namespace: cluster.namespace,
    name: secretName,
  });
  return credentialsFromSecret(cluster.namespace, secretName, secret);
}

/**
 * The operator-owned Secret holding the root password etcd has now (the last one the operator applied). A
 * changed password in the user's Secret is applied by authenticating with this copy (RotateAuth), so the
 * operator never needs the old password from anyone, and the copy never leaves the cluster's namespace.
 */
export function appliedSecretName(cluster: string): string {
  return `${cluster}-auth-applied`;
}

/** The applied copy's password, or undefined when the operator has not recorded one yet. */
export async function readAppliedPassword(
  kube: KubeObjects,
  cluster: ClusterKey,
): Promise<string | undefined> {
  const secret = await kube.read<SecretLike>({
    apiVersion: 'v1',
    kind: 'Secret',
    namespace: cluster.namespace,
    name: appliedSecretName(cluster.name),
  });
  const b64 = secret?.data?.[AUTH_SECRET_KEYS.password];
  const password = b64 === undefined ? undefined : Buffer.from(b64, 'base64').toString('utf8');
  return password ? password : undefined;
}

/**
 * Records `password` as the one etcd's root user has: creates the copy owned by the EtcdCluster (so it goes
 * with it), or replaces its value. Idempotent: writing the same value again changes nothing.
 */
export async function writeAppliedPassword(
  kube: KubeObjects,
  ref: ClusterRef,
  password: string,
): Promise<void> {
  const data = { [AUTH_SECRET_KEYS.password]: Buffer.from(password, 'utf8').toString('base64') };
  const name = appliedSecretName(ref.name);
  // Made with the cluster's additionalMetadata (activities/additional-metadata-sync.ts keeps it in step later).
  const cluster = await kube.read<KubernetesObject & { spec?: Pick<EtcdClusterSpec, 'additionalMetadata'> }>({
    apiVersion: API_VERSION,
    kind: ETCD_CLUSTER.kind,
    namespace: ref.namespace,
    name: ref.name,
  });
  const secret = withAdditionalMetadata(
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name,
        namespace: ref.namespace,
        labels: { 'app.kubernetes.io/managed-by': 'etcd-conductor', 'app.kubernetes.io/instance': ref.name },
        ownerReferences: [ownerReference(ref)],
      },
      type: 'Opaque',
      data,
    },
    cluster?.spec,
  );
  const created = await kube.createIfAbsent(secret as KubernetesObject);
  if (created === 'exists') {
    await kube.mergePatch({ apiVersion: 'v1', kind: 'Secret', namespace: ref.namespace, name }, { data });
  }
}

/**
 * The contributor worker/operator.ts registers: the root user and password for a cluster with spec.auth.
 * The applied copy comes first: it is what etcd has, so a password just changed in the user's Secret does not
 * lock the operator out before RotateAuth applies it. Without a copy, the user's Secret's. A cluster without
 * auth, or with neither, gets none: before auth is enabled calls work without, and afterwards etcd's refusal
 * ("user name is empty") says what is missing, while the EnableAuth step and status name the Secret's problem.
 */
export function authConnection(kube: KubeObjects): ConnectionContributor {
  return async (cluster) => {
    const c = await readRootCredentials(kube, cluster);
    if (!c.ok && c.problem === undefined) return {};
    const applied = await readAppliedPassword(kube, cluster);
    if (applied !== undefined) return { auth: { username: ROOT_USER, password: applied } };
    return c.ok ? { auth: { username: c.username, password: c.password } } : {};
  };
}
