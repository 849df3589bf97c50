// The daemon's fault-control endpoint on the stack's loopback host IP: turns fault requests into NodeFaults calls on the right node agent.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseFaultRequest, type FaultCommand } from './fault-command';
import type { FaultNode } from './fault-client';
import type { NodeFaults } from './node/types';

export interface FaultTargets {
  nodes: Map<string, { zone: string; faults: NodeFaults }>;
  /** spec.nodeName of a Pod, from the API. */
  nodeOfPod(namespace: string, pod: string): Promise<string | undefined>;
  /** Deletes the data of a claim's directory; undefined when the claim binder offers no wiping. */
  wipeClaim: ((namespace: string, claim: string) => Promise<void>) | undefined;
}

export interface FaultServer {
  url: string;
  close(): Promise<void>;
}

class FaultError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export async function apply(
  command: FaultCommand,
  targets: FaultTargets,
  downNodes: Set<string>,
): Promise<unknown> {
  const nodeOf = (name: string) => {
    const n = targets.nodes.get(name);
    if (!n) throw new FaultError(404, `no node ${name}; nodes: ${[...targets.nodes.keys()].join(', ')}`);
    return n;
  };
  switch (command.kind) {
    case 'list-nodes':
      return [...targets.nodes].map(([name, n]): FaultNode => ({
        name,
        zone: n.zone,
        down: downNodes.has(name),
      }));
    case 'node': {
      const n = nodeOf(command.node);
      if (command.action === 'down') {
        await n.faults.nodeDown();
        downNodes.add(command.node);
      } else {
        await n.faults.nodeUp();
        downNodes.delete(command.node);
      }
      return undefined;
    }
    case 'container': {
      const nodeName = await targets.nodeOfPod(command.namespace, command.pod);
      if (!nodeName)
        throw new FaultError(
          404,
          `pod ${command.namespace}/${command.pod} does not exist or is not bound to a node`,
        );
      const { faults } = nodeOf(nodeName);
      const act = {
        crash: faults.crashContainer,
        freeze: faults.freezeContainer,
        thaw: faults.thawContainer,
      }[command.action];
      await act.call(faults, command.namespace, command.pod, command.container);
      return undefined;
    }
    case 'wipe-claim':
      if (!targets.wipeClaim) throw new FaultError(501, 'this stack cannot wipe claims');
      await targets.wipeClaim(command.namespace, command.claim);
      return undefined;
  }
}

export async function startFaultServer(
  host: string,
  port: number,
  targets: FaultTargets,
  log: (line: string) => void,
): Promise<FaultServer> {
  const downNodes = new Set<string>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const parsed = parseFaultRequest(req.method ?? 'GET', req.url ?? '/');
    req.resume();
    const reply = (status: number, body?: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(body === undefined ? '' : JSON.stringify(body));
    };
    if (!parsed.ok) return reply(parsed.status, { error: parsed.message });
    if (parsed.command.kind !== 'list-nodes') log(`faults: ${req.method} ${req.url}`);
    apply(parsed.command, targets, downNodes).then(
      (body) => reply(body === undefined ? 204 : 200, body),
      (e: unknown) =>
        reply(e instanceof FaultError ? e.status : 500, {
          error: e instanceof Error ? e.message : String(e),
        }),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  return {
    url: `http://${host}:${addr.port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
