// A real single-member etcd 3.6 on free loopback ports for unit tests of what etcd itself answers (auth, passwords, the strict writer).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binaryPath, cacheRoot, ETCD_TOOLS } from '../../localcluster/tool-cache';
import { withEtcdClient } from '../../activities/etcd-admin';

export interface LocalEtcd {
  /** The client URL, http://127.0.0.1:<port>. */
  url: string;
  /** Its one member's peer URL; a member started again on `ports` with restored data answers at the same URLs. */
  peerUrl: string;
  ports: { client: number; peer: number };
  /** Kills the process and removes its data directory. */
  stop(): void;
  /** Sends the process a signal: SIGSTOP/SIGCONT freeze and thaw it, as a hung member would be. */
  signal(sig: NodeJS.Signals): void;
}

/** A port the kernel hands out now, instead of a random one that may be taken (etcd would exit at once). */
export function freePort(): Promise<number> {
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

/**
 * Starts etcd 3.6.16 (from the tool cache) and resolves once it answers a status call, or says why it did not. With
 * `restart`, on those ports and that data dir (restored by etcdutl for member `a` at the peer URL): the same member
 * as seen by clients, with other data.
 */
export async function startLocalEtcd(
  prefix: string,
  timeoutMs = 60_000,
  restart?: { ports: { client: number; peer: number }; dataDir: string },
): Promise<LocalEtcd> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const [port, peerPort] = restart
    ? [restart.ports.client, restart.ports.peer]
    : [await freePort(), await freePort()];
  const url = `http://127.0.0.1:${port}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  let exited: string | undefined;
  const proc = spawn(
    binaryPath(cacheRoot(), ETCD_TOOLS['3.6.16'], 'etcd'),
    [
      '--name=a',
      `--data-dir=${restart?.dataDir ?? join(dir, 'data')}`,
      `--listen-client-urls=${url}`,
      `--advertise-client-urls=${url}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=a=${peer}`,
    ],
    { stdio: 'ignore' },
  );
  proc.on('exit', (code, signal) => (exited = `etcd exited (${code ?? signal}) before answering`));
  const stop = () => {
    proc.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await withEtcdClient({ callTimeoutMs: 5000 }, [url], (c) => c.maintenance.status());
      return {
        url,
        peerUrl: peer,
        ports: { client: port, peer: peerPort },
        stop,
        signal: (sig) => void proc.kill(sig),
      };
    } catch (err) {
      if (exited || Date.now() > deadline) {
        stop();
        throw exited ? new Error(exited, { cause: err }) : err;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
