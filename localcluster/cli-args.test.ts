import { parseCli, toolSetOf } from './cli-args';

const defaults = { stateDir: '/repo/.local', hostIp: '127.0.0.1' };

describe('parseCli', () => {
  test.each([
    ['the operator is a host process by default', ['up'], { operatorMode: 'process', claimsInMemory: false }],
    [
      '--real-nodes is still accepted',
      ['up', '--real-nodes', '--claims-in-memory'],
      { command: 'up', claimsInMemory: true, positional: [] },
    ],
    ['chart mode', ['up', '--operator=chart'], { operatorMode: 'chart' }],
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
      '--process-nodes, whose runtime was removed',
      ['up', '--process-nodes'],
      'process-backed nodes were removed; real nodes are the only runtime',
    ],
  ])('refuses %s', (_name, argv, message) => {
    expect(() => parseCli(argv, defaults)).toThrow(message);
  });

  test('--real-nodes parses as if it were not given', () => {
    expect(parseCli(['up', '--real-nodes', '--operator=chart'], defaults)).toEqual(
      parseCli(['up', '--operator=chart'], defaults),
    );
  });
});

describe('toolSetOf (main.js tools [host])', () => {
  test.each([
    ['no argument builds every tool', [], 'all'],
    ['host builds only the host tools', ['host'], 'host'],
  ])('%s', (_name, positional, expected) => {
    expect(toolSetOf(positional)).toBe(expected);
  });
  test.each([
    ['an unknown set', ['nodes'], 'not "nodes"'],
    ['host with something after it', ['host', 'extra'], 'not "host extra"'],
  ])('refuses %s', (_name, positional, message) => {
    expect(() => toolSetOf(positional)).toThrow(message);
  });
});
