import { ApiException } from '@kubernetes/client-node';
import type { StartupStep } from './startup-errors';
import { describeKubeError, describeStartupFailure, startupRetryDelayMs } from './startup-errors';

describe('startupRetryDelayMs', () => {
  it.each<[string, number, number]>([
    ['the first retry waits a second', 1, 1000],
    ['each retry doubles the wait', 4, 8000],
    ['the wait stops growing at a minute', 7, 60_000],
    ['it stays at a minute however long the outage', 1000, 60_000],
  ])('%s', (_name, attempt, ms) => expect(startupRetryDelayMs(attempt)).toBe(ms));
});

const forbidden = new ApiException(
  403,
  'Forbidden',
  JSON.stringify({
    kind: 'Status',
    reason: 'Forbidden',
    message: 'etcdclusters.etcd.conductor.dev is forbidden: User "x" cannot list resource "etcdclusters"',
    code: 403,
  }),
  { 'audit-id': 'abc' },
);
const grpc = (code: number, message: string) => Object.assign(new Error(message), { code });
const where = {
  temporalAddress: 't:7233',
  temporalNamespace: 'prod',
  resource: 'etcdclusters',
  apiServer: 'https://k:6443',
};

describe('describeStartupFailure', () => {
  const cases: Array<[string, StartupStep, unknown, string]> = [
    [
      'an unreachable frontend names the address',
      'temporal-connect',
      new Error('Failed to connect before the deadline\nstack...'),
      'cannot reach the Temporal frontend at t:7233: Failed to connect before the deadline; check temporal.address and that the frontend is up',
    ],
    [
      'a missing namespace names the namespace and the address',
      'temporal-namespace',
      grpc(5, 'Namespace prod is not found.'),
      'Temporal namespace "prod" does not exist at t:7233; check temporal.namespace or create it',
    ],
    [
      'a refused namespace points at the credentials',
      'temporal-namespace',
      grpc(7, 'Request unauthorized.'),
      'Temporal at t:7233 refused access to namespace "prod": Request unauthorized.; check the client certificate or API key',
    ],
    [
      'a 403 on a list names the resource and RBAC, without the response headers',
      'kube-list',
      forbidden,
      'the Kubernetes API at https://k:6443 refused to list etcdclusters (HTTP 403 Forbidden: etcdclusters.etcd.conductor.dev is forbidden: User "x" cannot list resource "etcdclusters"); grant the operator\'s ServiceAccount the chart\'s RBAC',
    ],
    [
      'another list failure says what failed',
      'kube-list',
      new Error('connect ECONNREFUSED 10.0.0.1:443'),
      'cannot list etcdclusters from the Kubernetes API at https://k:6443: connect ECONNREFUSED 10.0.0.1:443',
    ],
  ];
  it.each(cases)('%s', (_name, step, err, text) => {
    expect(describeStartupFailure(step, where, err)).toBe(text);
  });
});

describe('describeKubeError', () => {
  it('keeps code, reason and message and drops the rest', () => {
    expect(describeKubeError(forbidden)).toBe(
      'HTTP 403 Forbidden: etcdclusters.etcd.conductor.dev is forbidden: User "x" cannot list resource "etcdclusters"',
    );
  });
  it('an error that is not from the apiserver shows its first line', () => {
    expect(describeKubeError(new Error('a\nb'))).toBe('a');
  });
});
