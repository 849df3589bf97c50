import type { KubernetesObject } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { FailureTypes } from '../crds/conditions';
import type { EtcdClusterSpec, EtcdClusterStatus } from '../crds/etcd-cluster';
import { Labels } from '../crds/labels';
import type { ActivityDeps } from './cluster-activities';
import { createActivities } from './cluster-activities';
import type { EtcdAdmin, EtcdMember, EtcdMemberStatus } from './etcd-admin';
import type { EventRecorder } from './event-recorder';
import type { KubeObjects, ObjectRef } from './kube-objects';
import { memberClientURL, memberPeerURL } from '../crds/names';

const ref = { namespace: 'prod', name: 'main', uid: 'uid-1' };
const spec: EtcdClusterSpec = {
  replicas: 3,
  version: '3.6.16',
  storage: { size: '1Gi', medium: '' },
  progressDeadlineSeconds: 600,
};

type Obj = KubernetesObject & { status?: unknown; spec?: unknown };
const key = (kind: string, namespace: string, name: string) => `${kind}/${namespace}/${name}`;

/** Kubernetes objects in a map; label selectors of the form `k=v[,k=v]`. */
function fakeKube(initial: Obj[] = []) {
  const objects = new Map<string, Obj>();
  const add = (o: Obj) =>
    objects.set(key(o.kind ?? '', o.metadata?.namespace ?? '', o.metadata?.name ?? ''), structuredClone(o));
  initial.forEach(add);
  const patches: { ref: ObjectRef; patch: object; subresource?: 'status' }[] = [];
  const kube: KubeObjects = {
    async createIfAbsent(obj) {
      const k = key(obj.kind ?? '', obj.metadata?.namespace ?? '', obj.metadata?.name ?? '');
      if (objects.has(k)) return 'exists';
      add(obj);
      return 'created';
    },
    async deleteIfPresent(r) {
      return objects.delete(key(r.kind, r.namespace, r.name)) ? 'deleted' : 'absent';
    },
    async read<T extends KubernetesObject>(r: ObjectRef) {
      return objects.get(key(r.kind, r.namespace, r.name)) as T | undefined;
    },
    async list<T extends KubernetesObject>(
      _apiVersion: string,
      kind: string,
      namespace: string,
      selector: string,
    ) {
      const wanted = selector.split(',').map((kv) => kv.split('='));
      return [...objects.values()].filter(
        (o) =>
          o.kind === kind &&
          o.metadata?.namespace === namespace &&
          wanted.every(([k, v]) => o.metadata?.labels?.[k ?? ''] === v),
      ) as T[];
    },
    async mergePatch(r, patch, subresource) {
      patches.push({ ref: r, patch, ...(subresource ? { subresource } : {}) });
    },
  };
  return { kube, objects, patches };
}

const peer = (name: string) => memberPeerURL(ref, name);
const client = (name: string) => memberClientURL(ref, name);

function etcdMember(id: string, name: string, more: Partial<EtcdMember> = {}): EtcdMember {
  return { id, name, peerURLs: [peer(name)], clientURLs: [client(name)], isLearner: false, ...more };
}

/** etcd with a fixed member list; `down` members fail their status call. */
function fakeEtcd(
  members: EtcdMember[],
  options: { down?: string[]; leaderId?: string; alarms?: { memberId: string; alarm: string }[] } = {},
) {
  const calls: { fn: string; endpoints: string[]; args: unknown[] }[] = [];
  const statusOf = (endpoint: string): EtcdMemberStatus => {
    const m = members.find((x) => x.clientURLs.includes(endpoint));
    if (!m || options.down?.includes(m.peerURLs[0] ?? ''))
      throw new Error(`dial ${endpoint}: connection refused`);
    return {
      endpoint,
      id: m.id,
      leaderId: options.leaderId ?? '0',
      version: '3.6.16',
      raftIndex: '42',
      raftAppliedIndex: '42',
      revision: '40',
      dbSize: 1,
      dbSizeInUse: 1,
      isLearner: m.isLearner,
      errors: [],
    };
  };
  const etcd: EtcdAdmin = {
    async listMembers(endpoints) {
      calls.push({ fn: 'listMembers', endpoints, args: [] });
      return structuredClone(members);
    },
    async listMembersWithHeader(endpoints, _timeoutMs, dial) {
      calls.push({ fn: 'listMembersWithHeader', endpoints, args: dial ? [dial.url] : [] });
      return { clusterId: '777', members: structuredClone(members) };
    },
    async addLearner(endpoints, peerURL) {
      calls.push({ fn: 'addLearner', endpoints, args: [peerURL] });
      const m = etcdMember('99', '', { peerURLs: [peerURL], clientURLs: [], isLearner: true });
      return { member: m, members: [...members, m] };
    },
    async promote(endpoints, id) {
      calls.push({ fn: 'promote', endpoints, args: [id] });
      return 'promoted';
    },
    async remove(endpoints, id) {
      calls.push({ fn: 'remove', endpoints, args: [id] });
      return 'removed';
    },
    async moveLeader(endpoint, id) {
      calls.push({ fn: 'moveLeader', endpoints: [endpoint], args: [id] });
      return 'moved';
    },
    async status(endpoint, _timeoutMs, dial) {
      calls.push({ fn: 'status', endpoints: [endpoint], args: dial ? [dial.url] : [] });
      return statusOf(endpoint);
    },
    async alarms(endpoints, _timeoutMs, dial) {
      calls.push({ fn: 'alarms', endpoints, args: dial ? [dial.url] : [] });
      return structuredClone(options.alarms ?? []);
    },
    async disarmNoSpace(endpoints, memberId) {
      calls.push({ fn: 'disarmNoSpace', endpoints, args: [memberId] });
    },
    async compactToCurrent(endpoints) {
      calls.push({ fn: 'compactToCurrent', endpoints, args: [] });
      return { revision: '100', alreadyCompacted: false };
    },
    async defragment(endpoint, timeoutMs) {
      calls.push({ fn: 'defragment', endpoints: [endpoint], args: [timeoutMs] });
    },
    async hashKV(endpoint, revision) {
      calls.push({ fn: 'hashKV', endpoints: [endpoint], args: [revision] });
      return { hash: 1, compactRevision: 0 };
    },
  };
  return { etcd, calls };
}

const noEvents: EventRecorder = { record: async () => undefined };

function podObject(
  name: string,
  role: 'voter' | 'learner',
  more: { ready?: boolean; deleting?: boolean; containerStatuses?: unknown[]; podIP?: string } = {},
): Obj {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: ref.namespace,
      uid: `pod-${name}`,
      labels: { [Labels.cluster]: ref.name, [Labels.member]: name, [Labels.role]: role },
      ...(more.deleting ? { deletionTimestamp: new Date('2026-01-01T00:00:00Z') } : {}),
    },
    status: {
      phase: 'Running',
      podIP: more.podIP ?? `10.0.0.${Number(name.split('-').pop() ?? 0) + 10}`,
      conditions: [{ type: 'Ready', status: more.ready === false ? 'False' : 'True' }],
      containerStatuses: more.containerStatuses ?? [{ restartCount: 1 }],
    },
  } as Obj;
}

function claimObject(name: string, dataLost = false, annotations: Record<string, string> = {}): Obj {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: `data-${name}`,
      namespace: ref.namespace,
      labels: { [Labels.cluster]: ref.name, [Labels.member]: name },
      annotations: { ...(dataLost ? { 'etcd.conductor.dev/data-lost': 'true' } : {}), ...annotations },
    },
  };
}

function clusterObject(uid: string): Obj {
  return {
    apiVersion: 'etcd.conductor.dev/v1alpha1',
    kind: 'EtcdCluster',
    metadata: { name: ref.name, namespace: ref.namespace, uid },
  };
}

function activitiesWith(
  kube: KubeObjects,
  etcd: EtcdAdmin,
  imageFor: ActivityDeps['imageFor'] = (v) => `etcd:v${v}`,
  // No learner passes its readiness checks unless a test says so (never a real HTTP call).
  learnerReadiness: ActivityDeps['learnerReadiness'] = async () => false,
) {
  return createActivities({ kube, etcd, events: noEvents, imageFor, learnerReadiness });
}

describe('createMemberPod', () => {
  it('in join mode refuses, non-retryably with MemberMismatch, a member etcd does not list', async () => {
    const { kube, objects } = fakeKube([podObject('main-0', 'voter')]);
    const { etcd } = fakeEtcd([etcdMember('1', 'main-0')]);
    const err = await activitiesWith(kube, etcd)
      .createMemberPod({ ref, spec, member: 'main-1', mode: 'join' })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({ type: FailureTypes.MemberMismatch, nonRetryable: true });
    expect(objects.has(key('Pod', 'prod', 'main-1'))).toBe(false);
  });

  it("in join mode builds --initial-cluster from etcd's list, naming a not-yet-started learner by its peer URL", async () => {
    const { kube, objects } = fakeKube([podObject('main-0', 'voter'), podObject('main-1', 'voter')]);
    const { etcd } = fakeEtcd([
      etcdMember('2', 'main-1'),
      etcdMember('1', 'main-0'),
      etcdMember('3', '', { peerURLs: [peer('main-2')], clientURLs: [], isLearner: true }),
    ]);
    await expect(
      activitiesWith(kube, etcd).createMemberPod({ ref, spec, member: 'main-2', mode: 'join' }),
    ).resolves.toBe('created');
    const pod = objects.get(key('Pod', 'prod', 'main-2')) as unknown as {
      metadata: { labels: Record<string, string> };
      spec: { containers: { args: string[]; image: string }[] };
    };
    const args = pod.spec.containers[0]?.args ?? [];
    expect(args).toContain(
      `--initial-cluster=main-0=${peer('main-0')},main-1=${peer('main-1')},main-2=${peer('main-2')}`,
    );
    expect(args).toContain('--initial-cluster-state=existing');
    expect(pod.metadata.labels[Labels.role]).toBe('learner');
    expect(pod.spec.containers[0]?.image).toBe('etcd:v3.6.16');
  });

  it('in seed mode starts a cluster of one without asking etcd', async () => {
    const { kube, objects } = fakeKube();
    const { etcd, calls } = fakeEtcd([]);
    await activitiesWith(kube, etcd).createMemberPod({ ref, spec, member: 'main-0', mode: 'seed' });
    const args = (
      objects.get(key('Pod', 'prod', 'main-0')) as unknown as { spec: { containers: { args: string[] }[] } }
    ).spec.containers[0]?.args;
    expect(args).toEqual(
      expect.arrayContaining([`--initial-cluster=main-0=${peer('main-0')}`, '--initial-cluster-state=new']),
    );
    expect(calls).toEqual([]);
  });

  it("in seed mode with initial members starts one of a brand-new cluster's members with --initial-cluster naming all of them", async () => {
    const { kube, objects } = fakeKube();
    const { etcd, calls } = fakeEtcd([]);
    const initialMembers = ['main-0', 'main-1', 'main-2'];
    const acts = activitiesWith(kube, etcd);
    await acts.createMemberClaim({ ref, spec, member: 'main-1', initialMembers });
    await acts.createMemberPod({ ref, spec, member: 'main-1', mode: 'seed', initialMembers });
    const pod = objects.get(key('Pod', 'prod', 'main-1')) as unknown as {
      metadata: { labels: Record<string, string>; annotations: Record<string, string> };
      spec: { containers: { args: string[] }[] };
    };
    expect(pod.spec.containers[0]?.args).toEqual(
      expect.arrayContaining([
        `--initial-cluster=main-0=${peer('main-0')},main-1=${peer('main-1')},main-2=${peer('main-2')}`,
        '--initial-cluster-state=new',
      ]),
    );
    expect(pod.metadata.labels[Labels.role]).toBe('voter');
    expect(pod.metadata.annotations['etcd.conductor.dev/initial-members']).toBe('main-0,main-1,main-2');
    const claim = objects.get(key('PersistentVolumeClaim', 'prod', 'data-main-1')) as unknown as {
      metadata: { annotations: Record<string, string> };
    };
    expect(claim.metadata.annotations['etcd.conductor.dev/initial-members']).toBe('main-0,main-1,main-2');
    // Nothing is asked of etcd: no member answers before a quorum of them runs.
    expect(calls).toEqual([]);
    // The membership read back from both objects is the one they were made with.
    const observation = await acts.observeCluster({ ref, version: '3.6.16' });
    expect(observation.kube.find((k) => k.name === 'main-1')?.initialMembers).toEqual(initialMembers);
  });

  it('refuses, non-retryably, initial members that do not name the member itself', async () => {
    const { kube, objects } = fakeKube();
    const { etcd } = fakeEtcd([]);
    await expect(
      activitiesWith(kube, etcd).createMemberPod({
        ref,
        spec,
        member: 'main-3',
        mode: 'seed',
        initialMembers: ['main-0', 'main-1', 'main-2'],
      }),
    ).rejects.toMatchObject({ type: FailureTypes.MemberMismatch, nonRetryable: true });
    expect(objects.has(key('Pod', 'prod', 'main-3'))).toBe(false);
  });

  it('restarts a member on its kept data with its own name alone when no member answers (resume after pause)', async () => {
    const { kube, objects } = fakeKube();
    const { etcd } = fakeEtcd([]);
    etcd.listMembers = async () => {
      throw new Error('no etcd endpoints to talk to');
    };
    await activitiesWith(kube, etcd).createMemberPod({ ref, spec, member: 'main-0', mode: 'restart' });
    const args = (
      objects.get(key('Pod', 'prod', 'main-0')) as unknown as { spec: { containers: { args: string[] }[] } }
    ).spec.containers[0]?.args;
    expect(args).toEqual(
      expect.arrayContaining([
        `--initial-cluster=main-0=${peer('main-0')}`,
        '--initial-cluster-state=existing',
      ]),
    );
  });

  it('refuses to join without a member list: a new member needs to know its peers', async () => {
    const { kube } = fakeKube();
    const { etcd } = fakeEtcd([]);
    etcd.listMembers = async () => {
      throw new Error('etcdserver: unhealthy cluster');
    };
    await expect(
      activitiesWith(kube, etcd).createMemberPod({ ref, spec, member: 'main-1', mode: 'join' }),
    ).rejects.toThrow('unhealthy cluster');
  });

  it('is idempotent: a Pod that exists already counts as done', async () => {
    const { kube } = fakeKube([podObject('main-0', 'voter')]);
    const { etcd } = fakeEtcd([etcdMember('1', 'main-0')]);
    await expect(
      activitiesWith(kube, etcd).createMemberPod({ ref, spec, member: 'main-0', mode: 'restart' }),
    ).resolves.toBe('exists');
  });

  it('refuses, non-retryably with UnknownVersion, a version with no image', async () => {
    const { kube } = fakeKube();
    const { etcd } = fakeEtcd([]);
    await expect(
      activitiesWith(kube, etcd, () => undefined).createMemberPod({
        ref,
        spec,
        member: 'main-0',
        mode: 'seed',
      }),
    ).rejects.toMatchObject({ type: FailureTypes.UnknownVersion, nonRetryable: true });
  });
});

describe('observeCluster', () => {
  it("derives a learner's name from its peer URL while etcd reports an empty name, and marks members that do not answer", async () => {
    const { kube } = fakeKube([
      podObject('main-0', 'voter'),
      podObject('main-1', 'voter', { ready: false }),
      podObject('main-2', 'learner', { ready: false }),
      claimObject('main-0'),
      claimObject('main-1', true),
      claimObject('main-2'),
    ]);
    const { etcd } = fakeEtcd(
      [
        etcdMember('1', 'main-0'),
        etcdMember('2', 'main-1'),
        etcdMember('3', '', { peerURLs: [peer('main-2')], clientURLs: [client('main-2')], isLearner: true }),
      ],
      { down: [peer('main-1')], leaderId: '1' },
    );
    const observation = await activitiesWith(kube, etcd).observeCluster({ ref, version: '3.6.16' });

    expect(observation.versionKnown).toBe(true);
    expect(observation.etcd).toEqual({
      clusterId: '777',
      leaderId: '1',
      members: [
        {
          id: '1',
          name: 'main-0',
          isLearner: false,
          started: true,
          reachable: true,
          raftIndex: '42',
          revision: '40',
          version: '3.6.16',
          dbSize: 1,
          dbSizeInUse: 1,
        },
        { id: '2', name: 'main-1', isLearner: false, started: true, reachable: false },
        {
          id: '3',
          name: 'main-2',
          isLearner: true,
          started: false,
          reachable: true,
          raftIndex: '42',
          revision: '40',
          version: '3.6.16',
          dbSize: 1,
          dbSizeInUse: 1,
        },
      ],
      alarms: [],
    });
    expect(observation.kube.map((k) => [k.name, k.pod?.ready, k.claim?.dataLost])).toEqual([
      ['main-0', true, false],
      ['main-1', false, true],
      ['main-2', false, false],
    ]);
    expect(observation.kube[0]?.pod).toMatchObject({
      phase: 'Running',
      terminating: false,
      uid: 'pod-main-0',
      restartCount: 1,
    });
  });

  it("asks each member at its Pod's address, and never a member whose Pod has no address yet (its name does not exist)", async () => {
    const pending = podObject('main-2', 'learner', { ready: false });
    delete (pending as { status?: { podIP?: string } }).status?.podIP;
    const { kube } = fakeKube([podObject('main-0', 'voter'), podObject('main-1', 'voter'), pending]);
    const { etcd, calls } = fakeEtcd(
      [
        etcdMember('1', 'main-0'),
        etcdMember('2', 'main-1'),
        etcdMember('3', '', { peerURLs: [peer('main-2')], clientURLs: [client('main-2')], isLearner: true }),
      ],
      { leaderId: '1' },
    );
    const observation = await activitiesWith(kube, etcd).observeCluster({ ref, version: '3.6.16' });
    expect(observation.etcd?.members.map((m) => [m.name, m.reachable])).toEqual([
      ['main-0', true],
      ['main-1', true],
      ['main-2', false],
    ]);
    expect(calls.flatMap((c) => c.endpoints)).not.toContain(client('main-2'));
    expect(calls.filter((c) => c.fn === 'status').map((c) => [c.endpoints[0], c.args[0]])).toEqual([
      [client('main-0'), 'http://10.0.0.10:2379'],
      [client('main-1'), 'http://10.0.0.11:2379'],
    ]);
    expect(
      calls
        .filter((c) => c.fn !== 'status')
        .every((c) => /^http:\/\/10\.0\.0\.1[01]:2379$/.test(String(c.args[0]))),
    ).toBe(true);
  });

  it("counts a member unreachable when another member answers at its Pod's address", async () => {
    const { kube } = fakeKube([
      podObject('main-0', 'voter'),
      podObject('main-1', 'voter', { podIP: '10.0.0.10' }),
    ]);
    const { etcd } = fakeEtcd([etcdMember('1', 'main-0'), etcdMember('2', 'main-1')], { leaderId: '1' });
    // The address main-1's Pod had a moment ago now serves main-0: its answer carries main-0's id.
    const status = etcd.status.bind(etcd);
    etcd.status = async (endpoint, timeoutMs, dial) =>
      dial?.url === 'http://10.0.0.10:2379'
        ? status(client('main-0'), timeoutMs)
        : status(endpoint, timeoutMs);
    const observation = await activitiesWith(kube, etcd).observeCluster({ ref, version: '3.6.16' });
    expect(observation.etcd?.members.map((m) => [m.name, m.reachable])).toEqual([
      ['main-0', true],
      ['main-1', false],
    ]);
  });

  it('reports no etcd view when no member answers the member list, and never asks a terminating Pod', async () => {
    const { kube } = fakeKube([podObject('main-0', 'voter', { deleting: true }), claimObject('main-0')]);
    const { etcd, calls } = fakeEtcd([etcdMember('1', 'main-0')]);
    const observation = await activitiesWith(kube, etcd, () => undefined).observeCluster({
      ref,
      version: '9.9.9',
    });
    expect(observation.etcd).toBeUndefined();
    expect(observation.versionKnown).toBe(false);
    expect(observation.kube).toEqual([
      {
        name: 'main-0',
        pod: expect.objectContaining({ terminating: true }),
        claim: { terminating: false, dataLost: false },
      },
    ]);
    expect(calls).toEqual([]);
  });

  it.each([
    ['one unanswered round, then an answer', 1, true, 2],
    ['two unanswered rounds', 2, false, 2],
    ['every member refusing the TLS handshake (said at once, never asked again)', 9, false, 1],
  ])(
    'confirms a member list no member answered, while a member Pod is ready, by asking once more a second later: %s',
    async (_what, failures, answered, rounds) => {
      const { kube } = fakeKube([podObject('main-0', 'voter'), claimObject('main-0')]);
      const { etcd, calls } = fakeEtcd([etcdMember('1', 'main-0')], { leaderId: '1' });
      const list = etcd.listMembersWithHeader.bind(etcd);
      let failed = 0;
      etcd.listMembersWithHeader = async (endpoints, timeoutMs) => {
        if (failed++ < failures)
          throw new Error(
            failures === 9 ? 'SSL alert certificate unknown' : 'context deadline exceeded: no leader',
          );
        return list(endpoints, timeoutMs);
      };
      const observation = await activitiesWith(kube, etcd).observeCluster({ ref, version: '3.6.16' });
      expect(observation.etcd !== undefined).toBe(answered);
      expect(calls.filter((c) => c.fn === 'listMembersWithHeader').length).toBe(answered ? 1 : 0);
      expect(failed).toBe(rounds);
    },
  );

  it('asks only once when no member Pod is ready (bootstrapping, or members killed)', async () => {
    const { kube } = fakeKube([podObject('main-0', 'voter', { ready: false }), claimObject('main-0')]);
    const { etcd } = fakeEtcd([etcdMember('1', 'main-0')], { leaderId: '1' });
    let asked = 0;
    etcd.listMembersWithHeader = async () => {
      asked++;
      throw new Error('dial tcp: connection refused');
    };
    const observation = await activitiesWith(kube, etcd).observeCluster({ ref, version: '3.6.16' });
    expect(observation.etcd).toBeUndefined();
    expect(asked).toBe(1);
  });

  it('gives a member whose Pod is not Ready a short status deadline; a Ready member and a learner the full one', async () => {
    const { kube } = fakeKube([
      podObject('main-0', 'voter'),
      podObject('main-1', 'voter', { ready: false }),
      podObject('main-2', 'learner', { ready: false }),
    ]);
    const { etcd } = fakeEtcd(
      [etcdMember('1', 'main-0'), etcdMember('2', 'main-1'), etcdMember('3', 'main-2', { isLearner: true })],
      { leaderId: '1' },
    );
    const deadlines = new Map<string, number | undefined>();
    const status = etcd.status.bind(etcd);
    etcd.status = async (endpoint, timeoutMs, dial) => {
      deadlines.set(endpoint, timeoutMs);
      return status(endpoint, timeoutMs, dial);
    };
    await activitiesWith(kube, etcd).observeCluster({ ref, version: '3.6.16' });
    expect(Object.fromEntries(deadlines)).toEqual({
      [client('main-0')]: 1000,
      [client('main-1')]: 300,
      [client('main-2')]: 1000,
    });
  });

  describe('a member list that goes unanswered while members answer that they know no leader', () => {
    /** A member list that answers only when the test says so; `open` counts calls not yet settled. */
    function heldList(etcd: EtcdAdmin) {
      const list = etcd.listMembersWithHeader.bind(etcd);
      const held: { answer: () => void; fail: () => void }[] = [];
      let rounds = 0;
      etcd.listMembersWithHeader = (endpoints, timeoutMs, dial) =>
        new Promise((resolve, reject) => {
          rounds++;
          const entry = {
            answer: () => void list(endpoints, timeoutMs, dial).then(resolve, reject),
            fail: () => reject(new Error('context deadline exceeded')),
          };
          held.push(entry);
        });
      return {
        held,
        rounds: () => rounds,
        release: () => held.splice(0).forEach((h) => h.fail()),
      };
    }
    const members = [etcdMember('1', 'main-0'), etcdMember('2', 'main-1'), etcdMember('3', 'main-2')];

    it('ends the look without waiting out the list when most voter Pods are not Ready (two of three frozen)', async () => {
      const { kube } = fakeKube([
        podObject('main-0', 'voter'),
        podObject('main-1', 'voter', { ready: false }),
        podObject('main-2', 'voter', { ready: false }),
      ]);
      // The survivor answers that it knows no leader; the frozen members answer nothing.
      const { etcd } = fakeEtcd(members, { down: [peer('main-1'), peer('main-2')], leaderId: '0' });
      const list = heldList(etcd);
      const observation = await activitiesWith(kube, etcd).observeCluster({ ref, version: '3.6.16' });
      expect(observation.etcd).toBeUndefined();
      // Every member was asked the list once, and those calls were still unanswered when the look ended.
      expect(list.rounds()).toBe(3);
      expect(list.held).toHaveLength(3);
      list.release();
    });

    it('keeps waiting on the list while a member knows a leader', async () => {
      const { kube } = fakeKube([
        podObject('main-0', 'voter'),
        podObject('main-1', 'voter', { ready: false }),
        podObject('main-2', 'voter', { ready: false }),
      ]);
      const { etcd } = fakeEtcd(members, { down: [peer('main-2')], leaderId: '1' });
      const list = heldList(etcd);
      const look = activitiesWith(kube, etcd).observeCluster({ ref, version: '3.6.16' });
      await new Promise((r) => setTimeout(r, 400));
      list.held[0]?.answer();
      const observation = await look;
      expect(observation.etcd?.members.map((m) => [m.name, m.reachable])).toEqual([
        ['main-0', true],
        ['main-1', true],
        ['main-2', false],
      ]);
      expect(list.rounds()).toBe(3);
      list.release();
    });

    it('asks once more, and waits that round out, while most voter Pods are Ready (a leader restarting)', async () => {
      const { kube } = fakeKube([
        podObject('main-0', 'voter'),
        podObject('main-1', 'voter'),
        podObject('main-2', 'voter', { ready: false }),
      ]);
      const { etcd } = fakeEtcd(members, { down: [peer('main-2')], leaderId: '0' });
      const list = heldList(etcd);
      const look = activitiesWith(kube, etcd).observeCluster({ ref, version: '3.6.16' });
      // The first round is cut short; the second is asked a second later and answered 400 ms into it, though
      // every member that answers its status still knows no leader.
      while (list.rounds() < 6) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 400));
      list.held[3]?.answer();
      const observation = await look;
      expect(observation.etcd?.members.map((m) => m.name)).toEqual(['main-0', 'main-1', 'main-2']);
      list.release();
    });

    it('ends the first round too once the kubelet finds most voter Pods not Ready, before a frozen member times out', async () => {
      const { kube, objects } = fakeKube([
        podObject('main-0', 'voter'),
        podObject('main-1', 'voter'),
        podObject('main-2', 'voter', { ready: false }),
      ]);
      const { etcd } = fakeEtcd(members, { down: [peer('main-2')], leaderId: '0' });
      const list = heldList(etcd);
      // main-1 is frozen: its status call runs out its deadline (1 s while its Pod is Ready).
      const status = etcd.status.bind(etcd);
      let frozenTimedOut = false;
      etcd.status = async (endpoint, timeoutMs, dial) => {
        if (endpoint !== client('main-1')) return status(endpoint, timeoutMs, dial);
        await new Promise((r) => setTimeout(r, timeoutMs));
        // The call asked while its Pod was Ready (1 s deadline); later calls have the short one.
        if (timeoutMs === 1000) frozenTimedOut = true;
        throw new Error('context deadline exceeded');
      };
      const look = activitiesWith(kube, etcd).observeCluster({ ref, version: '3.6.16' });
      await new Promise((r) => setTimeout(r, 250));
      const pod = objects.get('Pod/prod/main-1') as {
        status: { conditions: { type: string; status: string }[] };
      };
      pod.status.conditions = [{ type: 'Ready', status: 'False' }];
      const observation = await look;
      expect(observation.etcd).toBeUndefined();
      // Ended on the kubelet's word and the survivor's, not on the frozen member's first deadline; no second round.
      expect(frozenTimedOut).toBe(false);
      expect(list.rounds()).toBe(3);
      list.release();
    });

    it('asks no second round after a look the kubelet ended during the pause before it', async () => {
      const { kube, objects } = fakeKube([
        podObject('main-0', 'voter'),
        podObject('main-1', 'voter'),
        podObject('main-2', 'voter', { ready: false }),
      ]);
      const { etcd } = fakeEtcd(members, { down: [peer('main-1'), peer('main-2')], leaderId: '0' });
      const list = heldList(etcd);
      const look = activitiesWith(kube, etcd).observeCluster({ ref, version: '3.6.16' });
      await new Promise((r) => setTimeout(r, 400));
      const pod = objects.get('Pod/prod/main-1') as {
        status: { conditions: { type: string; status: string }[] };
      };
      pod.status.conditions = [{ type: 'Ready', status: 'False' }];
      expect((await look).etcd).toBeUndefined();
      // Past the pause's end (1 s after the first round), no second round went out.
      await new Promise((r) => setTimeout(r, 1000));
      expect(list.rounds()).toBe(3);
      list.release();
    });

    it('ends the confirming round once the kubelet finds most voter Pods not Ready and no member knows a leader', async () => {
      const { kube, objects } = fakeKube([
        podObject('main-0', 'voter'),
        podObject('main-1', 'voter'),
        podObject('main-2', 'voter', { ready: false }),
      ]);
      // main-1 is frozen but its Pod is still Ready when the look starts: a confirmation is asked.
      const { etcd } = fakeEtcd(members, { down: [peer('main-1'), peer('main-2')], leaderId: '0' });
      const list = heldList(etcd);
      const deadlines: [string, number | undefined][] = [];
      const status = etcd.status.bind(etcd);
      etcd.status = async (endpoint, timeoutMs, dial) => {
        deadlines.push([endpoint, timeoutMs]);
        return status(endpoint, timeoutMs, dial);
      };
      const look = activitiesWith(kube, etcd).observeCluster({ ref, version: '3.6.16' });
      while (list.rounds() < 6) await new Promise((r) => setTimeout(r, 50));
      // The kubelet marks main-1 not Ready while the confirming round waits on its list.
      const pod = objects.get('Pod/prod/main-1') as {
        status: { conditions: { type: string; status: string }[] };
      };
      pod.status.conditions = [{ type: 'Ready', status: 'False' }];
      const observation = await look;
      expect(observation.etcd).toBeUndefined();
      expect(list.held).toHaveLength(6);
      // Asked at first with a Ready Pod's deadline; once its Pod is not Ready, with the short one.
      const main1 = deadlines.filter(([endpoint]) => endpoint === client('main-1')).map(([, ms]) => ms);
      expect(main1[0]).toBe(1000);
      expect(main1[main1.length - 1]).toBe(300);
      list.release();
    });
  });

  it("judges a claim's data lost when the member's etcd last exited saying its raft log was lost", async () => {
    const panic =
      'panic: tocommit(13) is out of range [lastIndex(0)]. Was the raft log corrupted, truncated, or lost?';
    const { kube } = fakeKube([
      // The data-losing crash is the etcd container's, found by name even when another container is first.
      podObject('main-0', 'voter', {
        ready: false,
        containerStatuses: [
          { name: 'sidecar', restartCount: 0 },
          { name: 'etcd', restartCount: 4, lastState: { terminated: { message: panic } } },
        ],
      }),
      // Terminated right now (not yet restarted) counts the same.
      podObject('main-1', 'voter', {
        ready: false,
        containerStatuses: [{ name: 'etcd', restartCount: 0, state: { terminated: { message: panic } } }],
      }),
      // Another container saying it does not make etcd's data lost.
      podObject('main-2', 'voter', {
        containerStatuses: [
          { name: 'etcd', restartCount: 2, lastState: { terminated: { message: 'unknown flag' } } },
          { name: 'sidecar', restartCount: 1, lastState: { terminated: { message: panic } } },
        ],
      }),
      claimObject('main-0'),
      claimObject('main-1'),
      claimObject('main-2'),
    ]);
    const { etcd } = fakeEtcd(
      [etcdMember('1', 'main-0'), etcdMember('2', 'main-1'), etcdMember('3', 'main-2')],
      {
        leaderId: '3',
      },
    );
    const observation = await activitiesWith(kube, etcd).observeCluster({ ref, version: '3.6.16' });
    expect(observation.kube.map((k) => [k.name, k.claim?.dataLost, k.pod?.restartCount])).toEqual([
      ['main-0', true, 4],
      ['main-1', true, 0],
      ['main-2', false, 2],
    ]);
  });
});

describe('awaitAnswerChange', () => {
  it('returns changed as soon as a member that did not answer answers', async () => {
    const { kube } = fakeKube([
      podObject('main-0', 'voter'),
      podObject('main-1', 'learner', { ready: false }),
    ]);
    const down = [peer('main-1')];
    const { etcd } = fakeEtcd([etcdMember('1', 'main-0'), etcdMember('2', 'main-1', { isLearner: true })], {
      down,
      leaderId: '1',
    });
    const status = etcd.status.bind(etcd);
    let asked = 0;
    etcd.status = async (endpoint, timeoutMs) => {
      // main-1 answers from its second status call on: the first poll sees it down, the second up.
      if (endpoint === client('main-1') && ++asked === 2) down.pop();
      return status(endpoint, timeoutMs);
    };
    const acts = activitiesWith(kube, etcd);
    await expect(
      acts.awaitAnswerChange({ ref, version: '3.6.16', answering: ['main-0'], maxMs: 10_000 }),
    ).resolves.toBe('changed');
    expect(asked).toBe(2);
  });

  it('returns unchanged after maxMs when nothing comes up', async () => {
    const { kube } = fakeKube([podObject('main-0', 'voter'), podObject('main-1', 'voter', { ready: false })]);
    const { etcd } = fakeEtcd([etcdMember('1', 'main-0'), etcdMember('2', 'main-1')], {
      down: [peer('main-1')],
      leaderId: '1',
    });
    await expect(
      activitiesWith(kube, etcd).awaitAnswerChange({
        ref,
        version: '3.6.16',
        answering: ['main-0'],
        maxMs: 300,
      }),
    ).resolves.toBe('unchanged');
  });

  it('returns changed at once when the answering members already differ from what the caller saw', async () => {
    const { kube } = fakeKube([podObject('main-0', 'voter')]);
    const { etcd, calls } = fakeEtcd([etcdMember('1', 'main-0')], { leaderId: '1' });
    await expect(
      activitiesWith(kube, etcd).awaitAnswerChange({ ref, version: '3.6.16', answering: [], maxMs: 10_000 }),
    ).resolves.toBe('changed');
    expect(calls.filter((c) => c.fn === 'listMembersWithHeader')).toHaveLength(1);
  });
});

describe('a learner waiting on its own publish', () => {
  // main-0 votes; main-1 is a started learner that does not answer its status; main-2 a learner not started yet.
  const world = (claimAnnotations: Record<string, string> = {}) => {
    const { kube, patches } = fakeKube([
      podObject('main-0', 'voter'),
      podObject('main-1', 'learner', { ready: false }),
      podObject('main-2', 'learner', { ready: false }),
      claimObject('main-0'),
      claimObject('main-1', false, claimAnnotations),
      claimObject('main-2'),
    ]);
    const { etcd } = fakeEtcd(
      [
        etcdMember('1', 'main-0'),
        etcdMember('2', 'main-1', { isLearner: true }),
        etcdMember('3', '', { peerURLs: [peer('main-2')], clientURLs: [client('main-2')], isLearner: true }),
      ],
      { down: [peer('main-1'), peer('main-2')], leaderId: '1' },
    );
    return { kube, patches, etcd };
  };
  const readyAt = (ips: string[]) => {
    const asked: string[] = [];
    const readiness = async (ip: string) => {
      asked.push(ip);
      return ips.includes(ip);
    };
    return { asked, readiness };
  };

  it('is said of a started learner that passes its readiness checks and does not answer; only started learners are asked', async () => {
    const { kube, etcd } = world({ 'etcd.conductor.dev/restarted-learner': '7' });
    const { asked, readiness } = readyAt(['10.0.0.11', '10.0.0.12']);
    const observation = await activitiesWith(kube, etcd, undefined, readiness).observeCluster({
      ref,
      version: '3.6.16',
    });
    const byName = new Map(observation.etcd?.members.map((m) => [m.name, m]));
    expect(byName.get('main-1')).toEqual({
      id: '2',
      name: 'main-1',
      isLearner: true,
      started: true,
      reachable: false,
      awaitingOwnPublish: true,
    });
    // Not started (no name in etcd's list): still joining, whatever its readiness says; never asked.
    expect(byName.get('main-2')).not.toHaveProperty('awaitingOwnPublish');
    expect(byName.get('main-0')).not.toHaveProperty('awaitingOwnPublish');
    expect(asked).toEqual(['10.0.0.11']);
    expect(observation.kube.find((k) => k.name === 'main-1')?.claim?.restartedLearner).toBe('7');
  });

  it('is not said of a started learner that passes its readiness checks and answers its status', async () => {
    const { kube } = world();
    const { etcd } = fakeEtcd([etcdMember('1', 'main-0'), etcdMember('2', 'main-1', { isLearner: true })], {
      leaderId: '1',
    });
    const observation = await activitiesWith(
      kube,
      etcd,
      undefined,
      readyAt(['10.0.0.11']).readiness,
    ).observeCluster({
      ref,
      version: '3.6.16',
    });
    expect(observation.etcd?.members.find((m) => m.name === 'main-1')).toMatchObject({ reachable: true });
    expect(observation.etcd?.members.find((m) => m.name === 'main-1')).not.toHaveProperty(
      'awaitingOwnPublish',
    );
  });

  it('is not said of a started learner whose readiness checks fail (its snapshot is still on the way)', async () => {
    const { kube, etcd } = world();
    const observation = await activitiesWith(kube, etcd, undefined, readyAt([]).readiness).observeCluster({
      ref,
      version: '3.6.16',
    });
    expect(observation.etcd?.members.find((m) => m.name === 'main-1')).not.toHaveProperty(
      'awaitingOwnPublish',
    );
  });

  it("ends a wait for an answer as news once seen twice in a row, unless the caller's look had found that learner already", async () => {
    const { kube, etcd } = world();
    const { asked, readiness } = readyAt(['10.0.0.11']);
    const acts = activitiesWith(kube, etcd, undefined, readiness);
    const input = { ref, version: '3.6.16', answering: ['main-0'], maxMs: 1000 };
    await expect(acts.awaitAnswerChange(input)).resolves.toBe('changed');
    expect(asked).toHaveLength(2);
    await expect(acts.awaitAnswerChange({ ...input, maxMs: 300, learnerToRestart: '2' })).resolves.toBe(
      'unchanged',
    );
  });

  it('a learner seen waiting once and answering at the next poll ends the wait as an answer', async () => {
    const { kube, etcd } = world();
    // main-1's readiness passes and its status fails once (a slow moment), then answers.
    const status = etcd.status.bind(etcd);
    let calls = 0;
    etcd.status = async (endpoint, timeoutMs, dial) => {
      if (endpoint === client('main-1') && ++calls === 1) throw new Error('deadline exceeded');
      if (endpoint === client('main-1'))
        return { ...(await status(client('main-0'), timeoutMs, dial)), id: '2' };
      return status(endpoint, timeoutMs, dial);
    };
    const acts = activitiesWith(kube, etcd, undefined, readyAt(['10.0.0.11']).readiness);
    await expect(
      acts.awaitAnswerChange({ ref, version: '3.6.16', answering: ['main-0'], maxMs: 1000 }),
    ).resolves.toBe('changed');
    // The second poll found it answering: the wait ended on its answer, with no learner to restart.
    const look = await acts.observeCluster({ ref, version: '3.6.16' });
    expect(look.etcd?.members.find((m) => m.name === 'main-1')).toMatchObject({ reachable: true });
  });

  it('a learner restarted once (its claim names its id) is no news to the wait', async () => {
    const { kube, etcd } = world({ 'etcd.conductor.dev/restarted-learner': '2' });
    const acts = activitiesWith(kube, etcd, undefined, readyAt(['10.0.0.11']).readiness);
    await expect(
      acts.awaitAnswerChange({ ref, version: '3.6.16', answering: ['main-0'], maxMs: 300 }),
    ).resolves.toBe('unchanged');
  });

  it('stopLearnerPod records the learner on its claim, deletes the Pod it was given and returns once it is gone', async () => {
    const { kube, patches, etcd } = world();
    const deleted: { name: string; uid?: string }[] = [];
    const deleteIfPresent = kube.deleteIfPresent.bind(kube);
    kube.deleteIfPresent = async (r, options) => {
      deleted.push({ name: r.name, ...(options?.uid ? { uid: options.uid } : {}) });
      return deleteIfPresent(r, options);
    };
    const acts = activitiesWith(kube, etcd);
    await expect(acts.stopLearnerPod({ ref, member: 'main-1', id: '2', podUid: 'pod-main-1' })).resolves.toBe(
      'stopped',
    );
    expect(patches).toContainEqual({
      ref: expect.objectContaining({ kind: 'PersistentVolumeClaim', name: 'data-main-1' }),
      patch: { metadata: { annotations: { 'etcd.conductor.dev/restarted-learner': '2' } } },
    });
    expect(deleted).toEqual([{ name: 'main-1', uid: 'pod-main-1' }]);
    await expect(
      kube.read({ apiVersion: 'v1', kind: 'Pod', namespace: 'prod', name: 'main-1' }),
    ).resolves.toBeUndefined();
  });

  it('stopLearnerPod retried after the new Pod started leaves that Pod alone', async () => {
    const { kube, etcd } = world();
    // The Pod now there is a newer one (another uid than the look's): it is neither deleted nor waited on.
    const deleted: string[] = [];
    const deleteIfPresent = kube.deleteIfPresent.bind(kube);
    kube.deleteIfPresent = async (r, options) => {
      deleted.push(r.name);
      return deleteIfPresent(r, options);
    };
    const acts = activitiesWith(kube, etcd);
    await expect(acts.stopLearnerPod({ ref, member: 'main-1', id: '2', podUid: 'pod-old' })).resolves.toBe(
      'gone',
    );
    expect(deleted).toEqual([]);
    await expect(
      kube.read({ apiVersion: 'v1', kind: 'Pod', namespace: 'prod', name: 'main-1' }),
    ).resolves.toBeDefined();
  });
});

describe('writeStatus', () => {
  const status: EtcdClusterStatus = { observedGeneration: 3, replicas: 3, readyReplicas: 3 };

  it('clears currentOperation and lastOperation with null in the merge patch when status has none', async () => {
    const { kube, patches } = fakeKube([clusterObject('uid-1')]);
    await expect(activitiesWith(kube, fakeEtcd([]).etcd).writeStatus({ ref, status })).resolves.toBe(
      'written',
    );
    expect(patches).toEqual([
      {
        ref: {
          apiVersion: 'etcd.conductor.dev/v1alpha1',
          kind: 'EtcdCluster',
          namespace: 'prod',
          name: 'main',
          plural: 'etcdclusters',
        },
        patch: { status: { currentOperation: null, lastOperation: null, backup: null, ...status } },
        subresource: 'status',
      },
    ]);
  });

  it('writes currentOperation and lastOperation when status has them', async () => {
    const { kube, patches } = fakeKube([clusterObject('uid-1')]);
    const full: EtcdClusterStatus = {
      ...status,
      currentOperation: { type: 'ScaleUp', workflowId: 'w', startedAt: '2026-01-01T00:00:00Z' },
      lastOperation: {
        type: 'Bootstrap',
        result: 'Succeeded',
        workflowId: 'v',
        finishedAt: '2026-01-01T00:00:00Z',
      },
    };
    await activitiesWith(kube, fakeEtcd([]).etcd).writeStatus({ ref, status: full });
    // status.backup is cleared unless status has it (the continuous backup was turned off, or never on).
    expect(patches[0]?.patch).toEqual({ status: { backup: null, ...full } });
  });

  it('writes status.backup when status has it', async () => {
    const { kube, patches } = fakeKube([clusterObject('uid-1')]);
    const withBackup: EtcdClusterStatus = { ...status, backup: { latestRevision: 7, gaps: [] } };
    await activitiesWith(kube, fakeEtcd([]).etcd).writeStatus({ ref, status: withBackup });
    expect(patches[0]?.patch).toEqual({
      status: { currentOperation: null, lastOperation: null, ...withBackup },
    });
  });

  it.each([
    ['an EtcdCluster of the same name with another uid', [clusterObject('uid-2')]],
    ['no EtcdCluster at all', []],
  ])('answers cluster-gone and writes nothing for %s', async (_case, objects) => {
    const { kube, patches } = fakeKube(objects);
    await expect(activitiesWith(kube, fakeEtcd([]).etcd).writeStatus({ ref, status })).resolves.toBe(
      'cluster-gone',
    );
    expect(patches).toEqual([]);
  });
});

describe('addLearner and the endpoints activities ask', () => {
  it('adds the member by its derived peer URL, asking only voters (learners refuse cluster RPCs) and never a terminating Pod', async () => {
    const { kube } = fakeKube([
      podObject('main-2', 'learner'),
      podObject('main-1', 'voter'),
      podObject('main-0', 'voter', { deleting: true }),
    ]);
    const { etcd, calls } = fakeEtcd([etcdMember('1', 'main-1')]);
    await expect(activitiesWith(kube, etcd).addLearner({ ref, member: 'main-3' })).resolves.toEqual({
      id: '99',
    });
    expect(calls).toEqual([{ fn: 'addLearner', endpoints: [client('main-1')], args: [peer('main-3')] }]);
  });

  it('reports notReady, adding nothing, while etcd refuses new members', async () => {
    const { kube } = fakeKube([podObject('main-0', 'voter')]);
    const { etcd } = fakeEtcd([etcdMember('1', 'main-0')]);
    etcd.addLearner = async () => 'not-ready';
    const result = await activitiesWith(kube, etcd).addLearner({ ref, member: 'main-1' });
    expect(result).toEqual({ notReady: expect.stringMatching(/connected for 5 s/) });
  });

  it('with waitMs, asks again while etcd refuses and adds the member once etcd accepts it', async () => {
    const { kube } = fakeKube([podObject('main-0', 'voter')]);
    const { etcd, calls } = fakeEtcd([etcdMember('1', 'main-0')]);
    const accept = etcd.addLearner.bind(etcd);
    let refusals = 2;
    etcd.addLearner = async (endpoints, peerURL) =>
      refusals-- > 0 ? 'not-ready' : accept(endpoints, peerURL);
    const result = await activitiesWith(kube, etcd).addLearner({ ref, member: 'main-1', waitMs: 5000 });
    expect(result).toEqual({ id: '99' });
    expect(refusals).toBe(-1);
    expect(calls.filter((c) => c.fn === 'addLearner')).toHaveLength(1);
  });

  it('with waitMs, gives up with notReady once the wait is over', async () => {
    const { kube } = fakeKube([podObject('main-0', 'voter')]);
    const { etcd } = fakeEtcd([etcdMember('1', 'main-0')]);
    let asked = 0;
    etcd.addLearner = async () => {
      asked += 1;
      return 'not-ready';
    };
    const result = await activitiesWith(kube, etcd).addLearner({ ref, member: 'main-1', waitMs: 500 });
    expect(result).toEqual({ notReady: expect.stringMatching(/connected for 5 s/) });
    expect(asked).toBeGreaterThan(1);
    expect(asked).toBeLessThan(6);
  });

  it('asks every live Pod while none is labelled a voter yet', async () => {
    const { kube } = fakeKube([podObject('main-0', 'learner'), podObject('main-1', 'learner')]);
    const { etcd, calls } = fakeEtcd([etcdMember('1', 'main-0')]);
    await activitiesWith(kube, etcd).addLearner({ ref, member: 'main-2' });
    expect(calls[0]?.endpoints).toEqual([client('main-0'), client('main-1')]);
  });

  it('promoteLearner relabels the Pod as a voter only once etcd promoted it', async () => {
    const { kube, patches } = fakeKube([podObject('main-1', 'voter'), podObject('main-2', 'learner')]);
    const { etcd } = fakeEtcd([]);
    await expect(activitiesWith(kube, etcd).promoteLearner({ ref, member: 'main-2', id: '3' })).resolves.toBe(
      'promoted',
    );
    expect(patches).toEqual([
      {
        ref: { apiVersion: 'v1', kind: 'Pod', namespace: 'prod', name: 'main-2' },
        patch: { metadata: { labels: { [Labels.role]: 'voter' } } },
      },
    ]);
    const notYet: EtcdAdmin = { ...etcd, promote: async () => 'not-caught-up' };
    patches.length = 0;
    await expect(
      activitiesWith(kube, notYet).promoteLearner({ ref, member: 'main-2', id: '3' }),
    ).resolves.toBe('not-caught-up');
    expect(patches).toEqual([]);
  });
});
