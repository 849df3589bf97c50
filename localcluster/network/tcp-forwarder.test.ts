import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { startTcpForwarder } from './tcp-forwarder';

function echoServer(tag: string): Promise<net.Server> {
  return new Promise((resolve) => {
    const s = net.createServer((c) => c.end(tag));
    s.listen(0, '127.0.0.1', () => resolve(s));
  });
}

function fetchTag(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = net.connect({ host: '127.0.0.1', port });
    let data = '';
    c.on('data', (d) => (data += d.toString()));
    c.on('close', () => resolve(data));
    c.on('error', reject);
  });
}

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('startTcpForwarder', () => {
  it('spreads connections over endpoints round-robin and skips one that refuses', async () => {
    const a = await echoServer('a');
    const b = await echoServer('b');
    const dead = await freePort();
    const port = await freePort();
    const fwd = await startTcpForwarder('127.0.0.1', port, () => undefined);
    fwd.setTargets([
      { ip: '127.0.0.1', port: (a.address() as AddressInfo).port },
      { ip: '127.0.0.1', port: dead },
      { ip: '127.0.0.1', port: (b.address() as AddressInfo).port },
    ]);
    const seen = [await fetchTag(port), await fetchTag(port), await fetchTag(port)];
    expect(seen).not.toContain('');
    expect(new Set(seen)).toEqual(new Set(['a', 'b']));
    await fwd.close();
    a.close();
    b.close();
  });

  it('closes a connection when no endpoint is ready', async () => {
    const port = await freePort();
    const fwd = await startTcpForwarder('127.0.0.1', port, () => undefined);
    expect(await fetchTag(port)).toBe('');
    await fwd.close();
  });

  it('refuses to bind a non-loopback address', async () => {
    await expect(startTcpForwarder('0.0.0.0', 1, () => undefined)).rejects.toThrow('must be loopback');
  });
});
