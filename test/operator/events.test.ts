// Events as Kubernetes counts them, on the real apiserver: one Event per notice, a retry changes nothing, a repeat
// raises the count (activities/event-recorder.ts).
import { API_VERSION, ETCD_CLUSTER } from '../../crds/etcd-cluster';
import type { CountedEvent } from '../../activities/event-recorder';
import { apiserverEvents, eventName, recordCounted } from '../../activities/event-recorder';
import type { Harness } from '../support/cluster-harness';
import { connect, freshNamespace } from '../support/cluster-harness';

let h: Harness;
beforeAll(() => {
  h = connect();
});

test('a notice told by a retried activity is one Event; told again by a later activity its count is 2', async () => {
  const ns = await freshNamespace(h, 'events');
  const api = apiserverEvents(h.kc);
  const event: CountedEvent = {
    involvedObject: {
      apiVersion: API_VERSION,
      kind: ETCD_CLUSTER.kind,
      namespace: ns,
      name: 'ev',
      uid: 'uid-ev',
    },
    type: 'Warning',
    reason: 'UpgradePathRefused',
    message: 'upgrade 3.4.0 -> 3.6.16 skips 3.5',
    component: 'etcd-conductor',
  };
  const workflowId = `etcdcluster/${ns}/ev`;
  const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));

  expect(await recordCounted(api, event, { workflowId, execution: 'run-1/7' }, at(0))).toBe('created');
  // The same activity execution again: its write had timed out, the retry finds it.
  expect(await recordCounted(api, event, { workflowId, execution: 'run-1/7' }, at(1))).toBe('unchanged');
  // A later activity tells the same notice.
  expect(await recordCounted(api, event, { workflowId, execution: 'run-1/12' }, at(2))).toBe('counted');

  const list = await h.core.listNamespacedEvent({ namespace: ns });
  const ours = list.items.filter((e) => e.involvedObject.name === 'ev');
  expect(ours).toHaveLength(1);
  expect(ours[0]).toMatchObject({
    count: 2,
    reason: 'UpgradePathRefused',
    metadata: { name: eventName(event, workflowId) },
  });
  expect(new Date(ours[0]?.lastTimestamp ?? 0).toISOString()).toBe(at(2).toISOString());
  expect(new Date(ours[0]?.firstTimestamp ?? 0).toISOString()).toBe(at(0).toISOString());
});
