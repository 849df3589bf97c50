// Keeps the operator's copies of the TLS Secrets cert-manager issues (what members mount and the operator connects with) and moves cert-manager's changes into them one stage at a time.
//
// Invariant: keys and certificates go from Secret to Secret inside the worker; only facts about public
// certificates (new CA, reissued, trusted) and the stage to take cross into Temporal.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { IssuedTLSObservation, IssuedTLSRoleObservation, IssuedTLSStage } from '../contracts/issued-tls';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { Labels } from '../crds/labels';
import type { IssuedTLSSecret, TLSRole } from '../crds/tls-names';
import { autoTLSOn, issuedTLSSecrets } from '../crds/tls-names';
import { readTLSSecret, TLS_KEYS } from './etcd-tls';
import { ownerReference } from './member-manifests';
import type { KubeObjects } from './kube-objects';
import { chainTrusted, parsePemBundle } from './tls-trust';
import { withAdditionalMetadata } from './additional-metadata';

type TLSSpec = Pick<EtcdClusterSpec, 'tls' | 'additionalMetadata'>;
type Ref = { namespace: string; name: string; uid: string };
type TLSData = Record<(typeof TLS_KEYS)[number], Buffer>;
type SecretLike = KubernetesObject & { data?: Record<string, string> };

/** On a copy: when the operator last put reissued certificates into it (RFC 3339). */
export const REISSUE_APPLIED_AT_ANNOTATION = 'etcd.conductor.dev/reissue-applied-at';

const secretRef = (namespace: string, name: string) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  namespace,
  name,
});

/** The CA certificates of a bundle by fingerprint, in order, each once. */
export function caBlocks(bundle: Buffer): Map<string, string> {
  const out = new Map<string, string>();
  for (const c of parsePemBundle(bundle))
    if (!out.has(c.fingerprint256)) out.set(c.fingerprint256, c.toString());
  return out;
}

/** `bundle`'s CAs followed by those of `added` it lacks, as one PEM bundle. */
export function unionBundle(bundle: Buffer, added: Buffer): Buffer {
  const all = new Map([...caBlocks(bundle), ...caBlocks(added)]);
  return Buffer.from([...all.values()].map((pem) => pem.trim()).join('\n') + '\n');
}

const sameLeaf = (a: TLSData, b: TLSData) =>
  a['tls.crt'].equals(b['tls.crt']) && a['tls.key'].equals(b['tls.key']);

interface Pair {
  secret: IssuedTLSSecret;
  issued?: TLSData;
  applied?: TLSData;
  appliedObject?: SecretLike;
}

async function readPairs(kube: KubeObjects, ref: Ref, spec: TLSSpec): Promise<Pair[]> {
  return Promise.all(
    issuedTLSSecrets(spec, ref.name).map(async (secret): Promise<Pair> => {
      const issued = await readTLSSecret(
        kube,
        ref.namespace,
        secret.issued,
        `issued ${secret.role} certificate`,
      ).catch(() => undefined);
      const appliedObject = await kube.read<SecretLike>(secretRef(ref.namespace, secret.applied));
      const applied = appliedObject
        ? await readTLSSecret(
            kube,
            ref.namespace,
            secret.applied,
            `applied ${secret.role} certificate`,
          ).catch(() => undefined)
        : undefined;
      return {
        secret,
        ...(issued ? { issued } : {}),
        ...(applied ? { applied } : {}),
        ...(appliedObject ? { appliedObject } : {}),
      };
    }),
  );
}

/**
 * Who checks a role's certificate, and with which role's ca.crt: members check peers with the peer ca.crt and
 * clients (the operator, and their own gateway) with the serving ca.crt; the operator checks members' serving
 * certificates with its own Secret's ca.crt.
 */
const CHECKED_BY: Record<TLSRole, TLSRole[]> = {
  peer: ['peer'],
  // Users' clients (mode Auto) check the serving certificate with their own Secret's ca.crt.
  server: ['server', 'operator', 'client'],
  operator: ['server'],
  client: ['server'],
};

function observeRole(p: Pair, pairs: readonly Pair[]): IssuedTLSRoleObservation {
  const { issued, applied } = p;
  const base = {
    role: p.secret.role,
    issuedReady: issued !== undefined,
    appliedExists: applied !== undefined,
  };
  if (!issued || !applied)
    return { ...base, newCA: false, oldCA: false, reissued: false, reissuedTrusted: false };
  const have = caBlocks(applied['ca.crt']);
  const want = caBlocks(issued['ca.crt']);
  const reissued = !sameLeaf(issued, applied);
  // The bundles that check this certificate, as the copies hold them now: what members restarted on them trust.
  const checkers = CHECKED_BY[p.secret.role]
    .map((role) => pairs.find((q) => q.secret.role === role)?.applied?.['ca.crt'])
    .filter((b): b is Buffer => b !== undefined);
  const chain = parsePemBundle(issued['tls.crt']);
  const reissuedTrusted = reissued && checkers.every((b) => chainTrusted(chain, parsePemBundle(b)));
  return {
    ...base,
    newCA: [...want.keys()].some((f) => !have.has(f)),
    oldCA: [...have.keys()].some((f) => !want.has(f)),
    reissued,
    reissuedTrusted,
  };
}

/** What the stages need to know, or undefined when no half of spec.tls is issued by cert-manager. Reads only. */
export async function observeIssuedTLS(
  kube: KubeObjects,
  ref: Ref,
  spec: TLSSpec,
  now = Date.now(),
): Promise<IssuedTLSObservation | undefined> {
  if (issuedTLSSecrets(spec, ref.name).length === 0) return undefined;
  const pairs = await readPairs(kube, ref, spec);
  const appliedAt = pairs
    .map((p) => Date.parse(p.appliedObject?.metadata?.annotations?.[REISSUE_APPLIED_AT_ANNOTATION] ?? ''))
    .filter((t) => !Number.isNaN(t));
  return {
    roles: pairs.map((p) => observeRole(p, pairs)),
    ...(appliedAt.length > 0 ? { reissueAppliedAgoMs: Math.max(0, now - Math.max(...appliedAt)) } : {}),
  };
}

function appliedSecret(ref: Ref, secret: IssuedTLSSecret, data: TLSData, spec: TLSSpec) {
  return withAdditionalMetadata(appliedSecretManifest(ref, secret, data), spec);
}

function appliedSecretManifest(ref: Ref, secret: IssuedTLSSecret, data: TLSData) {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: {
      name: secret.applied,
      namespace: ref.namespace,
      labels: { 'app.kubernetes.io/managed-by': 'etcd-conductor', [Labels.cluster]: ref.name },
      annotations: { 'etcd.conductor.dev/copy-of': secret.issued },
      ownerReferences: [ownerReference(ref)],
    },
    data: Object.fromEntries(TLS_KEYS.map((k) => [k, data[k].toString('base64')])),
  };
}

/**
 * The copies of the issued Secrets, made from what cert-manager issued where missing. A missing issued Secret
 * is a plain Error (retried) naming it: cert-manager may still be issuing.
 */
export async function ensureAppliedCopies(kube: KubeObjects, ref: Ref, spec: TLSSpec): Promise<void> {
  for (const secret of issuedTLSSecrets(spec, ref.name)) {
    if (await kube.read(secretRef(ref.namespace, secret.applied))) continue;
    const issued = await readTLSSecret(
      kube,
      ref.namespace,
      secret.issued,
      autoTLSOn(spec)
        ? `the ${secret.role} certificate the operator issues`
        : `the ${secret.role} certificate cert-manager issues`,
    );
    await kube.createIfAbsent(appliedSecret(ref, secret, issued, spec));
  }
}

/**
 * Takes one stage (workflows/issued-tls-plan.ts) on the copies, judged again on what the Secrets hold now, so a
 * retry, or a stage asked for on an older look, changes nothing that is already so. Returns what it changed.
 */
export async function stageIssuedTLS(
  kube: KubeObjects,
  ref: Ref,
  spec: TLSSpec,
  stage: IssuedTLSStage,
  now = new Date(),
): Promise<string[]> {
  if (stage === 'Copy') {
    await ensureAppliedCopies(kube, ref, spec);
    return issuedTLSSecrets(spec, ref.name).map((s) => s.applied);
  }
  const pairs = await readPairs(kube, ref, spec);
  const changed: string[] = [];
  for (const p of pairs) {
    const { issued, applied, appliedObject } = p;
    if (!issued || !applied || !appliedObject) continue;
    const o = observeRole(p, pairs);
    let data: Partial<TLSData> | undefined;
    let annotate = false;
    if (stage === 'TrustNewCA' && o.newCA)
      data = { 'ca.crt': unionBundle(applied['ca.crt'], issued['ca.crt']) };
    if (stage === 'ApplyReissued' && o.reissued && o.reissuedTrusted) {
      data = { 'tls.crt': issued['tls.crt'], 'tls.key': issued['tls.key'] };
      annotate = true;
    }
    if (stage === 'DropOldCA' && o.oldCA && !o.reissued) data = { 'ca.crt': issued['ca.crt'] };
    if (!data) continue;
    await kube.mergePatch(secretRef(ref.namespace, p.secret.applied), {
      metadata: {
        // A conflict (someone changed it since the read) fails the patch; the retry judges afresh.
        resourceVersion: appliedObject.metadata?.resourceVersion,
        ...(annotate ? { annotations: { [REISSUE_APPLIED_AT_ANNOTATION]: now.toISOString() } } : {}),
      },
      data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, v.toString('base64')])),
    });
    changed.push(p.secret.applied);
  }
  return changed;
}
