// Names outside the cluster domain, for Pods on real nodes: CoreDNS forwards them to a small UDP relay that the stack
// runs on the bridge's host address, and the relay asks the host's own resolver (the first nameserver of
// /etc/resolv.conf). Pods thus never need a route out of the node network (the stack's FORWARD rules keep it closed),
// and a resolver the host reaches only on loopback (127.0.0.53, say) works too.
import { createSocket, type Socket } from 'node:dgram';
import { readFileSync } from 'node:fs';

/** Where the relay listens on the bridge address: not 53, which a resolver on the host may hold on every address. */
export const UPSTREAM_DNS_PORT = 10053;

/** Pure: the nameservers of a resolv.conf, in order (IPv4 only: the node network is IPv4). */
export function resolvConfNameservers(text: string): string[] {
  return [...text.matchAll(/^\s*nameserver\s+(\d+\.\d+\.\d+\.\d+)\s*$/gm)].map((m) => m[1] ?? '');
}

export interface UpstreamDnsRelay {
  /** `host:port` CoreDNS forwards to. */
  address: string;
  upstream: string;
  /** Queries waiting for the upstream's answer. */
  readonly pending: number;
  stop(): Promise<void>;
}

/**
 * Starts the relay, or returns undefined (with the reason logged) when the host has no resolver configured: CoreDNS
 * then answers only the cluster domain, as before. `port` 0 takes any free port (the tests).
 */
export async function startUpstreamDnsRelay(
  bindIp: string,
  log: (line: string) => void,
  resolvConf = '/etc/resolv.conf',
  { port = UPSTREAM_DNS_PORT, queryTimeoutMs = 5000 }: { port?: number; queryTimeoutMs?: number } = {},
): Promise<UpstreamDnsRelay | undefined> {
  let upstream: string | undefined;
  try {
    upstream = resolvConfNameservers(readFileSync(resolvConf, 'utf8'))[0];
  } catch {
    upstream = undefined;
  }
  if (!upstream) {
    log(`real nodes: no nameserver in ${resolvConf}; CoreDNS answers cluster names only`);
    return undefined;
  }
  const server = createSocket('udp4');
  /** Each query's socket and how to end it; ending is idempotent. */
  const pending = new Map<Socket, () => void>();
  server.on('message', (query, client) => {
    // One socket per query: the answer goes back to whoever asked, and a lost answer costs only its timer.
    const out = createSocket('udp4');
    let ended = false;
    // Called by the answer, an error, the timeout or stop(), in any order and more than once: closing a closed
    // socket throws, and thrown from a timer it ended the stack's daemon (rehearsal O: a query pending at stop, its
    // timer fired after stop() had closed its socket, and the daemon died before stopping kube-apiserver and etcd).
    const done = () => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      pending.delete(out);
      out.close();
    };
    const timer = setTimeout(done, queryTimeoutMs);
    pending.set(out, done);
    out.on('message', (answer) => {
      server.send(answer, client.port, client.address);
      done();
    });
    out.on('error', done);
    out.send(query, 53, upstream);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.bind(port, bindIp, () => resolve());
  });
  server.on('error', (e) => log(`real nodes: upstream DNS relay: ${e.message}`));
  const address = `${bindIp}:${server.address().port}`;
  log(`real nodes: names outside cluster.local are relayed from ${address} to ${upstream}`);
  return {
    address,
    upstream,
    /** How many queries wait for an answer (the tests). */
    get pending() {
      return pending.size;
    },
    stop: async () => {
      for (const done of [...pending.values()]) done();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
