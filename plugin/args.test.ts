import { parsePluginArgs, UsageError } from './args';

describe('parsePluginArgs', () => {
  test.each([
    {
      case: 'a command and a cluster, with defaults',
      argv: ['status', 'main'],
      want: {
        command: 'status',
        cluster: 'main',
        output: 'table',
        wait: true,
        timeoutSeconds: 600,
        limit: 20,
      },
    },
    {
      case: 'approve-recovery, without waiting',
      argv: ['approve-recovery', 'main', '--no-wait'],
      want: { command: 'approve-recovery', cluster: 'main', wait: false },
    },
    {
      case: 'kubectl-style short flags',
      argv: ['backups', 'main', '-n', 'prod', '-o', 'json'],
      want: { command: 'backups', cluster: 'main', namespace: 'prod', output: 'json' },
    },
    {
      case: 'long flags, in any position',
      argv: ['--namespace=prod', 'snapshot', '--no-wait', 'main', '--timeout', '30'],
      want: { command: 'snapshot', cluster: 'main', namespace: 'prod', wait: false, timeoutSeconds: 30 },
    },
    {
      case: 'Temporal flags and a limit',
      argv: [
        'ops',
        'main',
        '--temporal-address',
        '10.0.0.1:7233',
        '--temporal-namespace',
        'etcd',
        '--limit',
        '5',
      ],
      want: { temporalAddress: '10.0.0.1:7233', temporalNamespace: 'etcd', limit: 5 },
    },
  ])('$case', ({ argv, want }) => {
    expect(parsePluginArgs(argv)).toMatchObject(want);
  });

  test.each([[[]], [['--help']], [['-h']], [['help']], [['status', '-h']]])('%j asks for help', (argv) => {
    expect(parsePluginArgs(argv)).toBe('help');
  });

  test.each([
    {
      case: 'an unknown command',
      argv: ['delete', 'main'],
      message: 'unknown command "delete": one of status, ops',
    },
    { case: 'no cluster', argv: ['status'], message: "status needs the EtcdCluster's name" },
    { case: 'a second name', argv: ['status', 'a', 'b'], message: 'unexpected argument "b"' },
    {
      case: 'an unknown output',
      argv: ['status', 'a', '-o', 'yaml'],
      message: '--output is table or json, not "yaml"',
    },
    { case: 'an unknown flag', argv: ['status', 'a', '--all'], message: "Unknown option '--all'" },
    {
      case: 'a timeout that is no number',
      argv: ['snapshot', 'a', '--timeout', '1m'],
      message: '--timeout wants a whole number above 0, not "1m"',
    },
    {
      case: 'a zero limit',
      argv: ['ops', 'a', '--limit', '0'],
      message: '--limit wants a whole number above 0',
    },
  ])('refuses $case', ({ argv, message }) => {
    expect(() => parsePluginArgs(argv)).toThrow(UsageError);
    expect(() => parsePluginArgs(argv)).toThrow(message);
  });
});
