import type { HealthState } from './health';
import { healthResponse } from './health';

describe('healthResponse', () => {
  const ready: HealthState = { notReady: () => undefined };
  const starting: HealthState = { notReady: () => 'connecting to Temporal at t:7233' };
  const leader: HealthState = {
    notReady: () => undefined,
    readyDetail: () => 'roles worker, watcher (holds the watcher Lease)',
    metrics: () => Promise.resolve('# HELP x h\n# TYPE x gauge\nx 1\n'),
  };
  const text = 'text/plain; charset=utf-8';
  const cases: Array<[string, string, HealthState, number, string, string]> = [
    ['liveness answers while the operator is still starting', '/healthz', starting, 200, 'ok\n', text],
    ['readiness is 200 once the roles run', '/readyz', ready, 200, 'ok\n', text],
    [
      'readiness is 503 with the reason while not ready',
      '/readyz',
      starting,
      503,
      'not ready: connecting to Temporal at t:7233\n',
      text,
    ],
    [
      'readiness names the roles when the operator says them',
      '/readyz',
      leader,
      200,
      'ok: roles worker, watcher (holds the watcher Lease)\n',
      text,
    ],
    ['a query string does not change the route', '/readyz?verbose', ready, 200, 'ok\n', text],
    [
      '/metrics serves the exposition with the Prometheus 0.0.4 content type',
      '/metrics',
      leader,
      200,
      '# HELP x h\n# TYPE x gauge\nx 1\n',
      'text/plain; version=0.0.4; charset=utf-8',
    ],
    [
      'without metrics /metrics is 404 and names the real paths',
      '/metrics',
      ready,
      404,
      'not found: try /healthz, /readyz\n',
      text,
    ],
    [
      'an unknown path is 404 and names the real ones',
      '/metricz',
      leader,
      404,
      'not found: try /healthz, /readyz or /metrics\n',
      text,
    ],
  ];
  it.each(cases)('%s', async (_name, path, state, status, body, contentType) => {
    await expect(healthResponse(path, state)).resolves.toEqual({ status, body, contentType });
  });
});
