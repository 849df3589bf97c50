// Applying a changed root password against a real single-member etcd: the change, the idempotent retry, and the refusal when neither password works.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binaryPath, cacheRoot, ETCD_TOOLS } from '../localcluster/tool-cache';
import { applyRootPassword, checkPassword } from './auth-rotation';
import type { RotationIO } from './auth-rotation';
import { withEtcdClient } from './etcd-admin';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

describe('applyRootPassword against etcd with auth on', () => {
  let url = '';
  let proc: ChildProcess;
  let dir: string;
  const anonymous = { callTimeoutMs: 5000 };
  let recorded: string[] = [];
  const io: RotationIO = {
    withPassword: (password, fn) =>
      withEtcdClient(
        { callTimeoutMs: 5000, connectionFor: async () => ({ auth: { username: 'root', password } }) },
        [url],
        fn,
      ),
    record: async (password) => {
      recorded.push(password);
    },
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'etcd-rotate-'));
    const [port, peerPort] = [await freePort(), await freePort()];
    url = `http://127.0.0.1:${port}`;
    let exited: string | undefined;
    proc = spawn(
      binaryPath(cacheRoot(), ETCD_TOOLS['3.6.16'], 'etcd'),
      [
        '--name=a',
        `--data-dir=${join(dir, 'data')}`,
        `--listen-client-urls=${url}`,
        `--advertise-client-urls=${url}`,
        `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
        `--initial-cluster=a=http://127.0.0.1:${peerPort}`,
      ],
      { stdio: 'ignore' },
    );
    proc.on('exit', (code, signal) => (exited = `etcd exited (${code ?? signal}) before answering`));
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        await withEtcdClient(anonymous, [url], (c) => c.maintenance.status());
        break;
      } catch (err) {
        if (exited) throw new Error(exited, { cause: err });
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    await withEtcdClient(anonymous, [url], async (c) => {
      await c.auth.userAdd({ name: 'root', password: 'old-pw' });
      await c.auth.userGrantRole({ user: 'root', role: 'root' });
      await c.auth.authEnable();
    });
  }, 90_000);

  beforeEach(() => {
    recorded = [];
  });

  afterAll(() => {
    proc?.kill('SIGKILL');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('a new password is applied with the old one: afterwards etcd refuses the old and accepts the new', async () => {
    await expect(applyRootPassword(io, 'new-pw', 'old-pw')).resolves.toBe('changed');
    expect(recorded).toEqual(['new-pw']);
    await expect(checkPassword(io, 'old-pw')).resolves.toBe('refused');
    await expect(checkPassword(io, 'new-pw')).resolves.toBe('accepted');
  });

  test('a retry after the change (the record was lost) finds the new password working and only records it', async () => {
    await expect(applyRootPassword(io, 'new-pw', 'old-pw')).resolves.toBe('recorded');
    expect(recorded).toEqual(['new-pw']);
  });

  test('neither password accepted: rejected, nothing recorded, etcd unchanged', async () => {
    await expect(applyRootPassword(io, 'third-pw', 'old-pw')).resolves.toBe('rejected');
    await expect(applyRootPassword(io, 'third-pw', undefined)).resolves.toBe('rejected');
    expect(recorded).toEqual([]);
    await expect(checkPassword(io, 'new-pw')).resolves.toBe('accepted');
  });
});
