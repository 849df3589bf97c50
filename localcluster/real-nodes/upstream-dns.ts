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
  stop(): Promise<void>;
}

/**
 * Starts the relay, or returns undefined (with the reason logged) when the host has no resolver configured: CoreDNS
 * then answers only the cluster domain, as before.
 */
export async function startUpstreamDnsRelay(
  bindIp: string,
  log: (line: string) => void,
  resolvConf = '/etc/resolv.conf',
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
  const pending = new Set<Socket>();
  server.on('message', (query, client) => {
    // One socket per query: the answer goes back to whoever asked, and a lost answer costs only its timer.
    const out = createSocket('udp4');
    pending.add(out);
    const done = () => {
      clearTimeout(timer);
      pending.delete(out);
      out.close();
    };
    const timer = setTimeout(done, 5000);
    out.on('message', (answer) => {
      server.send(answer, client.port, client.address);
      done();
    });
    out.on('error', done);
    out.send(query, 53, upstream);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.bind(UPSTREAM_DNS_PORT, bindIp, () => resolve());
  });
  server.on('error', (e) => log(`real nodes: upstream DNS relay: ${e.message}`));
  log(
    `real nodes: names outside cluster.local are relayed from ${bindIp}:${UPSTREAM_DNS_PORT} to ${upstream}`,
  );
  return {
    address: `${bindIp}:${UPSTREAM_DNS_PORT}`,
    upstream,
    stop: async () => {
      for (const s of pending) s.close();
      pending.clear();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
