import { healthResponse } from './health';

describe('healthResponse', () => {
  const ready = { notReady: () => undefined };
  const starting = { notReady: () => 'connecting to Temporal at t:7233' };
  const cases: Array<[string, string, { notReady(): string | undefined }, number, string]> = [
    ['liveness answers while the operator is still starting', '/healthz', starting, 200, 'ok\n'],
    ['readiness is 200 once the roles run', '/readyz', ready, 200, 'ok\n'],
    [
      'readiness is 503 with the reason while not ready',
      '/readyz',
      starting,
      503,
      'not ready: connecting to Temporal at t:7233\n',
    ],
    ['a query string does not change the route', '/readyz?verbose', ready, 200, 'ok\n'],
    [
      'an unknown path is 404 and names the real ones',
      '/metricz',
      ready,
      404,
      'not found: try /healthz or /readyz\n',
    ],
  ];
  it.each(cases)('%s', (_name, path, state, status, body) => {
    expect(healthResponse(path, state)).toEqual({ status, body });
  });
});
