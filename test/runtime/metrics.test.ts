// End-to-end: the stack's operator serves Prometheus text on /metrics, and creating a cluster moves its counters. With
// the chart's two replicas each serves its own: counters add up across them (whichever worker ran the step counted
// it), and the watcher's gauges come from the replica that holds the watcher Lease.
import type { Harness } from '../support/cluster-harness';
import { operatorHttpAddresses } from '../support/operator-process';
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

/** Every running operator's /metrics, one text each. */
async function scrape(): Promise<string[]> {
  const addresses = await operatorHttpAddresses(h);
  expect(addresses.length).toBeGreaterThan(0);
  return Promise.all(
    addresses.map(async (address) => {
      const res = await fetch(`http://${address}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      return res.text();
    }),
  );
}

/** The value of one sample in one text, by its exact name and label text; 0 when the series is not there yet. */
function sampleOf(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}
/** A counter: the sum over the replicas. */
const sample = (texts: string[], series: string) => texts.reduce((sum, t) => sum + sampleOf(t, series), 0);
/** A gauge: the largest any replica reports (the watcher's are reported by the Lease holder only). */
const gauge = (texts: string[], series: string) => Math.max(...texts.map((t) => sampleOf(t, series)));

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
    expect(gauge(after, `etcd_conductor_cluster_ready_voters{name="m",namespace="${ns}"}`)).toBe(1);
    expect(
      gauge(after, 'etcd_conductor_clusters{condition="Available",status="True"}'),
    ).toBeGreaterThanOrEqual(1);
    for (const text of after) expect(sampleOf(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });
});
