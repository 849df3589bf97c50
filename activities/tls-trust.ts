// Judges whether the CA bundles (ca.crt) a cluster's TLS Secrets hold trust the leaf certificates (tls.crt) those Secrets hold, so a rollout never restarts a member into a trust that isolates it.
//
// etcd reads its trusted CA files only at start: a member restarted on a ca.crt that does not verify the
// certificates its peers (and the operator) present refuses them all and stays cut off. The judgement is a
// pure function of PEM bytes; readTLSTrust reads the Secrets inside the worker and returns only a verdict and
// a message, so no key or certificate reaches Temporal.
import { X509Certificate } from 'node:crypto';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { anyTLSOn, tlsSecretNames } from '../crds/tls-names';
import { readTLSSecret } from './etcd-tls';
import type { KubeObjects } from './kube-objects';

/** One certificate chain that members must trust, and the bundle a restarted member would trust it with. */
export interface TrustPair {
  /** The certificate in words, e.g. "the peer certificate (tls.crt of Secret prod/main-peer)". */
  certificate: string;
  /** tls.crt: the leaf, possibly followed by intermediates. */
  chain: Buffer;
  /** The bundle in words, e.g. "ca.crt of Secret prod/main-peer". */
  bundle: string;
  /** ca.crt: one or more CA certificates. */
  trust: Buffer;
}

export type TLSTrustVerdict = { trusted: true } | { trusted: false; message: string };

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** Every certificate in a PEM bundle, in order; a block that does not parse is left out. */
export function parsePemBundle(pem: Buffer): X509Certificate[] {
  const blocks = pem.toString('utf8').match(PEM_BLOCK) ?? [];
  const certs: X509Certificate[] = [];
  for (const block of blocks) {
    try {
      certs.push(new X509Certificate(block));
    } catch {
      // An unparsable block verifies nothing; what remains is judged on its own.
    }
  }
  return certs;
}

// Issued by: the issuer name matches and the signature checks out with the issuer's key (as Go's x509 does).
const issuedBy = (cert: X509Certificate, ca: X509Certificate) =>
  cert.checkIssued(ca) && cert.verify(ca.publicKey);

/** Whether some root of `roots` signed the leaf, directly or through the chain's own intermediates. */
export function chainTrusted(chain: readonly X509Certificate[], roots: readonly X509Certificate[]): boolean {
  const [leaf, ...intermediates] = chain;
  let current = leaf;
  // Bounded: a chain longer than what a Secret carries is no real chain.
  for (let depth = 0; current && depth <= intermediates.length; depth++) {
    const at: X509Certificate = current;
    if (roots.some((r) => issuedBy(at, r))) return true;
    current = intermediates.find((i) => i !== at && issuedBy(at, i));
  }
  return false;
}

const subjectCN = (cert: X509Certificate) => /CN=([^\n,]+)/.exec(cert.subject)?.[1] ?? cert.subject;
const issuerCN = (cert: X509Certificate) => /CN=([^\n,]+)/.exec(cert.issuer)?.[1] ?? cert.issuer;

const ADVICE =
  'to rotate the CA, first put the new CA next to the old one in every ca.crt and let the members roll, then reissue the certificates from the new CA, and only then drop the old CA';

/**
 * Whether every pair's bundle verifies its chain. The first pair that fails is named in plain words, with
 * what to do; the rollout that would restart members on these bundles waits until it is fixed.
 */
export function judgeTLSTrust(pairs: readonly TrustPair[]): TLSTrustVerdict {
  for (const p of pairs) {
    const roots = parsePemBundle(p.trust);
    if (roots.length === 0)
      return {
        trusted: false,
        message: `${p.bundle} holds no certificate, so a member restarted on it would trust nobody; members are not restarted until it holds the CA(s) that sign the cluster's certificates`,
      };
    const chain = parsePemBundle(p.chain);
    const leaf = chain[0];
    if (!leaf)
      return {
        trusted: false,
        message: `${p.certificate} holds no certificate; members are not restarted until it does`,
      };
    if (!chainTrusted(chain, roots)) {
      const cas = roots.map(subjectCN).join(', ');
      return {
        trusted: false,
        message: `${p.bundle} (${cas}) does not trust ${p.certificate} (CN=${subjectCN(leaf)}, issued by ${issuerCN(leaf)}): a member restarted on it would refuse the others and be cut off, so members are not restarted; ${ADVICE}`,
      };
    }
  }
  return { trusted: true };
}

type TLSSpec = Pick<EtcdClusterSpec, 'tls'>;

/**
 * The pairs a cluster's spec.tls makes members depend on, read from its Secrets: the peer ca.crt must
 * verify the peer certificate (members present it to each other); the serving ca.crt, which members use to
 * check clients, must verify the serving certificate (etcd's gateway dials its own client port with it) and
 * the operator's client certificate. Then judged; undefined without TLS.
 */
export async function readTLSTrust(
  kube: KubeObjects,
  ref: { namespace: string; name: string },
  spec: TLSSpec,
): Promise<TLSTrustVerdict | undefined> {
  if (!anyTLSOn(spec)) return undefined;
  const names = tlsSecretNames(spec, ref.name);
  const read = (name: string | undefined, purpose: string) =>
    name ? readTLSSecret(kube, ref.namespace, name, purpose) : undefined;
  const [peer, server, operator] = await Promise.all([
    read(names.peer, 'spec.tls.peer'),
    read(names.server, 'spec.tls.client'),
    read(names.operator, "the operator's client certificate"),
  ]);
  const of = (name: string | undefined) => `Secret ${ref.namespace}/${name ?? '?'}`;
  const pairs: TrustPair[] = [];
  if (peer)
    pairs.push({
      certificate: `the peer certificate (tls.crt of ${of(names.peer)})`,
      chain: peer['tls.crt'],
      bundle: `the peer ca.crt of ${of(names.peer)}`,
      trust: peer['ca.crt'],
    });
  if (server) {
    const bundle = `the client ca.crt of ${of(names.server)}`;
    pairs.push({
      certificate: `the members' serving certificate (tls.crt of ${of(names.server)})`,
      chain: server['tls.crt'],
      bundle,
      trust: server['ca.crt'],
    });
    if (operator)
      pairs.push({
        certificate: `the operator's client certificate (tls.crt of ${of(names.operator)})`,
        chain: operator['tls.crt'],
        bundle,
        trust: server['ca.crt'],
      });
  }
  return judgeTLSTrust(pairs);
}
