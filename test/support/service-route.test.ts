import { createServer, type Server } from 'node:net';
import { opensWithin, waitRouted } from './service-route';

const listen = (port = 0): Promise<Server> =>
  new Promise((resolve) => {
    const s = createServer((c) => c.destroy());
    s.listen(port, '127.0.0.1', () => resolve(s));
  });
const portOf = (s: Server) => (s.address() as { port: number }).port;
const close = (s: Server) => new Promise((r) => s.close(r));

describe('opensWithin', () => {
  test('true for a listening port, false for a closed one', async () => {
    const s = await listen();
    const port = portOf(s);
    expect(await opensWithin('127.0.0.1', port, 1000)).toBe(true);
    await close(s);
    expect(await opensWithin('127.0.0.1', port, 1000)).toBe(false);
  });

  test('false for a name that does not resolve', async () => {
    expect(await opensWithin('no-such-service.invalid', 2379, 1000)).toBe(false);
  });
});

describe('waitRouted', () => {
  test('returns once the port opens, not before', async () => {
    const probe = await listen();
    const port = portOf(probe);
    await close(probe);
    let server: Server | undefined;
    const opened = new Promise<number>((resolve) =>
      setTimeout(() => {
        void listen(port).then((s) => {
          server = s;
          resolve(Date.now());
        });
      }, 400),
    );
    await waitRouted(`http://127.0.0.1:${port}`, 5000, 100);
    const returned = Date.now();
    expect(returned).toBeGreaterThanOrEqual(await opened);
    if (server) await close(server);
  });

  test('throws naming the URL when nothing opens in time', async () => {
    const probe = await listen();
    const port = portOf(probe);
    await close(probe);
    await expect(waitRouted(`http://127.0.0.1:${port}`, 300, 100)).rejects.toThrow(
      `http://127.0.0.1:${port} not reachable from this machine within 300 ms`,
    );
  });
});
