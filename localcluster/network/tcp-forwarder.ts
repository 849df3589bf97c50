// Forwards one loopback service port to its endpoints, round-robin, trying the next endpoint when a connect fails; binds loopback only.
import net from 'node:net';
import { isLoopback } from './service-plan';

export interface TcpForwarder {
  setTargets(targets: Array<{ ip: string; port: number }>): void;
  close(): Promise<void>;
}

const CONNECT_TIMEOUT_MS = 3000;

export async function startTcpForwarder(
  listenIp: string,
  listenPort: number,
  log: (line: string) => void,
): Promise<TcpForwarder> {
  if (!isLoopback(listenIp))
    throw new Error(`refusing to bind ${listenIp}: service addresses must be loopback`);
  let targets: Array<{ ip: string; port: number }> = [];
  let next = 0;
  const sockets = new Set<net.Socket>();

  const connect = (client: net.Socket, attempt: number): void => {
    if (targets.length === 0 || attempt >= targets.length) {
      client.destroy();
      return;
    }
    const target = targets[next++ % targets.length];
    if (target === undefined) return void client.destroy();
    const upstream = net.connect({ host: target.ip, port: target.port, timeout: CONNECT_TIMEOUT_MS });
    sockets.add(upstream);
    upstream.once('close', () => sockets.delete(upstream));
    const fail = (): void => {
      upstream.destroy();
      connect(client, attempt + 1);
    };
    upstream.once('error', fail);
    upstream.once('timeout', fail);
    upstream.once('connect', () => {
      upstream.removeListener('error', fail);
      upstream.removeListener('timeout', fail);
      upstream.setTimeout(0);
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
  };

  const server = net.createServer({ pauseOnConnect: true }, (client) => {
    sockets.add(client);
    client.once('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    connect(client, 0);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: listenIp, port: listenPort, exclusive: true }, () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
  server.on('error', (e) => log(`forwarder ${listenIp}:${listenPort}: ${e.message}`));
  return {
    setTargets: (t) => {
      targets = t;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
