import { faultRequest, parseFaultRequest, type FaultCommand } from './fault-command';

describe('parseFaultRequest', () => {
  const cases: Array<[string, string, string, ReturnType<typeof parseFaultRequest>]> = [
    ['listing nodes is a GET', 'GET', '/v1/nodes', { ok: true, command: { kind: 'list-nodes' } }],
    [
      'taking a node down is a POST on the node',
      'POST',
      '/v1/nodes/node-b/down',
      { ok: true, command: { kind: 'node', node: 'node-b', action: 'down' } },
    ],
    [
      'crashing a pod without a container name targets its first container',
      'POST',
      '/v1/pods/default/etcd-0/crash',
      {
        ok: true,
        command: {
          kind: 'container',
          namespace: 'default',
          pod: 'etcd-0',
          container: undefined,
          action: 'crash',
        },
      },
    ],
    [
      'a container is chosen with ?container=',
      'POST',
      '/v1/pods/ns/p/freeze?container=etcd',
      {
        ok: true,
        command: { kind: 'container', namespace: 'ns', pod: 'p', container: 'etcd', action: 'freeze' },
      },
    ],
    [
      'wiping a claim names its namespace and claim',
      'POST',
      '/v1/claims/ns/data-etcd-0/wipe',
      { ok: true, command: { kind: 'wipe-claim', namespace: 'ns', claim: 'data-etcd-0' } },
    ],
    [
      'a GET cannot inject a fault',
      'GET',
      '/v1/nodes/node-a/down',
      { ok: false, status: 405, message: '/v1/nodes/node-a/down takes POST' },
    ],
    [
      'an unknown action is not found',
      'POST',
      '/v1/pods/ns/p/explode',
      { ok: false, status: 404, message: 'no such fault: POST /v1/pods/ns/p/explode' },
    ],
    [
      'extra path segments are not found',
      'POST',
      '/v1/nodes/a/down/now',
      { ok: false, status: 404, message: 'no such fault: POST /v1/nodes/a/down/now' },
    ],
  ];
  it.each(cases)('%s', (_n, method, url, expected) =>
    expect(parseFaultRequest(method, url)).toEqual(expected),
  );

  it('inverts faultRequest for every command, including names that need escaping', () => {
    const commands: FaultCommand[] = [
      { kind: 'list-nodes' },
      { kind: 'node', node: 'node-a', action: 'up' },
      { kind: 'container', namespace: 'n s', pod: 'p/1', container: 'c?x', action: 'thaw' },
      { kind: 'wipe-claim', namespace: 'ns', claim: 'c' },
    ];
    for (const command of commands) {
      const { method, path } = faultRequest(command);
      expect(parseFaultRequest(method, path)).toEqual({ ok: true, command });
    }
  });
});
