// The certificates of spec.tls.mode Auto: what each one says (pure, tested as tables) and how it is signed (X.509 DER built here, signed with node:crypto).
//
// Node's crypto parses X.509 but cannot build it, and a certificate is a short DER structure: building it here
// (ECDSA P-256 with SHA-256 only) costs about as much code as wiring a library and adds no dependency. Every
// certificate it makes is read back with node:crypto's X509Certificate in the tests, and etcd (Go) reads it in
// the e2e test. Invariant: no certificate outlives the CA that signs it.
import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import type { KeyObject, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import type { AutoTLSLifetimes } from '../crds/etcd-cluster';
import { AUTO_TLS_DEFAULTS } from '../crds/etcd-cluster';
import type { TLSRole } from '../crds/tls-names';
import { peerDnsNames, serverDnsNames } from '../crds/tls-names';
import { OPERATOR_CLIENT_CN } from './tls-certificates';

type Ref = { namespace: string; name: string };

/** What a certificate says; signCertificate turns it into DER. */
export interface CertificateRequest {
  commonName: string;
  isCA: boolean;
  dnsNames: string[];
  ipAddresses: string[];
  /** Extended key usages of a leaf; none on the CA. */
  usages: ('serverAuth' | 'clientAuth')[];
  notBefore: Date;
  notAfter: Date;
}

/** A certificate is valid from a little before it was made, so a clock slightly behind the operator's accepts it. */
export const BACKDATE_MS = 5 * 60_000;

const DURATION = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;

/** A duration of the CRD's form ("2160h", "1h30m", "90s") in milliseconds; undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  const m = DURATION.exec(text);
  if (!m || text === '') return undefined;
  const [h, min, s] = [m[1], m[2], m[3]].map((x) => Number(x ?? 0));
  return (((h ?? 0) * 60 + (min ?? 0)) * 60 + (s ?? 0)) * 1000;
}

export interface LifetimesMs {
  ca: number;
  certificate: number;
  renewBefore: number;
}

/** spec.tls.auto in milliseconds, defaults for what is left out or does not parse (the CRD's pattern refuses that). */
export function lifetimesOf(auto: Partial<AutoTLSLifetimes> | undefined): LifetimesMs {
  const of = (v: string | undefined, d: string) => parseDuration(v ?? d) ?? (parseDuration(d) as number);
  return {
    ca: of(auto?.caDuration, AUTO_TLS_DEFAULTS.caDuration),
    certificate: of(auto?.certificateDuration, AUTO_TLS_DEFAULTS.certificateDuration),
    renewBefore: of(auto?.renewBefore, AUTO_TLS_DEFAULTS.renewBefore),
  };
}

/** The CA's common name: the cluster's, and when it was made, so a renewed CA never shares a subject with the old one. */
export function caCommonName(ref: Ref, now: Date): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `etcd-conductor CA ${ref.namespace}/${ref.name} ${stamp}`;
}

/** The CA of a cluster made at `now`. */
export function caRequest(ref: Ref, now: Date, lifetimes: LifetimesMs): CertificateRequest {
  return {
    commonName: caCommonName(ref, now),
    isCA: true,
    dnsNames: [],
    ipAddresses: [],
    usages: [],
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    notAfter: new Date(now.getTime() + lifetimes.ca),
  };
}

/**
 * A leaf of a role, made at `now` under a CA valid until `caNotAfter`. Peer and serving certificates carry both
 * usages (peers authenticate both ends; etcd's gateway dials its own client port with the serving one) and the
 * names cert-manager's Certificates carry (crds/tls-names.ts); the serving one also localhost and 127.0.0.1 for
 * a client through a port-forward. The operator's and the users' client certificates carry no names.
 */
export function leafRequest(
  role: TLSRole,
  ref: Ref,
  now: Date,
  lifetimes: LifetimesMs,
  caNotAfter: Date,
): CertificateRequest {
  const both: CertificateRequest['usages'] = ['serverAuth', 'clientAuth'];
  const names: Record<
    TLSRole,
    Pick<CertificateRequest, 'commonName' | 'dnsNames' | 'ipAddresses' | 'usages'>
  > = {
    peer: { commonName: `${ref.name}-peer`, dnsNames: peerDnsNames(ref), ipAddresses: [], usages: both },
    server: {
      commonName: `${ref.name}-server`,
      dnsNames: [...serverDnsNames(ref), 'localhost'],
      ipAddresses: ['127.0.0.1'],
      usages: both,
    },
    operator: { commonName: OPERATOR_CLIENT_CN, dnsNames: [], ipAddresses: [], usages: ['clientAuth'] },
    client: { commonName: `${ref.name}-client`, dnsNames: [], ipAddresses: [], usages: ['clientAuth'] },
  };
  const notAfter = Math.min(now.getTime() + lifetimes.certificate, caNotAfter.getTime());
  return {
    ...names[role],
    isCA: false,
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    notAfter: new Date(notAfter),
  };
}

/** A fresh ECDSA P-256 key pair. */
export function newKeyPair(): { privateKey: KeyObject; publicKey: KeyObject } {
  return generateKeyPairSync('ec', { namedCurve: 'P-256' });
}

// --- DER, as much of it as a certificate needs -------------------------------------------------------------

function lengthBytes(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v % 256);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

const tlv = (tag: number, ...parts: Buffer[]) => {
  const body = Buffer.concat(parts);
  return Buffer.concat([Buffer.from([tag]), lengthBytes(body.length), body]);
};
const seq = (...parts: Buffer[]) => tlv(0x30, ...parts);
const set = (...parts: Buffer[]) => tlv(0x31, ...parts);
const utf8 = (s: string) => tlv(0x0c, Buffer.from(s, 'utf8'));
const octets = (b: Buffer) => tlv(0x04, b);
const bool = (b: boolean) => tlv(0x01, Buffer.from([b ? 0xff : 0]));

function oid(dotted: string): Buffer {
  const [a = 0, b = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [40 * a + b];
  for (const v of rest) {
    const chunk = [v & 0x7f];
    for (let x = Math.floor(v / 128); x > 0; x = Math.floor(x / 128)) chunk.unshift(0x80 | (x & 0x7f));
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

/** A non-negative INTEGER from big-endian bytes. */
function integer(b: Buffer): Buffer {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  const body = b.subarray(i);
  return tlv(0x02, (body[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), body]) : body);
}

/** UTCTime through 2049, GeneralizedTime after (RFC 5280 4.1.2.5). */
function time(d: Date): Buffer {
  const iso = d
    .toISOString()
    .replace(/[-:T]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return d.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(iso.slice(2))) : tlv(0x18, Buffer.from(iso));
}

/** A KeyUsage BIT STRING with these bits set (bit 0 first), in DER's shortest form. */
export function keyUsageBits(bits: number[]): Buffer {
  const last = Math.max(...bits);
  const bytes = Buffer.alloc(Math.floor(last / 8) + 1);
  for (const bit of bits)
    bytes[Math.floor(bit / 8)] = (bytes[Math.floor(bit / 8)] ?? 0) | (0x80 >> (bit % 8));
  return tlv(0x03, Buffer.from([7 - (last % 8)]), bytes);
}

const OID = {
  ecdsaWithSHA256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  subjectKeyId: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  authorityKeyId: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
} as const;

const KEY_USAGE = { digitalSignature: 0, keyCertSign: 5, cRLSign: 6 } as const;

const extension = (id: string, critical: boolean, value: Buffer) =>
  seq(oid(id), ...(critical ? [bool(true)] : []), octets(value));

function name(commonName: string): Buffer {
  return seq(
    set(seq(oid(OID.organization), utf8('etcd-conductor'))),
    set(seq(oid(OID.commonName), utf8(commonName))),
  );
}

function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map(Number));
  throw new Error(`only IPv4 addresses go into certificates here, not ${ip}`);
}

/** A key identifier: SHA-1 of the public key's DER (RFC 5280 4.2.1.2 allows any unique method). */
const keyId = (publicKey: KeyObject) =>
  createHash('sha1')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest();

/** Reads one DER element at `at`: its whole bytes and where its contents start. */
function element(der: Buffer, at: number): { whole: Buffer; contentAt: number; end: number } {
  const first = der[at + 1] ?? 0;
  let length = first;
  let header = 2;
  if (first & 0x80) {
    const n = first & 0x7f;
    length = 0;
    for (let i = 0; i < n; i++) length = length * 256 + (der[at + 2 + i] ?? 0);
    header = 2 + n;
  }
  return { whole: der.subarray(at, at + header + length), contentAt: at + header, end: at + header + length };
}

/** The subject Name of a DER certificate, byte for byte (an issuer must match it exactly in Go's chain building). */
export function subjectDer(certificateDer: Buffer): Buffer {
  const tbs = element(certificateDer, element(certificateDer, 0).contentAt);
  let at = tbs.contentAt;
  // version [0], serialNumber, signature, issuer, validity, subject
  if (certificateDer[at] === 0xa0) at = element(certificateDer, at).end;
  for (let i = 0; i < 4; i++) at = element(certificateDer, at).end;
  return element(certificateDer, at).whole;
}

/** Who signs: the CA's key and certificate; absent for the CA itself, which signs its own. */
export interface Issuer {
  privateKey: KeyObject;
  certificate: X509Certificate;
}

/** Builds and signs a certificate for `publicKey`; returns it as PEM. */
export function signCertificate(
  req: CertificateRequest,
  publicKey: KeyObject,
  signer: Issuer | { selfSigned: KeyObject },
): string {
  const self = 'selfSigned' in signer;
  const signingKey = self ? signer.selfSigned : signer.privateKey;
  const issuerName = self ? name(req.commonName) : subjectDer(signer.certificate.raw);
  const issuerKeyId = keyId(self ? publicKey : signer.certificate.publicKey);
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f || 1;
  const algorithm = seq(oid(OID.ecdsaWithSHA256));
  const sans = [
    ...req.dnsNames.map((d) => tlv(0x82, Buffer.from(d, 'ascii'))),
    ...req.ipAddresses.map((ip) => tlv(0x87, ipBytes(ip))),
  ];
  const extensions = [
    extension(OID.basicConstraints, true, req.isCA ? seq(bool(true)) : seq()),
    extension(
      OID.keyUsage,
      true,
      keyUsageBits(
        req.isCA
          ? [KEY_USAGE.digitalSignature, KEY_USAGE.keyCertSign, KEY_USAGE.cRLSign]
          : [KEY_USAGE.digitalSignature],
      ),
    ),
    ...(req.usages.length > 0
      ? [extension(OID.extKeyUsage, false, seq(...req.usages.map((u) => oid(OID[u]))))]
      : []),
    ...(sans.length > 0 ? [extension(OID.subjectAltName, false, seq(...sans))] : []),
    extension(OID.subjectKeyId, false, octets(keyId(publicKey))),
    ...(self ? [] : [extension(OID.authorityKeyId, false, seq(tlv(0x80, issuerKeyId)))]),
  ];
  const tbs = seq(
    tlv(0xa0, integer(Buffer.from([2]))),
    integer(serial),
    algorithm,
    issuerName,
    seq(time(req.notBefore), time(req.notAfter)),
    name(req.commonName),
    publicKey.export({ type: 'spki', format: 'der' }),
    tlv(0xa3, seq(...extensions)),
  );
  const signature = sign('sha256', tbs, signingKey);
  const der = seq(tbs, algorithm, tlv(0x03, Buffer.from([0]), signature));
  const body = der.toString('base64').replace(/.{64}/g, '$&\n');
  return `-----BEGIN CERTIFICATE-----\n${body.trimEnd()}\n-----END CERTIFICATE-----\n`;
}

/** A private key as the PEM etcd and Node read (PKCS #8). */
export const keyPem = (key: KeyObject) => key.export({ type: 'pkcs8', format: 'pem' }).toString();
