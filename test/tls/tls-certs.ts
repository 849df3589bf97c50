// Test certificates for TLS journeys, made with the openssl CLI: a CA per trust domain and leaf certificates for members, the operator and clients.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Pem {
  cert: Buffer;
  key: Buffer;
}

export interface TestCA extends Pem {
  name: string;
  /** Issues a leaf with these SANs (openssl subjectAltName syntax), for server and client auth. */
  issue(commonName: string, sans?: string[]): Pem;
  /** Issues an intermediate CA signed by this one; its certificate goes after a leaf's in tls.crt. */
  issueCA(commonName: string): TestCA;
}

const openssl = (args: string[], cwd: string) => execFileSync('openssl', args, { cwd, stdio: 'pipe' });

export function makeCA(name: string): TestCA {
  const dir = mkdtempSync(join(tmpdir(), `tls-${name}-`));
  openssl(
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'].concat([
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-days',
      '2',
      '-subj',
      `/CN=${name}`,
    ]),
    dir,
  );
  return caIn(name, dir);
}

/** A CA whose certificate and key are dir/ca.crt and dir/ca.key. */
function caIn(name: string, dir: string): TestCA {
  let serial = 0;
  function sign(commonName: string, ext: string[]): Pem {
    const stem = `leaf-${++serial}`;
    openssl(
      ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'].concat([
        '-keyout',
        `${stem}.key`,
        '-out',
        `${stem}.csr`,
        '-subj',
        `/CN=${commonName}`,
      ]),
      dir,
    );
    writeFileSync(join(dir, `${stem}.ext`), `${ext.join('\n')}\n`);
    openssl(
      ['x509', '-req', '-in', `${stem}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial'].concat([
        '-out',
        `${stem}.crt`,
        '-days',
        '1',
        '-extfile',
        `${stem}.ext`,
      ]),
      dir,
    );
    return { cert: readFileSync(join(dir, `${stem}.crt`)), key: readFileSync(join(dir, `${stem}.key`)) };
  }
  return {
    name,
    cert: readFileSync(join(dir, 'ca.crt')),
    key: readFileSync(join(dir, 'ca.key')),
    issue(commonName, sans = []) {
      return sign(commonName, [
        ...(sans.length > 0 ? [`subjectAltName=${sans.join(',')}`] : []),
        'extendedKeyUsage=serverAuth,clientAuth',
        'keyUsage=digitalSignature,keyEncipherment',
      ]);
    },
    issueCA(commonName) {
      const pem = sign(commonName, ['basicConstraints=critical,CA:TRUE', 'keyUsage=keyCertSign,cRLSign']);
      const sub = mkdtempSync(join(tmpdir(), `tls-${commonName}-`));
      writeFileSync(join(sub, 'ca.crt'), pem.cert);
      writeFileSync(join(sub, 'ca.key'), pem.key);
      return caIn(commonName, sub);
    },
  };
}

/**
 * A kubernetes.io/tls Secret body. `ca` is the trusted bundle (ca.crt), which may hold several CAs.
 */
export function tlsSecret(name: string, leaf: Pem, ca: Buffer) {
  return {
    metadata: { name },
    type: 'kubernetes.io/tls',
    data: {
      'tls.crt': leaf.cert.toString('base64'),
      'tls.key': leaf.key.toString('base64'),
      'ca.crt': ca.toString('base64'),
    },
  };
}

/**
 * SANs of a member certificate for `cluster` in `namespace` on the local stack. The IP 127.0.0.1 is there
 * because on the loopback-only stack every peer connection comes from 127.0.0.1, and etcd's peer
 * client-certificate check wants the remote address to match a SAN (on a real cluster the Pod's PTR record
 * matches *.<cluster>-peer.<ns>.svc.cluster.local instead).
 */
export function memberSans(namespace: string, cluster: string): string[] {
  return [
    `DNS:*.${cluster}-peer.${namespace}.svc`,
    `DNS:*.${cluster}-peer.${namespace}.svc.cluster.local`,
    `DNS:${cluster}-client.${namespace}.svc`,
    'IP:127.0.0.1',
  ];
}
