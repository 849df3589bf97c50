// The quorum-recovery activities against in-memory Kubernetes objects and a fake etcd: what each survivor says, the
// newest snapshot, the Pod replaced only when it is not the one wanted, the sole member's answer, the approval used once.
import type { KubernetesObject } from '@kubernetes/client-node';
import type { EtcdSnapshot } from '../crds/etcd-snapshot';
import { memberClientURL } from '../crds/names';
import type { EtcdAdmin, EtcdMemberStatus } from './etcd-admin';
import type { KubeObjects, ObjectRef } from './kube-objects';
import { FORCE_NEW_CLUSTER_ANNOTATION } from './member-manifests';
import { createQuorumRecoveryActivities, newestBackup } from './quorum-recovery';

const ref = { namespace: 'prod', name: 'main', uid: 'uid-1' };
type Obj = KubernetesObject & { status?: unknown; spec?: unknown };
const key = (kind: string, name: string) => `${kind}/${name}`;

function fakeKube(initial: Obj[]) {
  const objects = new Map(
    initial.map((o) => [key(o.kind ?? '', o.metadata?.name ?? ''), structuredClone(o)]),
  );
  const patches: { ref: ObjectRef; patch: object }[] = [];
  const deletes: { name: string; uid?: string }[] = [];
  const kube = {
    async read<T extends KubernetesObject>(r: ObjectRef) {
      return objects.get(key(r.kind, r.name)) as T | undefined;
    },
    async list<T extends KubernetesObject>(_v: string, kind: string) {
      return [...objects.values()].filter((o) => o.kind === kind) as T[];
    },
    async deleteIfPresent(r: ObjectRef, options: { uid?: string } = {}) {
      deletes.push({ name: r.name, ...(options.uid ? { uid: options.uid } : {}) });
      return objects.delete(key(r.kind, r.name)) ? ('deleted' as const) : ('absent' as const);
    },
    async mergePatch(r: ObjectRef, patch: object) {
      patches.push({ ref: r, patch });
    },
  } as unknown as KubeObjects;
  return { kube, objects, patches, deletes };
}

const status = (endpoint: string, over: Partial<EtcdMemberStatus> = {}): EtcdMemberStatus => ({
  endpoint,
  id: '11',
  leaderId: '0',
  version: '3.6.16',
  raftIndex: '500',
  raftAppliedIndex: '500',
  revision: '321',
  dbSize: 1,
  dbSizeInUse: 1,
  isLearner: false,
  errors: [],
  ...over,
});

const pod = (name: string, forced: boolean): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name,
    namespace: 'prod',
    uid: `pod-${name}`,
    labels: { 'etcd.conductor.dev/cluster': 'main' },
    ...(forced ? { annotations: { [FORCE_NEW_CLUSTER_ANNOTATION]: 'true' } } : {}),
  },
});

const snapshot = (name: string, revision: number, phase = 'Succeeded', cluster = 'main', verified?: string) =>
  ({
    apiVersion: 'etcd.conductor.dev/v1alpha1',
    kind: 'EtcdSnapshot',
    metadata: { name, namespace: 'prod' },
    spec: { clusterRef: { name: cluster } },
    status: {
      phase,
      artifact: {
        uri: `s3://b/${name}.db`,
        size: 1,
        sha256: 'a',
        revision,
        etcdVersion: '3.6.16',
        takenAt: `T${revision}`,
      },
      ...(verified
        ? {
            conditions: [
              { type: 'Verified', status: verified, reason: 'x', message: '', lastTransitionTime: '' },
            ],
          }
        : {}),
    },
  }) as unknown as EtcdSnapshot;

describe('newestBackup', () => {
  test.each([
    ['none at all', [], undefined],
    [
      'the highest revision among succeeded ones',
      [snapshot('a', 5), snapshot('b', 9), snapshot('c', 7)],
      'b',
    ],
    ['a failed snapshot is not a backup', [snapshot('a', 5), snapshot('b', 9, 'Failed')], 'a'],
    [
      "another cluster's snapshot is not this one's",
      [snapshot('a', 5), snapshot('b', 9, 'Succeeded', 'other')],
      'a',
    ],
  ])('%s', (_name, snapshots, want) => {
    expect(newestBackup(snapshots, 'main')?.snapshot).toBe(want);
  });

  test.each([
    [
      'a newer snapshot that failed its check is passed over for a rebuild',
      [snapshot('a', 5, 'Succeeded', 'main', 'True'), snapshot('b', 9, 'Succeeded', 'main', 'False')],
      'a',
    ],
    [
      'a snapshot not checked yet is restorable',
      [snapshot('a', 5, 'Succeeded', 'main', 'True'), snapshot('b', 9)],
      'b',
    ],
  ])('restorable only: %s', (_name, snapshots, want) => {
    expect(newestBackup(snapshots, 'main', true)?.snapshot).toBe(want);
  });

  test('carries its revision, time, URI and Verified status', () => {
    expect(newestBackup([snapshot('a', 5, 'Succeeded', 'main', 'True')], 'main')).toEqual({
      snapshot: 'a',
      revision: 5,
      takenAt: 'T5',
      uri: 's3://b/a.db',
      verified: 'True',
    });
  });
});

describe('the quorum-recovery activities', () => {
  const etcd = (answers: Record<string, EtcdMemberStatus | Error>, members?: string[]) =>
    ({
      async status(endpoint: string) {
        const a = answers[endpoint];
        if (!a || a instanceof Error) throw a ?? new Error('connection refused');
        return a;
      },
      async listMembersWithHeader(endpoints: string[]) {
        const a = answers[endpoints[0] ?? ''];
        if (!a || a instanceof Error || !members) throw new Error('etcdserver: request timed out');
        return {
          clusterId: '77',
          members: members.map((id) => ({ id, name: '', peerURLs: [], clientURLs: [], isLearner: false })),
        };
      },
    }) as unknown as EtcdAdmin;

  test('probeQuorumLoss says what each survivor applied, which did not answer, and the newest snapshot', async () => {
    const url0 = memberClientURL(ref, 'main-0');
    const { kube } = fakeKube([snapshot('a', 5), snapshot('b', 9)] as unknown as Obj[]);
    const acts = createQuorumRecoveryActivities({
      kube,
      etcd: etcd({ [url0]: status(url0), [memberClientURL(ref, 'main-1')]: new Error('deadline exceeded') }),
    });
    const findings = await acts.probeQuorumLoss({ ref, survivors: ['main-0', 'main-1'] });
    expect(findings).toEqual({
      survivors: [
        { name: 'main-0', answered: true, id: '11', revision: '321', raftIndex: '500', isLearner: false },
        { name: 'main-1', answered: false, error: 'deadline exceeded' },
      ],
      backup: expect.objectContaining({ snapshot: 'b', revision: 9 }),
      restorable: expect.objectContaining({ snapshot: 'b', revision: 9 }),
    });
  });

  test('probeQuorumLoss asks a survivor a second time before it counts as silent', async () => {
    let asked = 0;
    const admin = {
      async statusWithoutAuth(endpoint: string) {
        asked += 1;
        if (asked === 1) throw new Error('deadline exceeded');
        return status(endpoint);
      },
    } as unknown as EtcdAdmin;
    const acts = createQuorumRecoveryActivities({ kube: fakeKube([]).kube, etcd: admin });
    const findings = await acts.probeQuorumLoss({ ref, survivors: ['main-0'] });
    expect(findings.survivors).toEqual([
      expect.objectContaining({ name: 'main-0', answered: true, revision: '321' }),
    ]);
    expect(asked).toBe(2);
  });

  test('probeQuorumLoss says the snapshots could not be listed, rather than that there are none', async () => {
    const url0 = memberClientURL(ref, 'main-0');
    const { kube } = fakeKube([]);
    const failing = {
      ...kube,
      list: () => Promise.reject(new Error('the server is currently unable to handle the request')),
    };
    const acts = createQuorumRecoveryActivities({ kube: failing, etcd: etcd({ [url0]: status(url0) }) });
    const findings = await acts.probeQuorumLoss({ ref, survivors: ['main-0'] });
    expect(findings).toEqual({
      survivors: [expect.objectContaining({ name: 'main-0', answered: true })],
      snapshotsUnread: 'the server is currently unable to handle the request',
    });
  });

  test('probeQuorumLoss asks without auth where it can (Authenticate needs the quorum that is lost)', async () => {
    const url0 = memberClientURL(ref, 'main-0');
    const asked: string[] = [];
    const admin = {
      async status() {
        asked.push('status');
        throw new Error('etcdserver: request timed out (Authenticate)');
      },
      async statusWithoutAuth(endpoint: string) {
        asked.push('statusWithoutAuth');
        return status(endpoint);
      },
    } as unknown as EtcdAdmin;
    const acts = createQuorumRecoveryActivities({ kube: fakeKube([]).kube, etcd: admin });
    const findings = await acts.probeQuorumLoss({ ref, survivors: ['main-0'] });
    expect(findings.survivors).toEqual([
      expect.objectContaining({ name: 'main-0', answered: true, revision: '321' }),
    ]);
    expect(asked).toEqual(['statusWithoutAuth']);
    expect(url0).toContain('main-0');
  });

  test.each([
    ['a plain Pod when forced is wanted is deleted (by its uid)', false, 'forced', 'deleted'],
    ['a forced Pod when forced is wanted is done', true, 'forced', 'done'],
    ['a forced Pod when plain is wanted is deleted', true, 'plain', 'deleted'],
    ['a plain Pod when plain is wanted is done', false, 'plain', 'done'],
  ] as const)('replaceMemberPod: %s', async (_name, forced, want, result) => {
    const { kube, deletes } = fakeKube([pod('main-0', forced)]);
    const acts = createQuorumRecoveryActivities({ kube, etcd: etcd({}) });
    expect(await acts.replaceMemberPod({ ref, member: 'main-0', want })).toBe(result);
    expect(deletes).toEqual(result === 'deleted' ? [{ name: 'main-0', uid: 'pod-main-0' }] : []);
  });

  test('replaceMemberPod: no Pod left is absent, so the next can be created', async () => {
    const acts = createQuorumRecoveryActivities({ kube: fakeKube([]).kube, etcd: etcd({}) });
    expect(await acts.replaceMemberPod({ ref, member: 'main-0', want: 'forced' })).toBe('absent');
  });

  test('forcedMembers names the Pods started with --force-new-cluster', async () => {
    const { kube } = fakeKube([pod('main-0', true), pod('main-1', false)]);
    const acts = createQuorumRecoveryActivities({ kube, etcd: etcd({}) });
    expect(await acts.forcedMembers({ ref })).toEqual(['main-0']);
  });

  test('awaitSoleMember returns the member list and revision once it answers, and why not within its time', async () => {
    const url0 = memberClientURL(ref, 'main-0');
    const answering = createQuorumRecoveryActivities({
      kube: fakeKube([]).kube,
      etcd: etcd({ [url0]: status(url0) }, ['11']),
    });
    expect(await answering.awaitSoleMember({ ref, member: 'main-0', maxMs: 0 })).toEqual({
      members: ['11'],
      clusterId: '77',
      revision: '321',
    });
    const silent = createQuorumRecoveryActivities({ kube: fakeKube([]).kube, etcd: etcd({}) });
    expect(await silent.awaitSoleMember({ ref, member: 'main-0', maxMs: 0 })).toEqual({
      waiting: 'etcdserver: request timed out',
    });
  });

  test.each([
    ['removes the approval from this object', { 'etcd.conductor.dev/approve-recovery': 'uid-1' }, 'uid-1', 1],
    ['leaves an object without it alone', { team: 'db' }, 'uid-1', 0],
    [
      'leaves an object of another uid (created again under the name) alone',
      { 'etcd.conductor.dev/approve-recovery': 'uid-2' },
      'uid-2',
      0,
    ],
  ])('removeRecoveryApproval %s', async (_name, annotations, uid, patched) => {
    const { kube, patches } = fakeKube([
      {
        apiVersion: 'etcd.conductor.dev/v1alpha1',
        kind: 'EtcdCluster',
        metadata: { name: 'main', namespace: 'prod', uid, annotations },
      },
    ]);
    const acts = createQuorumRecoveryActivities({ kube, etcd: etcd({}) });
    expect(await acts.removeRecoveryApproval({ ref })).toBe(patched ? 'removed' : 'absent');
    expect(patches).toHaveLength(patched);
    if (patched) {
      expect(patches[0]?.patch).toEqual({
        metadata: { annotations: { 'etcd.conductor.dev/approve-recovery': null } },
      });
    }
  });
});
