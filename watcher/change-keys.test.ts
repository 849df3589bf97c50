import { clusterChangeKey, memberChangeKey, owningCluster } from './change-keys';

const cluster = (over: Record<string, unknown> = {}) => ({
  metadata: { uid: 'u1', generation: 3, annotations: {}, ...over },
});

describe('clusterChangeKey', () => {
  const base = clusterChangeKey(cluster());
  test.each([
    ['a resync of the same object is no change', cluster(), true],
    [
      'a status-only update (same generation) is no change',
      { ...cluster(), status: { readyReplicas: 2 } },
      true,
    ],
    ['an unrelated annotation is no change', cluster({ annotations: { note: 'x' } }), true],
    ['a new generation is a change', cluster({ generation: 4 }), false],
    [
      'a new retry annotation value is a change',
      cluster({ annotations: { 'etcd.conductor.dev/retry': '1' } }),
      false,
    ],
    ['a deletion timestamp is a change', cluster({ deletionTimestamp: '2026-01-01T00:00:00Z' }), false],
    ['a recreated object (new uid) is a change', cluster({ uid: 'u2' }), false],
  ])('%s', (_name, obj, same) => {
    expect(clusterChangeKey(obj) === base).toBe(same);
  });
});

describe('memberChangeKey', () => {
  const pod = (status: Record<string, unknown>, meta: Record<string, unknown> = {}) => ({
    metadata: { uid: 'p1', labels: { 'etcd.conductor.dev/role': 'voter' }, ...meta },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True' }],
      containerStatuses: [{ restartCount: 0 }],
      ...status,
    },
  });
  const base = memberChangeKey(pod({}));
  test.each([
    ['the same Pod again is no change', pod({}), true],
    [
      'a new probe time alone is no change',
      pod({ conditions: [{ type: 'Ready', status: 'True', lastProbeTime: 'x' }] }),
      true,
    ],
    ['turning unready is a change', pod({ conditions: [{ type: 'Ready', status: 'False' }] }), false],
    ['a restart is a change', pod({ containerStatuses: [{ restartCount: 1 }] }), false],
    [
      'an image that cannot be pulled is a change',
      pod({ containerStatuses: [{ restartCount: 0, state: { waiting: { reason: 'ErrImagePull' } } }] }),
      false,
    ],
    ['a deletion timestamp is a change', pod({}, { deletionTimestamp: 'now' }), false],
    ['a role label flip is a change', pod({}, { labels: { 'etcd.conductor.dev/role': 'learner' } }), false],
    [
      'a data-lost mark is a change',
      pod({}, { annotations: { 'etcd.conductor.dev/data-lost': 'true' } }),
      false,
    ],
  ])('%s', (_name, obj, same) => {
    expect(memberChangeKey(obj) === base).toBe(same);
  });

  const waiting = (reason: string | undefined, restartCount = 0) =>
    pod({
      conditions: [{ type: 'Ready', status: 'False' }],
      containerStatuses: [{ restartCount, state: reason ? { waiting: { reason } } : { running: {} } }],
    });
  test.each([
    [
      'the kubelet alternating ErrImagePull and ImagePullBackOff is no change',
      waiting('ErrImagePull'),
      waiting('ImagePullBackOff'),
      true,
    ],
    [
      'a crash-looping container running again between back-offs is no change',
      waiting('CrashLoopBackOff', 3),
      waiting(undefined, 4),
      true,
    ],
    [
      'a further restart of a crash-looping container is no change',
      waiting('CrashLoopBackOff', 3),
      waiting('CrashLoopBackOff', 9),
      true,
    ],
    [
      'a pulled image (now creating the container) is a change',
      waiting('ImagePullBackOff'),
      waiting('ContainerCreating'),
      false,
    ],
  ])('%s', (_name, a, b, same) => {
    expect(memberChangeKey(a) === memberChangeKey(b)).toBe(same);
  });
});

describe('owningCluster', () => {
  test.each([
    [
      'a labelled object belongs to its cluster',
      { metadata: { namespace: 'ns', labels: { 'etcd.conductor.dev/cluster': 'main' } } },
      { namespace: 'ns', name: 'main' },
    ],
    ['an unlabelled object belongs to none', { metadata: { namespace: 'ns', labels: {} } }, undefined],
  ])('%s', (_name, obj, want) => {
    expect(owningCluster(obj)).toEqual(want);
  });
});
