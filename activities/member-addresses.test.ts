// Observation's dial at a member Pod's address: where it dials (a table), and that TLS still verifies the member's
// name when the address is dialled (a real etcd serving a certificate that names only the member's DNS name).
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binaryPath, cacheRoot, ETCD_TOOLS } from '../localcluster/tool-cache';
import { freePort } from '../test/support/local-etcd';
import { makeCA } from '../test/tls/tls-certs';
import { withEtcdClient } from './etcd-admin';
import { dialAt } from './member-addresses';

describe('dialAt', () => {
  test.each<[string, string, string | undefined, ReturnType<typeof dialAt>]>([
    [
      'a member URL at its Pod address, the name kept',
      'http://c-0.c-peer.ns.svc:2379',
      '10.0.129.7',
      { url: 'http://10.0.129.7:2379', authority: 'c-0.c-peer.ns.svc' },
    ],
    [
      'https stays https',
      'https://c-0.c-peer.ns.svc:2379',
      '10.0.129.7',
      { url: 'https://10.0.129.7:2379', authority: 'c-0.c-peer.ns.svc' },
    ],
    [
      'an IPv6 address in brackets',
      'http://c-0.c-peer.ns.svc:2379',
      'fd00::7',
      { url: 'http://[fd00::7]:2379', authority: 'c-0.c-peer.ns.svc' },
    ],
    ['no address yet: by name', 'http://c-0.c-peer.ns.svc:2379', undefined, undefined],
    ['not a URL with a port: by name', 'c-0.c-peer.ns.svc', '10.0.129.7', undefined],
  ])('%s', (_what, url, ip, want) => {
    expect(dialAt(url, ip)).toEqual(want);
  });
});

describe('withEtcdClient dialling a Pod address', () => {
  const name = 'c-0.c-peer.ns.svc';
  const dir = mkdtempSync(join(tmpdir(), 'member-addresses-'));
  const ca = makeCA('member-addresses');
  const server = ca.issue('c-0', [`DNS:${name}`]);
  const client = ca.issue('operator');
  const credentials = { rootCertificate: ca.cert, certChain: client.cert, privateKey: client.key };
  let etcd: ChildProcess | undefined;
  let port = 0;

  beforeAll(async () => {
    [port] = [await freePort()];
    const peerPort = await freePort();
    for (const [f, b] of Object.entries({
      'ca.crt': ca.cert,
      'server.crt': server.cert,
      'server.key': server.key,
    }))
      writeFileSync(join(dir, f), b);
    etcd = spawn(
      binaryPath(cacheRoot(), ETCD_TOOLS['3.6.16'], 'etcd'),
      [
        '--name=c-0',
        `--data-dir=${join(dir, 'data')}`,
        `--listen-client-urls=https://127.0.0.1:${port}`,
        `--advertise-client-urls=https://127.0.0.1:${port}`,
        `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
        `--initial-cluster=c-0=http://127.0.0.1:${peerPort}`,
        `--cert-file=${join(dir, 'server.crt')}`,
        `--key-file=${join(dir, 'server.key')}`,
        '--client-cert-auth',
        `--trusted-ca-file=${join(dir, 'ca.crt')}`,
      ],
      { stdio: 'ignore' },
    );
    const url = `https://${name}:${port}`;
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        await withEtcdClient(
          { credentials },
          [url],
          (c) => c.maintenance.status(),
          2000,
          dialAt(url, '127.0.0.1'),
        );
        return;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }, 60_000);
  afterAll(() => {
    etcd?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers at the address while verifying the member's name, which the certificate alone carries", async () => {
    const url = `https://${name}:${port}`;
    const s = await withEtcdClient(
      { credentials },
      [url],
      (c) => c.maintenance.status(),
      3000,
      dialAt(url, '127.0.0.1'),
    );
    expect(s.version).toBe('3.6.16');
  });

  it('the same address dialled without the name fails verification: the name is what is checked', async () => {
    await expect(
      withEtcdClient({ credentials }, [`https://127.0.0.1:${port}`], (c) => c.maintenance.status(), 3000),
    ).rejects.toThrow();
  });

  it('a name the certificate does not carry fails verification at the same address', async () => {
    const other = `https://c-1.c-peer.ns.svc:${port}`;
    await expect(
      withEtcdClient(
        { credentials },
        [other],
        (c) => c.maintenance.status(),
        3000,
        dialAt(other, '127.0.0.1'),
      ),
    ).rejects.toThrow();
  });
});
