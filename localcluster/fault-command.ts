// The fault-control wire protocol: which HTTP request means which fault; shared by the daemon's endpoint and the test client so both sides agree.
export type ContainerFault = 'crash' | 'freeze' | 'thaw';

export type FaultCommand =
  | { kind: 'list-nodes' }
  | { kind: 'node'; node: string; action: 'down' | 'up' }
  | {
      kind: 'container';
      namespace: string;
      pod: string;
      container: string | undefined;
      action: ContainerFault;
    }
  | { kind: 'wipe-claim'; namespace: string; claim: string };

export type ParsedFault =
  { ok: true; command: FaultCommand } | { ok: false; status: 404 | 405; message: string };

const seg = (s: string) => encodeURIComponent(s);

/** The request a command is sent as; parseFaultRequest inverts it. */
export function faultRequest(command: FaultCommand): { method: 'GET' | 'POST'; path: string } {
  switch (command.kind) {
    case 'list-nodes':
      return { method: 'GET', path: '/v1/nodes' };
    case 'node':
      return { method: 'POST', path: `/v1/nodes/${seg(command.node)}/${command.action}` };
    case 'container': {
      const q = command.container ? `?container=${seg(command.container)}` : '';
      return {
        method: 'POST',
        path: `/v1/pods/${seg(command.namespace)}/${seg(command.pod)}/${command.action}${q}`,
      };
    }
    case 'wipe-claim':
      return { method: 'POST', path: `/v1/claims/${seg(command.namespace)}/${seg(command.claim)}/wipe` };
  }
}

export function parseFaultRequest(method: string, url: string): ParsedFault {
  const u = new URL(url, 'http://fault-control');
  const parts = u.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  const [version, kind, a, b, c, ...rest] = parts;
  const notFound: ParsedFault = { ok: false, status: 404, message: `no such fault: ${method} ${u.pathname}` };
  if (version !== 'v1' || rest.length > 0) return notFound;
  const needPost = (command: FaultCommand): ParsedFault =>
    method === 'POST'
      ? { ok: true, command }
      : { ok: false, status: 405, message: `${u.pathname} takes POST` };
  if (kind === 'nodes' && a === undefined) {
    return method === 'GET'
      ? { ok: true, command: { kind: 'list-nodes' } }
      : { ok: false, status: 405, message: '/v1/nodes takes GET' };
  }
  if (kind === 'nodes' && a && (b === 'down' || b === 'up') && c === undefined)
    return needPost({ kind: 'node', node: a, action: b });
  if (kind === 'pods' && a && b && (c === 'crash' || c === 'freeze' || c === 'thaw')) {
    return needPost({
      kind: 'container',
      namespace: a,
      pod: b,
      container: u.searchParams.get('container') ?? undefined,
      action: c,
    });
  }
  if (kind === 'claims' && a && b && c === 'wipe')
    return needPost({ kind: 'wipe-claim', namespace: a, claim: b });
  return notFound;
}
