// End-to-end: the stack's operator process serves Prometheus text on /metrics, and creating a cluster moves its counters.
import { operatorHttpAddress } from '../../localcluster/stack';
import type { Harness } from '../support/cluster-harness';
import {
  connect,
  createCluster,
  eventually,
  freshNamespace,
  waitConverged,
} from '../support/cluster-harness';

let h: Harness;
beforeAll(() => {
  h = connect();
});

async function scrape(): Promise<string> {
  const res = await fetch(`http://${operatorHttpAddress(h.stack.hostIp)}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  return res.text();
}

/** The value of one sample, by its exact name and label text; 0 when the series is not there yet. */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

describe('operator /metrics', () => {
  test('a cluster created on the stack moves the operation, signal and cluster counters', async () => {
    const before = await scrape();
    const bootstraps = 'etcd_conductor_operations_total{result="Succeeded",type="Bootstrap"}';
    const signals = 'etcd_conductor_watch_changes_signalled_total{kind="cluster"}';
    const durations = 'etcd_conductor_operation_duration_seconds_count{result="Succeeded",type="Bootstrap"}';

    const ns = await freshNamespace(h, 'metrics');
    await createCluster(h, ns, 'm', { replicas: 1 });
    await waitConverged(h, ns, 'm', 1, 300_000);

    const after = await eventually(
      'the operator to count the finished Bootstrap',
      async () => {
        const t = await scrape();
        return sample(t, bootstraps) > sample(before, bootstraps) ? t : undefined;
      },
      120_000,
    );
    expect(sample(after, durations)).toBeGreaterThan(sample(before, durations));
    expect(sample(after, signals)).toBeGreaterThan(sample(before, signals));
    expect(sample(after, `etcd_conductor_cluster_ready_voters{name="m",namespace="${ns}"}`)).toBe(1);
    expect(
      sample(after, 'etcd_conductor_clusters{condition="Available",status="True"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });
});
