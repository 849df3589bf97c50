import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensurePki, leafExtensions, subject } from './pki';

describe('subject', () => {
  const cases: Array<[string, string, string[], string]> = [
    [
      'a node identity carries its group as O',
      'system:node:node-a',
      ['system:nodes'],
      '/O=system:nodes/CN=system:node:node-a',
    ],
    ['a name without groups is CN only', 'kube-apiserver', [], '/CN=kube-apiserver'],
    ['slashes in a value are escaped', 'a/b', [], '/CN=a\\/b'],
  ];
  it.each(cases)('%s', (_n, cn, orgs, expected) => expect(subject(cn, orgs)).toBe(expected));
});

describe('leafExtensions', () => {
  it('lists DNS and IP SANs for a serving certificate', () => {
    expect(leafExtensions('server', ['127.0.0.1'], ['localhost'])).toContain(
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
    );
  });
  it('marks a client certificate for client auth only, without SANs', () => {
    const ext = leafExtensions('client');
    expect(ext).toContain('extendedKeyUsage=clientAuth');
    expect(ext).not.toContain('subjectAltName');
  });
});

describe('ensurePki (real openssl)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pki-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const req = {
    dir: join(dir, 'pki'),
    serverIps: ['127.0.0.1'],
    serverDnsNames: ['localhost', 'kubernetes.default.svc'],
    clients: [{ file: 'admin', commonName: 'admin', organizations: ['system:masters'] }],
  };
  it('issues certificates that verify against the CA with the requested subject and SANs', async () => {
    const pki = await ensurePki(req);
    const verify = (cert: string) =>
      execFileSync('openssl', ['verify', '-CAfile', pki.caCert, cert]).toString();
    expect(verify(pki.apiserver.cert)).toContain('OK');
    const admin = pki.clients.admin;
    expect(admin).toBeDefined();
    expect(verify(admin?.cert ?? '')).toContain('OK');
    const text = execFileSync('openssl', ['x509', '-in', admin?.cert ?? '', '-noout', '-subject']).toString();
    expect(text).toMatch(/O = system:masters, CN = admin/);
    const server = execFileSync('openssl', [
      'x509',
      '-in',
      pki.apiserver.cert,
      '-noout',
      '-ext',
      'subjectAltName',
    ]).toString();
    expect(server).toContain('DNS:kubernetes.default.svc');
    expect(server).toContain('IP Address:127.0.0.1');
  });
  it('keeps existing certificates on a second run with the same request', async () => {
    const pki = await ensurePki(req);
    const before = statSync(pki.caCert).mtimeMs;
    await ensurePki(req);
    expect(statSync(pki.caCert).mtimeMs).toBe(before);
  });
  it('starts over when the request changes', async () => {
    const pki = await ensurePki(req);
    const before = statSync(pki.caCert).mtimeMs;
    await new Promise((r) => setTimeout(r, 20));
    await ensurePki({ ...req, serverIps: ['127.77.0.1'] });
    expect(statSync(pki.caCert).mtimeMs).not.toBe(before);
  });
});
