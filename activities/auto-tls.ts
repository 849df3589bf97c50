// Issues and renews the certificates of spec.tls.mode Auto: the cluster's CA (Secret <cluster>-ca) and the peer, serving, operator and client certificates, written where cert-manager would write them, so the staged copies (activities/issued-tls.ts) roll them in without downtime.
//
// Invariants: one CA per cluster at a time (created with create-if-absent, so a retry or a second worker adopts
// the one that won; replaced only when it is due, with the resourceVersion it was read at); keys go from
// node:crypto into the cluster's Secrets and nowhere else: only names and dates leave this module.
import { X509Certificate } from 'node:crypto';
import { createPrivateKey } from 'node:crypto';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { Labels } from '../crds/labels';
import type { TLSRole } from '../crds/tls-names';
import { autoCASecretName, autoTLSOn, issuedTLSSecrets } from '../crds/tls-names';
import { withAdditionalMetadata } from './additional-metadata';
import type { LifetimesMs } from './auto-tls-certificates';
import {
  caRequest,
  keyPem,
  leafRequest,
  lifetimesOf,
  newKeyPair,
  signCertificate,
} from './auto-tls-certificates';
import type { KubeObjects } from './kube-objects';
import { ownerReference } from './member-manifests';
import { chainTrusted, parsePemBundle } from './tls-trust';

type TLSSpec = Pick<EtcdClusterSpec, 'tls' | 'additionalMetadata'>;
type Ref = { namespace: string; name: string; uid: string };
type SecretLike = KubernetesObject & { data?: Record<string, string> };

/** What is known of the CA and of one issued leaf: dates and whether the leaf belongs to the current CA. */
export interface AutoTLSFacts {
  ca?: { notAfter: number };
  leaves: {
    role: TLSRole;
    /** Absent: no such Secret yet (or one that does not parse). */
    notAfter?: number;
    /** Signed by the current CA, and its ca.crt is that CA alone. */
    ofCurrentCA: boolean;
  }[];
}

export interface AutoTLSPlan {
  /** Make the CA (none yet) or renew it (due). */
  ca: 'create' | 'renew' | 'keep';
  /** Leaves to issue: missing, of another CA, or due. */
  issue: TLSRole[];
}

/**
 * What to do now. A CA is renewed renewBefore ahead of its expiry, and so is each leaf; a leaf of another CA
 * (the CA was just renewed) is reissued at once. Pure.
 */
export function planAutoTLS(facts: AutoTLSFacts, lifetimes: LifetimesMs, now: number): AutoTLSPlan {
  const due = (notAfter: number) => now >= notAfter - lifetimes.renewBefore;
  const ca = !facts.ca ? 'create' : due(facts.ca.notAfter) ? 'renew' : 'keep';
  const issue = facts.leaves
    .filter((l) => ca !== 'keep' || l.notAfter === undefined || !l.ofCurrentCA || due(l.notAfter))
    .map((l) => l.role);
  return { ca, issue };
}

/** When something is next due: the earliest renewal time of the CA and the leaves (after the plan ran). */
export function nextRenewal(facts: AutoTLSFacts, lifetimes: LifetimesMs): number | undefined {
  const times = [facts.ca?.notAfter, ...facts.leaves.map((l) => l.notAfter)].filter(
    (t): t is number => t !== undefined,
  );
  return times.length === 0 ? undefined : Math.min(...times) - lifetimes.renewBefore;
}

/** The result: dates and what changed, in words; never a key or a certificate. */
export interface AutoTLSResult {
  /** RFC 3339. */
  caNotAfter: string;
  /** RFC 3339: the first leaf to expire. */
  certificatesNotAfter: string;
  /** RFC 3339: when the next renewal is due. */
  renewalTime: string;
  /** What this call did, e.g. "created the CA prod/main-ca"; empty when nothing was due. */
  changes: string[];
  /** The CA was renewed by this call. */
  caRenewed: boolean;
}

const secretRef = (namespace: string, name: string) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  namespace,
  name,
});
const b64 = (s: string) => Buffer.from(s).toString('base64');
const text = (o: SecretLike | undefined, key: string) =>
  o?.data?.[key] ? Buffer.from(o.data[key], 'base64').toString() : undefined;

function secretManifest(ref: Ref, spec: TLSSpec, name: string, data: Record<string, string>, role: string) {
  return withAdditionalMetadata(
    {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/tls',
      metadata: {
        name,
        namespace: ref.namespace,
        labels: { 'app.kubernetes.io/managed-by': 'etcd-conductor', [Labels.cluster]: ref.name },
        annotations: { 'etcd.conductor.dev/auto-tls': role },
        ownerReferences: [ownerReference(ref)],
      },
      data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
    },
    spec,
  );
}

interface CA {
  cert: X509Certificate;
  pem: string;
  key: ReturnType<typeof createPrivateKey>;
  object: SecretLike;
}

function caOf(o: SecretLike | undefined): CA | undefined {
  const pem = text(o, 'tls.crt');
  const key = text(o, 'tls.key');
  if (!o || !pem || !key) return undefined;
  return { cert: new X509Certificate(pem), pem, key: createPrivateKey(key), object: o };
}

async function readCA(kube: KubeObjects, ref: Ref): Promise<CA | undefined> {
  return caOf(await kube.read<SecretLike>(secretRef(ref.namespace, autoCASecretName(ref.name))));
}

/** The CA Secret's contents for a new CA made at `now`. */
function makeCA(ref: Ref, now: Date, lifetimes: LifetimesMs): Record<string, string> {
  const keys = newKeyPair();
  const pem = signCertificate(caRequest(ref, now, lifetimes), keys.publicKey, {
    selfSigned: keys.privateKey,
  });
  return { 'tls.crt': pem, 'tls.key': keyPem(keys.privateKey) };
}

async function ensureCA(
  kube: KubeObjects,
  ref: Ref,
  spec: TLSSpec,
  plan: AutoTLSPlan['ca'],
  current: CA | undefined,
  now: Date,
  lifetimes: LifetimesMs,
): Promise<CA> {
  const name = autoCASecretName(ref.name);
  if (plan === 'create') {
    // Whoever creates it first wins; a retry or a racing attempt reads and adopts that one.
    await kube.createIfAbsent(secretManifest(ref, spec, name, makeCA(ref, now, lifetimes), 'ca'));
  } else if (plan === 'renew' && current) {
    await kube.mergePatch(secretRef(ref.namespace, name), {
      // A conflict (another attempt renewed it since the read) fails the patch; the retry finds it renewed.
      metadata: { resourceVersion: current.object.metadata?.resourceVersion },
      data: Object.fromEntries(Object.entries(makeCA(ref, now, lifetimes)).map(([k, v]) => [k, b64(v)])),
    });
  }
  const ca = await readCA(kube, ref);
  if (!ca) throw new Error(`the CA Secret ${ref.namespace}/${name} is not readable yet`);
  return ca;
}

async function readFacts(
  kube: KubeObjects,
  ref: Ref,
  spec: TLSSpec,
  ca: CA | undefined,
): Promise<{ facts: AutoTLSFacts; objects: Map<TLSRole, SecretLike | undefined> }> {
  const objects = new Map<TLSRole, SecretLike | undefined>();
  const leaves: AutoTLSFacts['leaves'] = [];
  for (const s of issuedTLSSecrets(spec, ref.name)) {
    const o = await kube.read<SecretLike>(secretRef(ref.namespace, s.issued));
    objects.set(s.role, o);
    const [leaf] = parsePemBundle(Buffer.from(text(o, 'tls.crt') ?? ''));
    const bundle = parsePemBundle(Buffer.from(text(o, 'ca.crt') ?? ''));
    const ofCurrentCA =
      ca !== undefined &&
      leaf !== undefined &&
      text(o, 'tls.key') !== undefined &&
      chainTrusted([leaf], [ca.cert]) &&
      bundle.length === 1 &&
      bundle[0]?.fingerprint256 === ca.cert.fingerprint256;
    leaves.push({ role: s.role, ofCurrentCA, ...(leaf ? { notAfter: Date.parse(leaf.validTo) } : {}) });
  }
  return {
    facts: { ...(ca ? { ca: { notAfter: Date.parse(ca.cert.validTo) } } : {}), leaves },
    objects,
  };
}

/** A plan cut down to making what does not exist yet: no renewal (the cluster workflow renews, and tells it). */
const missingOnly = (plan: AutoTLSPlan, facts: AutoTLSFacts): AutoTLSPlan => ({
  ca: plan.ca === 'create' ? 'create' : 'keep',
  issue: plan.issue.filter((r) => facts.leaves.find((l) => l.role === r)?.notAfter === undefined),
});

/**
 * Makes what is missing and renews what is due (only what is missing with `only: 'missing'`, as before a member
 * Pod is created), then says when the next renewal is. Idempotent: a second call right after changes nothing.
 * Throws (retried) on a conflict with a concurrent attempt.
 */
export async function issueAutoTLS(
  kube: KubeObjects,
  ref: Ref,
  spec: TLSSpec,
  now = new Date(),
  only: 'due' | 'missing' = 'due',
): Promise<AutoTLSResult | undefined> {
  if (!autoTLSOn(spec)) return undefined;
  const lifetimes = lifetimesOf(spec.tls?.auto);
  const cut = (p: AutoTLSPlan, f: AutoTLSFacts) => (only === 'missing' ? missingOnly(p, f) : p);
  const changes: string[] = [];
  const current = await readCA(kube, ref);
  const first = await readFacts(kube, ref, spec, current);
  const plan = cut(planAutoTLS(first.facts, lifetimes, now.getTime()), first.facts);
  const ca = await ensureCA(kube, ref, spec, plan.ca, current, now, lifetimes);
  const caName = `${ref.namespace}/${autoCASecretName(ref.name)}`;
  if (plan.ca === 'create' && (!current || current.cert.fingerprint256 !== ca.cert.fingerprint256))
    changes.push(`created the CA ${caName} (valid until ${ca.cert.validTo})`);
  if (plan.ca === 'renew') changes.push(`renewed the CA ${caName} (valid until ${ca.cert.validTo})`);
  // Judged again against the CA now in place: a CA just made or renewed needs every leaf issued under it.
  const { facts, objects } = await readFacts(kube, ref, spec, ca);
  const issue = cut(planAutoTLS(facts, lifetimes, now.getTime()), facts).issue;
  for (const s of issuedTLSSecrets(spec, ref.name).filter((x) => issue.includes(x.role))) {
    const keys = newKeyPair();
    const req = leafRequest(s.role, ref, now, lifetimes, new Date(Date.parse(ca.cert.validTo)));
    const data = {
      'tls.crt': signCertificate(req, keys.publicKey, { privateKey: ca.key, certificate: ca.cert }),
      'tls.key': keyPem(keys.privateKey),
      'ca.crt': ca.pem,
    };
    const existing = objects.get(s.role);
    if (existing)
      await kube.mergePatch(secretRef(ref.namespace, s.issued), {
        metadata: { resourceVersion: existing.metadata?.resourceVersion },
        data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
      });
    else await kube.createIfAbsent(secretManifest(ref, spec, s.issued, data, s.role));
    changes.push(
      `${existing ? 'renewed' : 'issued'} the ${s.role} certificate ${ref.namespace}/${s.issued} (valid until ${req.notAfter.toISOString()})`,
    );
  }
  const after = issue.length > 0 ? (await readFacts(kube, ref, spec, ca)).facts : facts;
  const leafEnds = after.leaves.map((l) => l.notAfter ?? 0);
  const renewal = nextRenewal(after, lifetimes) ?? now.getTime();
  return {
    caNotAfter: new Date(Date.parse(ca.cert.validTo)).toISOString(),
    certificatesNotAfter: new Date(Math.min(...leafEnds)).toISOString(),
    renewalTime: new Date(renewal).toISOString(),
    changes,
    caRenewed: plan.ca === 'renew',
  };
}
