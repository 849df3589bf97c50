import type { CoreV1Event } from '@kubernetes/client-node';
import { ApiException } from '@kubernetes/client-node';
import type { CountedEvent, EventApi } from './event-recorder';
import { eventName, recordCounted, recordOrDrop } from './event-recorder';

const refused = (code: number) => new ApiException(code, 'refused', undefined, {});

describe('recordOrDrop', () => {
  test.each<[string, () => Promise<void>, 'recorded' | 'dropped']>([
    ['an Event the apiserver takes is recorded', async () => undefined, 'recorded'],
    ['a 422 (e.g. a message too long) is dropped', () => Promise.reject(refused(422)), 'dropped'],
    ['a 403 (no RBAC for events) is dropped', () => Promise.reject(refused(403)), 'dropped'],
  ])('%s', async (_name, record, expected) => {
    await expect(recordOrDrop(record)).resolves.toBe(expected);
  });

  test.each<[string, unknown]>([
    ['a 503 is thrown, for Temporal to retry', refused(503)],
    ['a network error is thrown', new Error('connect ECONNREFUSED')],
  ])('%s', async (_name, err) => {
    await expect(recordOrDrop(() => Promise.reject(err))).rejects.toBe(err);
  });
});

describe('recordCounted: one Event per object, reason, message and workflow, counted as Kubernetes counts', () => {
  const cluster = {
    apiVersion: 'etcd.conductor.dev/v1alpha1',
    kind: 'EtcdCluster',
    namespace: 'prod',
    name: 'main',
    uid: 'uid-1',
  };
  const event = (more: Partial<CountedEvent> = {}): CountedEvent => ({
    involvedObject: cluster,
    type: 'Warning',
    reason: 'UpgradePathRefused',
    message: 'refused: 3.4 -> 3.6 skips 3.5',
    component: 'etcd-conductor',
    ...more,
  });
  const op = (execution: string, workflowId = 'etcdcluster/prod/main') => ({ workflowId, execution });

  function memoryEvents() {
    const stored = new Map<string, CoreV1Event>();
    const api: EventApi = {
      async create(namespace, body) {
        const key = `${namespace}/${body.metadata?.name ?? ''}`;
        if (stored.has(key)) return 'exists';
        stored.set(key, structuredClone({ ...body, metadata: { ...body.metadata, resourceVersion: '1' } }));
        return 'created';
      },
      async read(namespace, name) {
        return structuredClone(stored.get(`${namespace}/${name}`));
      },
      async mergePatch(namespace, name, patch) {
        const e = stored.get(`${namespace}/${name}`);
        const p = patch as { metadata?: { annotations?: Record<string, string> }; count?: number };
        if (!e) throw new Error('not found');
        e.count = p.count ?? e.count;
        e.metadata = {
          ...e.metadata,
          annotations: { ...e.metadata?.annotations, ...p.metadata?.annotations },
        };
      },
    };
    return { api, stored };
  }

  const now = new Date('2026-01-01T00:00:00Z');

  test.each<[string, [CountedEvent, ReturnType<typeof op>][], number[]]>([
    ['a notice told once is one Event of count 1', [[event(), op('run/1')]], [1]],
    [
      'a retry of the same activity (its write timed out) counts nothing more',
      [
        [event(), op('run/1')],
        [event(), op('run/1')],
      ],
      [1],
    ],
    [
      'the same notice from a later activity of the same workflow raises the count',
      [
        [event(), op('run/1')],
        [event(), op('run/2')],
        [event(), op('run/3')],
      ],
      [3],
    ],
    [
      'another message is another Event',
      [
        [event(), op('run/1')],
        [event({ message: 'refused: 3.5.10 -> 3.6 needs 3.5.32 first' }), op('run/2')],
      ],
      [1, 1],
    ],
    [
      'the same notice from another workflow (another operation) is another Event',
      [
        [event(), op('run/1', 'etcdcluster/prod/main/op/1-scaleup')],
        [event(), op('run/1', 'etcdcluster/prod/main/op/2-scaleup')],
      ],
      [1, 1],
    ],
  ])('%s', async (_name, calls, counts) => {
    const { api, stored } = memoryEvents();
    for (const [e, caller] of calls) await recordCounted(api, e, caller, now);
    expect([...stored.values()].map((e) => e.count)).toEqual(counts);
    for (const e of stored.values()) expect(e.metadata?.name).toMatch(/^main\.[0-9a-f]{16}$/);
  });

  it('names the Event the same way every time, so a retry finds it', () => {
    expect(eventName(event(), 'wf')).toBe(eventName(event(), 'wf'));
    expect(eventName(event(), 'wf')).not.toBe(eventName(event({ reason: 'AuthFailed' }), 'wf'));
    expect(eventName(event(), 'wf')).not.toBe(
      eventName(event({ involvedObject: { ...cluster, uid: 'uid-2' } }), 'wf'),
    );
  });
});
