// The certificates mode Auto makes: what each says (tables), that node:crypto reads back what is built, and that a real TLS handshake accepts them and refuses a client without one.
import { X509Certificate } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { connect, createServer } from 'node:tls';
import {
  caCommonName,
  caRequest,
  keyPem,
  keyUsageBits,
  leafRequest,
  lifetimesOf,
  newKeyPair,
  parseDuration,
  signCertificate,
  subjectDer,
} from './auto-tls-certificates';

const ref = { namespace: 'prod', name: 'main' };
const now = new Date('2026-03-01T12:00:00.000Z');
const HOUR = 3_600_000;
const lifetimes = lifetimesOf(undefined);

test.each([
  ['hours', '2160h', 2160 * HOUR],
  ['minutes', '90m', 90 * 60_000],
  ['seconds', '45s', 45_000],
  ['hours and minutes', '1h30m', 90 * 60_000],
  ['all three', '1h1m1s', HOUR + 61_000],
  ['nothing', '', undefined],
  ['a unit Go has but the CRD does not', '10ms', undefined],
  ['days', '3d', undefined],
  ['the wrong order', '30m1h', undefined],
])('parseDuration reads %s', (_case, text, ms) => {
  expect(parseDuration(text)).toBe(ms);
});

test.each([
  ['no spec.tls.auto: the defaults (5 years, 90 days, 30 days)', undefined, [43800, 2160, 720]],
  ['a shorter certificate only', { certificateDuration: '24h' }, [43800, 24, 720]],
  ['everything given', { caDuration: '100h', certificateDuration: '10h', renewBefore: '1h' }, [100, 10, 1]],
  ['what does not parse falls back to the default', { renewBefore: 'soon' }, [43800, 2160, 720]],
])('lifetimesOf: %s', (_case, auto, [ca, cert, renew]) => {
  expect(lifetimesOf(auto)).toEqual({
    ca: (ca ?? 0) * HOUR,
    certificate: (cert ?? 0) * HOUR,
    renewBefore: (renew ?? 0) * HOUR,
  });
});

const caNotAfter = new Date(now.getTime() + lifetimes.ca);

test.each([
  [
    'peer: both usages, every member under the headless Service',
    'peer',
    {
      commonName: 'main-peer',
      dnsNames: ['*.main-peer.prod.svc', '*.main-peer.prod.svc.cluster.local'],
      ipAddresses: [],
      usages: ['serverAuth', 'clientAuth'],
    },
  ],
  [
    'server: both usages, members, the client Service, and localhost for a port-forward',
    'server',
    {
      commonName: 'main-server',
      dnsNames: [
        '*.main-peer.prod.svc',
        '*.main-peer.prod.svc.cluster.local',
        'main-client.prod.svc',
        'main-client.prod.svc.cluster.local',
        'localhost',
      ],
      ipAddresses: ['127.0.0.1'],
      usages: ['serverAuth', 'clientAuth'],
    },
  ],
  [
    "operator: client auth only, the operator's common name",
    'operator',
    { commonName: 'etcd-conductor', dnsNames: [], ipAddresses: [], usages: ['clientAuth'] },
  ],
  [
    "client: client auth only, the cluster's client name",
    'client',
    { commonName: 'main-client', dnsNames: [], ipAddresses: [], usages: ['clientAuth'] },
  ],
] as const)('leafRequest %s', (_case, role, want) => {
  expect(leafRequest(role, ref, now, lifetimes, caNotAfter)).toEqual({
    ...want,
    isCA: false,
    notBefore: new Date('2026-03-01T11:55:00.000Z'),
    notAfter: new Date(now.getTime() + 2160 * HOUR),
  });
});

test('a leaf never outlives its CA: a CA expiring in a day caps a 90-day certificate at that day', () => {
  const soon = new Date(now.getTime() + 24 * HOUR);
  expect(leafRequest('peer', ref, now, lifetimes, soon).notAfter).toEqual(soon);
});

test('the CA: valid for caDuration, its name stamped with when it was made (a renewed CA has another subject)', () => {
  const req = caRequest(ref, now, lifetimes);
  expect(req).toMatchObject({ isCA: true, usages: [], dnsNames: [], notAfter: caNotAfter });
  expect(req.commonName).toBe('etcd-conductor CA prod/main 20260301T120000Z');
  expect(caCommonName(ref, new Date(now.getTime() + 1000))).not.toBe(req.commonName);
});

test.each([
  ['digitalSignature alone', [0], '030207' + '80'],
  ['digitalSignature, keyCertSign, cRLSign', [0, 5, 6], '030201' + '86'],
  ['decipherOnly (bit 8) needs a second byte', [8], '030307' + '0080'],
])('keyUsageBits: %s', (_case, bits, hex) => {
  expect(keyUsageBits(bits).toString('hex')).toBe(hex);
});

function makeChain() {
  const caKeys = newKeyPair();
  const caPem = signCertificate(caRequest(ref, now, lifetimes), caKeys.publicKey, {
    selfSigned: caKeys.privateKey,
  });
  const ca = new X509Certificate(caPem);
  const leaf = (role: 'peer' | 'server' | 'operator' | 'client', at = now) => {
    const keys = newKeyPair();
    const pem = signCertificate(leafRequest(role, ref, at, lifetimes, caNotAfter), keys.publicKey, {
      privateKey: caKeys.privateKey,
      certificate: ca,
    });
    return { pem, key: keyPem(keys.privateKey), cert: new X509Certificate(pem) };
  };
  return { caPem, ca, leaf };
}

test('the CA reads back as a self-signed CA with the requested validity', () => {
  const { ca } = makeChain();
  expect(ca.ca).toBe(true);
  expect(ca.checkIssued(ca)).toBe(true);
  expect(ca.verify(ca.publicKey)).toBe(true);
  expect(new Date(ca.validTo).getTime()).toBe(Math.floor(caNotAfter.getTime() / 1000) * 1000);
  expect(ca.subject).toContain('CN=etcd-conductor CA prod/main');
  expect(subjectDer(ca.raw).length).toBeGreaterThan(10);
});

test('leaves read back signed by the CA, with their names, usages and validity', () => {
  const { ca, leaf } = makeChain();
  const server = leaf('server').cert;
  expect(server.ca).toBe(false);
  expect(server.checkIssued(ca)).toBe(true);
  expect(server.verify(ca.publicKey)).toBe(true);
  expect(server.issuer).toBe(ca.subject);
  expect(server.checkHost('main-1.main-peer.prod.svc')).toBe('*.main-peer.prod.svc');
  expect(server.checkHost('main-client.prod.svc.cluster.local')).toBeDefined();
  expect(server.checkHost('other-client.prod.svc')).toBeUndefined();
  expect(server.checkIP('127.0.0.1')).toBe('127.0.0.1');
  expect(server.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
  const client = leaf('client').cert;
  expect(client.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
  expect(client.subjectAltName).toBeUndefined();
  expect(new Date(client.validTo).getTime()).toBe(now.getTime() + 2160 * HOUR);
});

test('a certificate of another CA is not taken for one of this CA, though both are named alike', () => {
  const a = makeChain();
  const b = makeChain();
  expect(b.leaf('peer').cert.verify(a.ca.publicKey)).toBe(false);
});

test('a real TLS handshake: a server on the serving certificate accepts the client certificate and refuses a client without one', async () => {
  const { caPem, leaf } = makeChain();
  // Handshakes check validity against the real clock: these certificates are made now.
  const server = leaf('server', new Date());
  const client = leaf('client', new Date());
  const srv = createServer(
    { cert: server.pem, key: server.key, ca: caPem, requestCert: true, rejectUnauthorized: true },
    (socket) => socket.end('hello'),
  );
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as AddressInfo).port;
  const talk = (withCert: boolean) =>
    new Promise<string>((resolve, reject) => {
      const socket = connect({
        host: '127.0.0.1',
        port,
        servername: 'main-client.prod.svc',
        ca: caPem,
        ...(withCert ? { cert: client.pem, key: client.key } : {}),
      });
      let got = '';
      socket.on('data', (d: Buffer) => (got += d.toString()));
      socket.on('end', () => resolve(got));
      socket.on('error', reject);
    });
  try {
    expect(await talk(true)).toBe('hello');
    await expect(talk(false)).rejects.toThrow(/certificate|alert|reset|socket/i);
  } finally {
    srv.close();
  }
});
