import type { ClusterChange } from '../contracts/messages';
import type { ClusterObservation } from '../contracts/observation';
import { lookAfterRemoval, lookServesChange, takenFromLookAfterRemoval } from './observation';

const member = (
  n: number,
  extra: Partial<NonNullable<ClusterObservation['etcd']>['members'][number]> = {},
) => ({
  id: String(100 + n),
  name: `c-${n}`,
  isLearner: false,
  started: true,
  reachable: true,
  ...extra,
});
const kube = (n: number): ClusterObservation['kube'][number] => ({
  name: `c-${n}`,
  pod: { phase: 'Running', ready: true, terminating: false, uid: `u${n}`, restartCount: 0 },
  claim: { terminating: false, dataLost: false },
});
const look: ClusterObservation = {
  etcd: { clusterId: '7', leaderId: '100', members: [0, 1, 2, 3, 4].map((n) => member(n)) },
  kube: [0, 1, 2, 3, 4].map(kube),
  versionKnown: true,
};

describe('lookAfterRemoval', () => {
  test('drops the removed member from etcd, marks its Pod and claim going, and leaves the rest as they were', () => {
    const after = lookAfterRemoval(look, { member: 'c-4', id: '104' });
    expect(after.etcd?.members.map((m) => m.name)).toEqual(['c-0', 'c-1', 'c-2', 'c-3']);
    expect(after.etcd?.leaderId).toBe('100');
    expect(after.etcd?.clusterId).toBe('7');
    expect(after.kube.find((k) => k.name === 'c-4')).toMatchObject({
      pod: { terminating: true, uid: 'u4' },
      claim: { terminating: true, dataLost: false },
    });
    expect(after.kube.filter((k) => k.name !== 'c-4')).toEqual(look.kube.slice(0, 4));
    expect(after.versionKnown).toBe(true);
    // The look it came from is not changed.
    expect(look.etcd?.members).toHaveLength(5);
    expect(look.kube[4]?.pod?.terminating).toBe(false);
  });

  test.each([
    ['a member etcd no longer lists (by id)', { member: 'c-4', id: '999' }, 5],
    ['the removed member by id, whatever its name', { member: 'other', id: '103' }, 4],
  ])('removes by member id: %s', (_what, removed, left) => {
    expect(lookAfterRemoval(look, removed).etcd?.members).toHaveLength(left);
  });

  test('a member without a Pod keeps no Pod; one without a claim keeps no claim', () => {
    const bare: ClusterObservation = {
      ...look,
      kube: [{ name: 'c-4' }, { name: 'c-3', claim: { terminating: false, dataLost: false } }],
    };
    const after = lookAfterRemoval(bare, { member: 'c-4', id: '104' });
    expect(after.kube[0]).toEqual({ name: 'c-4' });
    const after3 = lookAfterRemoval(bare, { member: 'c-3', id: '103' });
    expect(after3.kube[1]).toEqual({ name: 'c-3', claim: { terminating: true, dataLost: false } });
  });

  test('a look without etcd stays without it', () => {
    const noEtcd: ClusterObservation = { kube: look.kube, versionKnown: true };
    expect(lookAfterRemoval(noEtcd, { member: 'c-4', id: '104' }).etcd).toBeUndefined();
  });
});

describe('takenFromLookAfterRemoval', () => {
  test.each([
    [{ kind: 'RemoveMember', reason: 'ScaleDown' }, true],
    [{ kind: 'RemoveMember', reason: 'DataLost' }, false],
    [{ kind: 'RemoveMember', reason: 'Zombie' }, false],
    [{ kind: 'MoveLeader' }, false],
    [{ kind: 'Wait' }, false],
    [{ kind: 'None' }, false],
    [{ kind: 'AddLearner' }, false],
  ])('after a removal that more follow: %o -> %s', (step, taken) => {
    expect(takenFromLookAfterRemoval(step)).toBe(taken);
    expect(takenFromLookAfterRemoval(step, 'removalThatMoreFollow')).toBe(taken);
  });

  test.each([
    [{ kind: 'None' }, true],
    [{ kind: 'RemoveMember', reason: 'ScaleDown' }, false],
    [{ kind: 'RemoveMember', reason: 'DataLost' }, false],
    [{ kind: 'MoveLeader' }, false],
    [{ kind: 'Wait' }, false],
    [{ kind: 'AddMember' }, false],
    [{ kind: 'DeleteOrphan' }, false],
  ])('after the last removal: %o -> %s', (step, taken) => {
    expect(takenFromLookAfterRemoval(step, 'lastRemoval')).toBe(taken);
  });
});

describe('lookServesChange', () => {
  const spec = { replicas: 3, version: '3.6.16', storage: { size: '1Gi' } };
  const before = { uid: 'u1', generation: 1, spec };
  test.each([
    ['replicas alone', { uid: 'u1', generation: 2, spec: { ...spec, replicas: 5 } }, true],
    [
      'replicas alone, keys in another order',
      { generation: 2, uid: 'u1', spec: { storage: { size: '1Gi' }, version: '3.6.16', replicas: 1 } },
      true,
    ],
    ['the same spec again', { uid: 'u1', generation: 2, spec }, true],
    ['the version', { uid: 'u1', generation: 2, spec: { ...spec, replicas: 5, version: '3.5.35' } }, false],
    ['the storage', { uid: 'u1', generation: 2, spec: { ...spec, storage: { size: '2Gi' } } }, false],
    [
      'a field added',
      { uid: 'u1', generation: 2, spec: { ...spec, replicas: 5, podTemplate: { labels: { a: 'b' } } } },
      false,
    ],
    ['a retry token', { uid: 'u1', generation: 1, spec, retryToken: 'r1' }, false],
    ['a recovery approval', { uid: 'u1', generation: 1, spec, recoveryApproval: 'u1' }, false],
    ['another object', { uid: 'u2', generation: 1, spec: { ...spec, replicas: 5 } }, false],
    ['the deletion', { uid: 'u1', generation: 1, spec, deleted: true }, false],
    ['a pause (replicas 0)', { uid: 'u1', generation: 2, spec: { ...spec, replicas: 0 } }, false],
  ])('%s -> %s', (_what, after, served) => {
    expect(lookServesChange(before as ClusterChange, after as ClusterChange)).toBe(served);
  });

  test('a resume (from replicas 0) is not served either', () => {
    const paused = { uid: 'u1', generation: 1, spec: { ...spec, replicas: 0 } } as ClusterChange;
    expect(lookServesChange(paused, { uid: 'u1', generation: 2, spec } as ClusterChange)).toBe(false);
  });
});
