// The local stack's certificates, made with the openssl CLI: one CA, the apiserver serving cert, a client cert per identity and the service-account key; generated once per state folder and host IP.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface ClientIdentity {
  /** File stem under the PKI folder, e.g. `admin`. */
  file: string;
  commonName: string;
  organizations: string[];
}

export interface PkiRequest {
  dir: string;
  /** Subject alternative names of the apiserver serving certificate. */
  serverIps: string[];
  serverDnsNames: string[];
  clients: ClientIdentity[];
}

export interface CertPair {
  cert: string;
  key: string;
}

export interface Pki {
  caCert: string;
  caKey: string;
  apiserver: CertPair;
  clients: Record<string, CertPair>;
  serviceAccountKey: string;
  serviceAccountPub: string;
}

export function pkiPaths(dir: string, clients: ClientIdentity[]): Pki {
  const pair = (stem: string): CertPair => ({
    cert: join(dir, `${stem}.crt`),
    key: join(dir, `${stem}.key`),
  });
  return {
    caCert: join(dir, 'ca.crt'),
    caKey: join(dir, 'ca.key'),
    apiserver: pair('apiserver'),
    clients: Object.fromEntries(clients.map((c) => [c.file, pair(c.file)])),
    serviceAccountKey: join(dir, 'sa.key'),
    serviceAccountPub: join(dir, 'sa.pub'),
  };
}

/** An openssl `-subj` string; O comes first, as many times as there are groups. */
export function subject(commonName: string, organizations: string[] = []): string {
  const esc = (v: string) => v.replace(/[/\\]/g, (ch) => `\\${ch}`);
  return `${organizations.map((o) => `/O=${esc(o)}`).join('')}/CN=${esc(commonName)}`;
}

/** The x509v3 extension section a leaf certificate is signed with. */
export function leafExtensions(
  usage: 'server' | 'client',
  ips: string[] = [],
  dnsNames: string[] = [],
): string {
  const lines = [
    '[v3]',
    'basicConstraints=critical,CA:FALSE',
    'keyUsage=critical,digitalSignature,keyEncipherment',
    `extendedKeyUsage=${usage === 'server' ? 'serverAuth' : 'clientAuth'}`,
  ];
  const sans = [...dnsNames.map((d) => `DNS:${d}`), ...ips.map((i) => `IP:${i}`)];
  if (sans.length > 0) lines.push(`subjectAltName=${sans.join(',')}`);
  return `${lines.join('\n')}\n`;
}

/** Creates whatever is missing; regenerates everything when the request (e.g. the host IP) changed. */
export async function ensurePki(req: PkiRequest): Promise<Pki> {
  const paths = pkiPaths(req.dir, req.clients);
  const requestFile = join(req.dir, 'request.json');
  const wanted = JSON.stringify(req, null, 2);
  if (existsSync(requestFile) && readFileSync(requestFile, 'utf8') !== wanted)
    rmSync(req.dir, { recursive: true, force: true });
  mkdirSync(req.dir, { recursive: true, mode: 0o700 });

  if (!existsSync(paths.caCert)) {
    await openssl([
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      paths.caKey,
      '-out',
      paths.caCert,
      '-days',
      '3650',
      '-subj',
      subject('etcd-conductor local CA'),
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
    ]);
  }
  if (!existsSync(paths.apiserver.cert)) {
    await signLeaf(
      paths,
      paths.apiserver,
      subject('kube-apiserver'),
      leafExtensions('server', req.serverIps, req.serverDnsNames),
    );
  }
  for (const c of req.clients) {
    const pair = paths.clients[c.file];
    if (pair && !existsSync(pair.cert))
      await signLeaf(paths, pair, subject(c.commonName, c.organizations), leafExtensions('client'));
  }
  if (!existsSync(paths.serviceAccountPub)) {
    // RSA: every token consumer accepts RS256.
    await openssl([
      'genpkey',
      '-algorithm',
      'RSA',
      '-pkeyopt',
      'rsa_keygen_bits:2048',
      '-out',
      paths.serviceAccountKey,
    ]);
    await openssl(['pkey', '-in', paths.serviceAccountKey, '-pubout', '-out', paths.serviceAccountPub]);
  }
  writeFileSync(requestFile, wanted);
  return paths;
}

async function signLeaf(paths: Pki, pair: CertPair, subj: string, extensions: string): Promise<void> {
  const csr = `${pair.cert}.csr`;
  const ext = `${pair.cert}.ext`;
  writeFileSync(ext, extensions);
  await openssl([
    'req',
    '-new',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    pair.key,
    '-out',
    csr,
    '-subj',
    subj,
  ]);
  await openssl([
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    paths.caCert,
    '-CAkey',
    paths.caKey,
    '-set_serial',
    `0x${randomBytes(12).toString('hex')}`,
    '-days',
    '3650',
    '-extfile',
    ext,
    '-extensions',
    'v3',
    '-out',
    pair.cert,
  ]);
  rmSync(csr, { force: true });
  rmSync(ext, { force: true });
}

async function openssl(args: string[]): Promise<void> {
  try {
    await run('openssl', args, { timeout: 30000 });
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new Error(`openssl ${args[0] ?? ''} failed: ${err.stderr?.trim() || err.message}`, { cause: e });
  }
}
