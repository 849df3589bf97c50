// Reads a cluster's TLS material inside the worker: the operator's client credentials for every etcd call, the CA hash a member Pod carries, and the cert-manager Certificates spec.tls asks for.
//
// Invariant: keys and certificates go from the Secret straight into the etcd client or a hash; they never
// enter an activity's input or result, so none reaches Temporal payloads, history, logs or status.
import { createHash } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import type { KubernetesObject } from '@kubernetes/client-node';
import { FailureTypes } from '../crds/conditions';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { API_VERSION, ETCD_CLUSTER } from '../crds/etcd-cluster';
import { anyTLSOn, tlsSecretNames } from '../crds/tls-names';
import type { ClusterKey, ConnectionContributor, EtcdConnectionOptions } from './etcd-connection';
import type { KubeObjects } from './kube-objects';
import { CERTIFICATE_KIND, tlsCertificates } from './tls-certificates';
import { ensureAppliedCopies } from './issued-tls';
import { issueAutoTLS } from './auto-tls';

type TLSSpec = Pick<EtcdClusterSpec, 'tls' | 'additionalMetadata'>;
type SecretLike = KubernetesObject & { data?: Record<string, string> };
type ClusterLike = KubernetesObject & { spec?: Partial<EtcdClusterSpec> };

export const TLS_KEYS = ['tls.crt', 'tls.key', 'ca.crt'] as const;
type TLSKey = (typeof TLS_KEYS)[number];

/**
 * A Secret's tls.crt, tls.key and ca.crt. A missing Secret or key is a plain Error (retried): the user or
 * cert-manager may still be creating it, and the message says which one is awaited.
 */
export async function readTLSSecret(
  kube: KubeObjects,
  namespace: string,
  name: string,
  purpose: string,
): Promise<Record<TLSKey, Buffer>> {
  const secret = await kube.read<SecretLike>({ apiVersion: 'v1', kind: 'Secret', namespace, name });
  if (!secret) throw new Error(`the Secret ${namespace}/${name} (${purpose}) does not exist yet`);
  const missing = TLS_KEYS.filter((k) => !secret.data?.[k]);
  if (missing.length > 0)
    throw new Error(
      `the Secret ${namespace}/${name} (${purpose}) lacks ${missing.join(', ')}: it needs tls.crt, tls.key and ca.crt`,
    );
  const data = secret.data ?? {};
  return Object.fromEntries(TLS_KEYS.map((k) => [k, Buffer.from(data[k] ?? '', 'base64')])) as Record<
    TLSKey,
    Buffer
  >;
}

async function readClusterSpec(kube: KubeObjects, cluster: ClusterKey): Promise<TLSSpec | undefined> {
  const obj = await kube.read<ClusterLike>({
    apiVersion: API_VERSION,
    kind: ETCD_CLUSTER.kind,
    namespace: cluster.namespace,
    name: cluster.name,
  });
  return obj?.spec;
}

/**
 * The operator's client credentials for a cluster with spec.tls.client: its own certificate and key, and the
 * CA it trusts for the members' serving certificates, all from the operator Secret. {} without client TLS.
 */
export function tlsConnection(kube: KubeObjects): ConnectionContributor {
  return async (cluster): Promise<Partial<EtcdConnectionOptions>> => {
    const spec = await readClusterSpec(kube, cluster);
    const operator = spec ? tlsSecretNames(spec, cluster.name).operator : undefined;
    if (!operator) return {};
    const s = await readTLSSecret(
      kube,
      cluster.namespace,
      operator,
      `the operator's client certificate for ${cluster.namespace}/${cluster.name}`,
    );
    return {
      credentials: { rootCertificate: s['ca.crt'], certChain: s['tls.crt'], privateKey: s['tls.key'] },
    };
  };
}

/** Short hex digest of the CA bundles, peer first: equal bundles give equal hashes in every worker. */
export function caBundleHash(bundles: { peer?: Buffer; server?: Buffer }): string {
  const h = createHash('sha256');
  h.update('peer\0');
  if (bundles.peer) h.update(bundles.peer);
  h.update('\0server\0');
  if (bundles.server) h.update(bundles.server);
  return h.digest('hex').slice(0, 16);
}

/** The annotation cert-manager puts on a Secret it issued, naming the Certificate. */
const CERT_MANAGER_CERTIFICATE_NAME = 'cert-manager.io/certificate-name';

/**
 * cert-manager leaves the Secret it issues for a Certificate behind when the Certificate is deleted (unless it
 * runs with --enable-certificate-owner-ref): so the cluster owns it too (not as controller: cert-manager
 * keeps writing it), and deleting the EtcdCluster deletes it. Only a Secret cert-manager issued for this very
 * Certificate is touched; not there yet (still issuing) means later.
 */
export async function ownIssuedSecret(
  kube: KubeObjects,
  ref: { namespace: string; name: string; uid: string },
  certificate: string,
): Promise<'owned' | 'not-issued'> {
  const target = { apiVersion: 'v1', kind: 'Secret', namespace: ref.namespace, name: certificate };
  const secret = await kube.read<KubernetesObject>(target);
  if (secret?.metadata?.annotations?.[CERT_MANAGER_CERTIFICATE_NAME] !== certificate) return 'not-issued';
  const owners = secret.metadata.ownerReferences ?? [];
  if (owners.some((o) => o.uid === ref.uid)) return 'owned';
  await kube.mergePatch(target, {
    metadata: {
      // A merge patch replaces the list: the owners it had stay in it.
      ownerReferences: [
        ...owners,
        { apiVersion: API_VERSION, kind: ETCD_CLUSTER.kind, name: ref.name, uid: ref.uid },
      ],
      resourceVersion: secret.metadata.resourceVersion,
    },
  });
  return 'owned';
}

/**
 * Creates the cert-manager Certificates spec.tls asks for (none when every half names a Secret). Without the
 * cert-manager CRDs no retry helps: that is a non-retryable CertManagerMissing.
 */
export async function ensureTLSCertificates(
  kube: KubeObjects,
  ref: { namespace: string; name: string; uid: string },
  spec: TLSSpec,
): Promise<void> {
  for (const cert of tlsCertificates(ref, spec)) {
    try {
      await kube.createIfAbsent(cert);
    } catch (err) {
      const text = err instanceof Error ? err.message : String(err);
      if (/unrecognized api version and kind|could not find the requested resource|404/i.test(text))
        throw ApplicationFailure.nonRetryable(
          `spec.tls names a cert-manager issuer, but the ${CERTIFICATE_KIND} kind (cert-manager.io/v1) is not installed: install cert-manager or give the certificates as Secrets (secretName)`,
          FailureTypes.CertManagerMissing,
        );
      throw err;
    }
    await ownIssuedSecret(kube, ref, cert.metadata.name);
  }
}

/**
 * Everything a member Pod needs from spec.tls before it is created: the Certificates exist (issuerRef), the
 * Secrets exist with all three keys, and the hash of the CA bundles the member will trust (undefined without
 * TLS). The hash goes on the Pod, so a CA change changes the rendered Pod and the rollout rolls members.
 */
export async function prepareMemberTLS(
  kube: KubeObjects,
  ref: { namespace: string; name: string; uid: string },
  spec: TLSSpec,
): Promise<{ caHash?: string }> {
  if (!anyTLSOn(spec)) return {};
  // mode Auto: the operator issues what cert-manager would, if the cluster workflow has not yet (it renews).
  await issueAutoTLS(kube, ref, spec, new Date(), 'missing');
  await ensureTLSCertificates(kube, ref, spec);
  // Members mount the operator's copies of what cert-manager issues (activities/issued-tls.ts).
  await ensureAppliedCopies(kube, ref, spec);
  return memberTLSHash(kube, ref, spec);
}

/** The hash of the CA bundles members trust (undefined without TLS), read without creating anything: what observation compares Pods with. */
export async function memberTLSHash(
  kube: KubeObjects,
  ref: { namespace: string; name: string },
  spec: TLSSpec,
): Promise<{ caHash?: string }> {
  if (!anyTLSOn(spec)) return {};
  const names = tlsSecretNames(spec, ref.name);
  const [peer, server] = await Promise.all([
    names.peer ? readTLSSecret(kube, ref.namespace, names.peer, 'spec.tls.peer') : undefined,
    names.server ? readTLSSecret(kube, ref.namespace, names.server, 'spec.tls.client') : undefined,
  ]);
  return {
    caHash: caBundleHash({
      ...(peer ? { peer: peer['ca.crt'] } : {}),
      ...(server ? { server: server['ca.crt'] } : {}),
    }),
  };
}
