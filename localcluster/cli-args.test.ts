import { parseCli } from './cli-args';

const defaults = { stateDir: '/repo/.local', hostIp: '127.0.0.1' };

describe('parseCli', () => {
  test.each([
    ['nodes are real by default', ['up'], { realNodes: true, operatorMode: 'process' }],
    ['--process-nodes asks for the stopgap runtime', ['up', '--process-nodes'], { realNodes: false }],
    [
      '--real-nodes is still accepted',
      ['up', '--real-nodes', '--claims-in-memory'],
      { realNodes: true, claimsInMemory: true },
    ],
    ['the last node flag wins', ['up', '--process-nodes', '--real-nodes'], { realNodes: true }],
    ['chart mode on real nodes', ['up', '--operator=chart'], { realNodes: true, operatorMode: 'chart' }],
    [
      'state folder and host IP',
      ['up', '--state-dir', 'x', '--host-ip', '127.9.0.1'],
      { stateDir: 'x', hostIp: '127.9.0.1' },
    ],
    [
      'defaults when not given',
      ['down'],
      { stateDir: '/repo/.local', hostIp: '127.0.0.1', withOperator: true },
    ],
    [
      'without operator and cert-manager',
      ['up', '--no-operator', '--no-cert-manager'],
      { withOperator: false, withCertManager: false },
    ],
    [
      'positional arguments in order',
      ['fault', 'freeze', 'm-1', '5s'],
      { positional: ['freeze', 'm-1', '5s'] },
    ],
    ['no command is help', [], { command: 'help' }],
  ])('%s', (_name, argv, expected) => {
    expect(parseCli(argv, defaults)).toMatchObject(expected);
  });

  test.each([
    ['an unknown option', ['up', '--fast'], 'unknown option --fast'],
    ['an option without its value', ['up', '--host-ip'], '--host-ip needs a value'],
    ['an unknown operator mode', ['up', '--operator=pod'], '--operator must be process or chart, not "pod"'],
    [
      'the chart on process nodes',
      ['up', '--process-nodes', '--operator=chart'],
      'process-backed nodes cannot',
    ],
  ])('refuses %s', (_name, argv, message) => {
    expect(() => parseCli(argv, defaults)).toThrow(message);
  });
});
