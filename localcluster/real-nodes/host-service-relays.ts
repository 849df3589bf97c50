// Temporal and MinIO stay host processes on loopback; Pods reach them as they would an external Temporal service and
// S3: at the bridge's host address (the nodes' gateway), through a TCP relay per service. The bridge is the stack's
// private node network, so nothing listens on the machine's outside interfaces.
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export interface TcpRelay {
  /** host:port Pods dial. */
  address: string;
  /** Sockets the relay holds open now (both sides of each connection). */
  openSockets(): number;
  close(): Promise<void>;
}

export async function startTcpRelay(
  listen: { host: string; port: number },
  target: { host: string; port: number },
): Promise<TcpRelay> {
  // Open connections are ended on close: a Pod's long-lived gRPC channel to Temporal would otherwise hold close() open.
  // Either side closing destroys the other: pipe() unpipes from a closed destination and leaves the source paused, so
  // a target that then sends its FIN is never read to its end, and its socket (closed by the kernel) would keep its
  // file descriptor for good. The stack's apiserver relay leaked ~10 a second that way until the daemon hit EMFILE.
  const open = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = createConnection(target);
    open.add(client).add(upstream);
    client.pipe(upstream).pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', close);
    upstream.on('error', close);
    client.on('close', close);
    upstream.on('close', close);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => resolve());
  });
  return {
    address: `${listen.host}:${listen.port}`,
    openSockets: () => open.size,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        for (const s of open) s.destroy();
      }),
  };
}

/** `host:port` of an address or the authority of an http(s) URL. */
export function hostPort(addressOrUrl: string): { host: string; port: number } {
  const authority = addressOrUrl.replace(/^[a-z]+:\/\//, '').replace(/\/.*$/, '');
  const colon = authority.lastIndexOf(':');
  const port = Number(authority.slice(colon + 1));
  if (colon <= 0 || !Number.isInteger(port) || port <= 0) throw new Error(`no host:port in ${addressOrUrl}`);
  return { host: authority.slice(0, colon), port };
}

/** What Pods on real nodes dial for the host's Temporal and MinIO: the same ports, on the bridge address. */
export function podReachableServices(
  bridgeIp: string,
  temporalAddress: string,
  s3Endpoint: string,
): { temporalAddress: string; s3Endpoint: string } {
  return {
    temporalAddress: `${bridgeIp}:${hostPort(temporalAddress).port}`,
    s3Endpoint: `http://${bridgeIp}:${hostPort(s3Endpoint).port}`,
  };
}

/** Relays the host's Temporal frontend and MinIO onto the bridge address; closes both on stop. */
export async function startHostServiceRelays(
  bridgeIp: string,
  temporalAddress: string,
  s3Endpoint: string,
): Promise<{ temporalAddress: string; s3Endpoint: string; close(): Promise<void> }> {
  const reachable = podReachableServices(bridgeIp, temporalAddress, s3Endpoint);
  const relays: TcpRelay[] = [];
  try {
    relays.push(await startTcpRelay(hostPort(reachable.temporalAddress), hostPort(temporalAddress)));
    relays.push(await startTcpRelay(hostPort(reachable.s3Endpoint), hostPort(s3Endpoint)));
  } catch (e) {
    await Promise.all(relays.map((r) => r.close()));
    throw e;
  }
  return { ...reachable, close: async () => void (await Promise.all(relays.map((r) => r.close()))) };
}
