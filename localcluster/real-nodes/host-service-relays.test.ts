import { createConnection, createServer } from 'node:net';
import { hostPort, podReachableServices, startTcpRelay } from './host-service-relays';

describe('hostPort', () => {
  it.each([
    ['127.0.0.1:7249', { host: '127.0.0.1', port: 7249 }],
    ['http://127.30.0.1:9000', { host: '127.30.0.1', port: 9000 }],
    ['https://10.30.0.1:9443/bucket', { host: '10.30.0.1', port: 9443 }],
  ])('%s', (input, expected) => expect(hostPort(input)).toEqual(expected));

  it.each(['127.0.0.1', 'http://host', ':80', 'x:0'])('refuses %s', (input) =>
    expect(() => hostPort(input)).toThrow(/no host:port/),
  );
});

describe('podReachableServices', () => {
  it('keeps the ports and moves the hosts to the bridge address', () => {
    expect(podReachableServices('10.30.0.1', '127.0.0.1:7353', 'http://127.30.0.1:9030')).toEqual({
      temporalAddress: '10.30.0.1:7353',
      s3Endpoint: 'http://10.30.0.1:9030',
    });
  });
});

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((r) => probe.close(() => r()));
  return port;
}

describe('startTcpRelay', () => {
  it('carries bytes both ways to the target, and stops listening when closed', async () => {
    const echo = createServer((s) => s.pipe(s));
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', () => r()));
    const target = { host: '127.0.0.1', port: (echo.address() as { port: number }).port };
    const listen = { host: '127.0.0.1', port: await freePort() };
    const relay = await startTcpRelay(listen, target);
    const roundTrip = () =>
      new Promise<string>((resolve, reject) => {
        const c = createConnection(listen, () => c.write('ping'));
        c.on('data', (d) => {
          resolve(d.toString());
          c.destroy();
        });
        c.on('error', reject);
      });
    try {
      expect(relay.address).toBe(`127.0.0.1:${listen.port}`);
      expect(await roundTrip()).toBe('ping');
    } finally {
      await relay.close();
    }
    await expect(roundTrip()).rejects.toThrow(/ECONNREFUSED/);
    await new Promise<void>((r) => echo.close(() => r()));
  });

  it('closes while a connection is still open, ending it', async () => {
    const hold = createServer(() => undefined);
    await new Promise<void>((r) => hold.listen(0, '127.0.0.1', () => r()));
    const target = { host: '127.0.0.1', port: (hold.address() as { port: number }).port };
    const listen = { host: '127.0.0.1', port: await freePort() };
    const relay = await startTcpRelay(listen, target);
    const c = createConnection(listen);
    await new Promise<void>((r) => c.once('connect', () => r()));
    const ended = new Promise<void>((r) => c.once('close', () => r()));
    await relay.close();
    await ended;
    await new Promise<void>((r) => hold.close(() => r()));
  });

  it('keeps no socket once a client has gone, even one that left without reading the answer', async () => {
    // A client that leaves before reading what the target sent. A relay that left the close to pipe() kept the
    // target's side paused and unread: its FIN never read, its fd held for good (the stack daemon's apiserver relay
    // leaked ~10 a second so, until EMFILE).
    const target = createServer((s) => {
      s.write('hello');
      s.on('end', () => s.end());
    });
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', () => r()));
    const listen = { host: '127.0.0.1', port: await freePort() };
    const relay = await startTcpRelay(listen, {
      host: '127.0.0.1',
      port: (target.address() as { port: number }).port,
    });
    try {
      for (let i = 0; i < 5; i++) {
        const c = createConnection(listen, () => c.end());
        await new Promise<void>((r) => c.once('close', () => r()));
      }
      const deadline = Date.now() + 2000;
      while (relay.openSockets() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(relay.openSockets()).toBe(0);
    } finally {
      await relay.close();
      await new Promise<void>((r) => target.close(() => r()));
    }
  });
});
