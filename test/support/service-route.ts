// Whether this machine reaches a cluster's client Service yet: Kubernetes routes a Service only once the node's
// kube-proxy has written the endpoints into its rules, which comes after the Pods are Ready (1-2 s on this stack's
// node-a, kubeproxy_network_programming_duration_seconds; up to 4 s under load).
import { connect } from 'node:net';

/** Whether a TCP connection to host:port opens within `ms` (a refusal, a timeout or a name not found: false). */
export function opensWithin(host: string, port: number, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), ms);
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Waits until a connection to `url`'s host and port opens promptly (each try `tryMs`, all within `timeoutMs`). A
 * writer started on a new cluster before its Service is routed has its first connection refused or its SYN lost,
 * and the client's retry (the kernel's 1 s SYN retransmit, gRPC's 1 s reconnect backoff) reads as a 1 s gap that
 * Kubernetes' network programming made, not the cluster.
 */
export async function waitRouted(url: string, timeoutMs = 30_000, tryMs = 300): Promise<void> {
  const { hostname, port } = new URL(url);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await opensWithin(hostname, Number(port), tryMs)) return;
    if (Date.now() > deadline)
      throw new Error(`${url} not reachable from this machine within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
