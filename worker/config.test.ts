import { configFromEnv } from './config';

describe('configFromEnv', () => {
  const ok: Array<[string, NodeJS.ProcessEnv, object]> = [
    [
      'an empty environment gives the local stack defaults: both roles, plain TCP, no HTTP server',
      {},
      {
        roles: ['worker', 'watcher'],
        logLevel: 'info',
        temporalAddress: '127.0.0.1:7233',
        temporalNamespace: 'default',
        identity: 'localhost-0',
        operatorNamespace: 'default',
        alarmPollSeconds: 15,
      },
    ],
    [
      'the etcd alarm poller runs at the interval asked, and 0 turns it off',
      { ALARM_POLL_INTERVAL_SECONDS: '0' },
      { alarmPollSeconds: 0 },
    ],
    [
      'in a Pod the Lease identity is the Pod name and its namespace the operator namespace',
      { POD_NAME: 'op-7d9f', OPERATOR_NAMESPACE: 'etcd-system' },
      { identity: 'op-7d9f', operatorNamespace: 'etcd-system' },
    ],
    [
      'an explicit identity wins over the Pod name',
      { POD_NAME: 'op-7d9f', OPERATOR_IDENTITY: 'b' },
      { identity: 'b' },
    ],
    [
      'a client certificate turns TLS on and carries the CA and server name',
      {
        TEMPORAL_TLS_CERT_FILE: '/t/tls.crt',
        TEMPORAL_TLS_KEY_FILE: '/t/tls.key',
        TEMPORAL_TLS_CA_FILE: '/t/ca.crt',
        TEMPORAL_TLS_SERVER_NAME: 'temporal.example',
      },
      {
        temporalTls: {
          clientCertFile: '/t/tls.crt',
          clientKeyFile: '/t/tls.key',
          caFile: '/t/ca.crt',
          serverName: 'temporal.example',
        },
      },
    ],
    ['an API key alone turns TLS on', { TEMPORAL_API_KEY: 'k' }, { temporalTls: {}, temporalApiKey: 'k' }],
    [
      'TEMPORAL_TLS=true without a certificate uses server TLS only',
      { TEMPORAL_TLS: 'true' },
      { temporalTls: {} },
    ],
    [
      'the chart settings are read under their own names',
      {
        OPERATOR_ROLES: 'worker',
        LOG_LEVEL: 'debug',
        TEMPORAL_TASK_QUEUE: 'q',
        WATCH_NAMESPACE: 'ns',
        OPERATOR_HTTP_ADDRESS: '0.0.0.0:9464',
      },
      {
        roles: ['worker'],
        logLevel: 'debug',
        taskQueue: 'q',
        watchNamespace: 'ns',
        httpAddress: '0.0.0.0:9464',
      },
    ],
    [
      'an all-namespace operator can leave namespaces to another installation',
      { EXCLUDE_NAMESPACES: 'team-a, team-b,' },
      { excludeNamespaces: ['team-a', 'team-b'] },
    ],
  ];
  it.each(ok)('%s', (_name, env, expected) => {
    expect(configFromEnv(env)).toMatchObject(expected);
  });

  it('outside a Pod the identity is hostname-pid and the namespace that of the mounted token', () => {
    expect(configFromEnv({}, { hostname: 'h', pid: 42, serviceAccountNamespace: 'ops' })).toMatchObject({
      identity: 'h-42',
      operatorNamespace: 'ops',
    });
  });

  it('leaves TLS and the HTTP server off and excludes no namespace unless asked', () => {
    const c = configFromEnv({});
    expect(c.temporalTls).toBeUndefined();
    expect(c.httpAddress).toBeUndefined();
    expect(c.excludeNamespaces).toBeUndefined();
  });

  const bad: Array<[string, NodeJS.ProcessEnv, RegExp]> = [
    ['an unknown role is refused by name', { OPERATOR_ROLES: 'worker,boss' }, /unknown role "boss"/],
    [
      'an unknown log level is refused with the valid ones',
      { LOG_LEVEL: 'loud' },
      /debug, info, warn, error/,
    ],
    [
      'a certificate without its key is refused',
      { TEMPORAL_TLS_CERT_FILE: '/t/tls.crt' },
      /must be set together/,
    ],
    [
      'an alarm poll interval that is not whole seconds is refused',
      { ALARM_POLL_INTERVAL_SECONDS: '2.5' },
      /ALARM_POLL_INTERVAL_SECONDS: expected whole seconds/,
    ],
    ['TEMPORAL_TLS must be a boolean', { TEMPORAL_TLS: 'yes' }, /expected true or false/],
    ['the HTTP address needs a port', { OPERATOR_HTTP_ADDRESS: '0.0.0.0' }, /expected host:port/],
    [
      'excluding namespaces from a one-namespace operator is refused',
      { WATCH_NAMESPACE: 'ns', EXCLUDE_NAMESPACES: 'other' },
      /EXCLUDE_NAMESPACES applies to an operator of all namespaces/,
    ],
  ];
  it.each(bad)('%s', (_name, env, message) => {
    expect(() => configFromEnv(env)).toThrow(message);
  });
});
