import { parseFaultArgs } from './fault-cli';

describe('parseFaultArgs', () => {
  it.each([
    [['kill', 'ns/etcd-0'], { kind: 'kill', namespace: 'ns', pod: 'etcd-0', container: 'etcd' }],
    [['kill', 'ns/etcd-0/agent'], { kind: 'kill', namespace: 'ns', pod: 'etcd-0', container: 'agent' }],
    [
      ['freeze', 'ns/etcd-1', '15'],
      { kind: 'freeze', namespace: 'ns', pod: 'etcd-1', container: 'etcd', seconds: 15 },
    ],
    [['node-stop', 'node-b', '60'], { kind: 'node-stop', node: 'node-b', seconds: 60 }],
    [['partition', 'node-a', '30'], { kind: 'partition', node: 'node-a', seconds: 30 }],
    [['heal'], { kind: 'heal', node: undefined }],
    [['heal', 'node-a'], { kind: 'heal', node: 'node-a' }],
    [['fill', 'ns/etcd-1', '60'], { kind: 'fill', namespace: 'ns', pod: 'etcd-1', seconds: 60 }],
    [['release', 'ns/etcd-1'], { kind: 'release', namespace: 'ns', pod: 'etcd-1' }],
  ])('%j', (args, expected) => {
    expect(parseFaultArgs(args)).toEqual(expected);
  });

  it.each([
    [[], 'no fault kind given'],
    [['explode', 'x'], 'unknown fault kind explode'],
    [['kill', 'etcd-0'], 'needs <namespace>/<pod>'],
    [['kill', 'ns/etcd-0', '5'], 'kill takes no duration'],
    [['freeze', 'ns/etcd-0'], 'needs a duration'],
    [['freeze', 'ns/etcd-0', '0'], 'from 1 to 600'],
    [['partition', 'node-a', 'forever'], 'from 1 to 600'],
    [['node-stop', 'node-a', '901'], 'from 1 to 900'],
    [['partition'], 'needs a node name'],
    [['heal', 'node-a', '3'], 'heal takes no duration'],
    [['fill', 'ns/etcd-1'], 'needs a duration'],
    [['fill', 'ns/etcd-1', '601'], 'from 1 to 600'],
    [['fill', 'etcd-1', '60'], 'needs <namespace>/<pod>'],
    [['fill', 'ns/etcd-1/etcd', '60'], "a Pod's volume, not a container"],
    [['release', 'ns/etcd-1', '5'], 'release takes no duration'],
  ])('refuses %j: %s', (args, message) => {
    const r = parseFaultArgs(args);
    expect('error' in r ? r.error : '').toContain(message);
  });
});
