// Every membership and object activity run twice in a row against a real three-member etcd: the second run sees
// the first one's effect (member already added, Pod already there, already promoted, leader already moved,
// already removed) and succeeds without a second effect. Only Kubernetes is a fake (objects in a map).
import type { KubernetesObject } from '@kubernetes/client-node';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { Labels } from '../crds/labels';
import { memberClientURL, memberPeerURL } from '../crds/names';
import { createActivities } from './cluster-activities';
import { createEtcdAdmin } from './etcd-admin';
import type { KubeObjects, ObjectRef } from './kube-objects';
import type { LocalEtcdCluster } from '../test/support/local-etcd-cluster';
import { startLocalEtcdCluster, translatedEtcdAdmin } from '../test/support/local-etcd-cluster';

jest.setTimeout(120_000);

const ref = { namespace: 'prod', name: 'main', uid: 'uid-idem' };
const spec: EtcdClusterSpec = {
  replicas: 3,
  version: '3.6.16',
  storage: { size: '1Gi', medium: '' },
  progressDeadlineSeconds: 600,
};
const VOTERS = ['main-0', 'main-1', 'main-2'];
const JOINER = 'main-3';

type Obj = KubernetesObject & { status?: unknown; spec?: unknown };
const keyOf = (kind: string, namespace: string, name: string) => `${kind}/${namespace}/${name}`;

/** Kubernetes objects in a map; label selectors `k=v[,k=v]`; every create and delete is counted. */
function fakeKube() {
  const objects = new Map<string, Obj>();
  const writes: string[] = [];
  const kube: KubeObjects = {
    async createIfAbsent(obj) {
      const k = keyOf(obj.kind ?? '', obj.metadata?.namespace ?? '', obj.metadata?.name ?? '');
      if (objects.has(k)) return 'exists';
      objects.set(k, structuredClone(obj));
      writes.push(`create ${k}`);
      return 'created';
    },
    async deleteIfPresent(r) {
      const k = keyOf(r.kind, r.namespace, r.name);
      if (!objects.delete(k)) return 'absent';
      writes.push(`delete ${k}`);
      return 'deleted';
    },
    async read<T extends KubernetesObject>(r: ObjectRef) {
      return objects.get(keyOf(r.kind, r.namespace, r.name)) as T | undefined;
    },
    async list<T extends KubernetesObject>(_v: string, kind: string, namespace: string, selector: string) {
      const wanted = selector.split(',').map((kv) => kv.split('='));
      return [...objects.values()].filter(
        (o) =>
          o.kind === kind &&
          o.metadata?.namespace === namespace &&
          wanted.every(([k, v]) => o.metadata?.labels?.[k ?? ''] === v),
      ) as T[];
    },
    async mergePatch(r, patch) {
      const k = keyOf(r.kind, r.namespace, r.name);
      const o = objects.get(k);
      const labels = (patch as { metadata?: { labels?: Record<string, string> } }).metadata?.labels;
      if (o?.metadata && labels) o.metadata.labels = { ...o.metadata.labels, ...labels };
    },
  };
  return { kube, objects, writes };
}

/**
 * Retries what etcd calls transient right after a leadership change ("leader changed", no leader yet), as the
 * activities' retry policy would; anything else fails the test at once.
 */
async function retrying<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= 25 || !/leader changed|no leader|UNAVAILABLE/i.test(String(err))) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

let cluster: LocalEtcdCluster;
const kubeFake = fakeKube();
let acts: ReturnType<typeof createActivities>;
/** What etcd holds: members (id, name, learner) and the leader, as seen from a voter. */
let etcdState: () => Promise<string>;

beforeAll(async () => {
  cluster = await startLocalEtcdCluster('idempotence-', VOTERS);
  const urls = new Map<string, string>();
  for (const m of cluster.members.values()) {
    urls.set(memberClientURL(ref, m.name), m.clientURL);
    urls.set(memberPeerURL(ref, m.name), m.peerURL);
  }
  const joiner = await cluster.reserve(JOINER);
  urls.set(memberClientURL(ref, JOINER), joiner.clientURL);
  urls.set(memberPeerURL(ref, JOINER), joiner.peerURL);
  const etcd = translatedEtcdAdmin(createEtcdAdmin({ callTimeoutMs: 5000 }), urls);
  acts = createActivities({
    kube: kubeFake.kube,
    etcd,
    events: { record: async () => undefined },
    imageFor: (v) => `etcd:v${v}`,
  });
  // The voters' Pods, as the cluster's own earlier steps left them: what the activities find their endpoints by.
  for (const name of VOTERS) {
    kubeFake.objects.set(keyOf('Pod', ref.namespace, name), {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        namespace: ref.namespace,
        labels: { [Labels.cluster]: ref.name, [Labels.member]: name, [Labels.role]: 'voter' },
      },
      // Observation asks only members whose Pod has an address (translatedEtcdAdmin dials the local member itself).
      status: { podIP: '127.0.0.1' },
    });
  }
  const voterEndpoints = VOTERS.map((n) => memberClientURL(ref, n));
  etcdState = () =>
    retrying(async () => {
      const members = (await etcd.listMembers(voterEndpoints))
        .map((m) => `${m.id}:${m.name || '(unstarted)'}:${m.isLearner ? 'learner' : 'voter'}`)
        .sort();
      const leader = (await etcd.status(voterEndpoints[0] ?? '')).leaderId;
      return JSON.stringify({ members, leader });
    });
});

afterAll(() => cluster?.stop());

/** The id etcd gave the joiner, once added. */
let joinerId = '';

const leaderAndOther = async () => {
  const s = await acts.observeCluster({ ref, version: spec.version });
  const leaderId = s.etcd?.leaderId ?? '';
  const voters = (s.etcd?.members ?? []).filter((m) => !m.isLearner && m.reachable);
  const leader = voters.find((m) => m.id === leaderId);
  const other = voters.find((m) => m.id !== leaderId);
  if (!leader || !other) throw new Error(`no leader and second voter in ${JSON.stringify(s.etcd)}`);
  return { leader: leader.name, otherId: other.id };
};

interface Case {
  /** What the second run finds. */
  name: string;
  /** Runs the activity once; the first run may repeat a not-ready answer as the workflow would. */
  run: () => Promise<unknown>;
  first: unknown;
  second: unknown;
  /** Before the first run (e.g. the process a Pod would start). */
  before?: () => Promise<void>;
  after?: (firstResult: unknown) => Promise<void>;
}

let moveArgs: { from: string; toId: string } | undefined;

const cases: Case[] = [
  {
    name: 'adding a learner finds the member the first call added, under the same id',
    run: () => acts.addLearner({ ref, member: JOINER, waitMs: 10_000 }),
    first: { id: expect.any(String) },
    second: { id: expect.any(String) },
    after: async (r) => {
      joinerId = (r as { id: string }).id;
    },
  },
  {
    name: "creating the learner's claim finds the claim there",
    run: () => acts.createMemberClaim({ ref, spec, member: JOINER }),
    first: undefined,
    second: undefined,
  },
  {
    name: "creating the learner's Pod finds the Pod there",
    run: () => acts.createMemberPod({ ref, spec, member: JOINER, mode: 'join' }),
    first: 'created',
    second: 'exists',
    after: () => cluster.join(JOINER),
  },
  {
    name: 'promoting the learner finds it a voter already',
    run: async () => {
      for (let i = 0; i < 100; i++) {
        const r = await acts.promoteLearner({ ref, member: JOINER, id: joinerId });
        if (r !== 'not-caught-up') return r;
        await new Promise((res) => setTimeout(res, 200));
      }
      return 'not-caught-up';
    },
    first: 'promoted',
    second: 'promoted',
  },
  {
    name: 'ensuring the Services and PodDisruptionBudget finds them there',
    run: () => acts.ensureClusterObjects({ ref, voters: 4 }),
    first: undefined,
    second: undefined,
  },
  {
    name: 'moving leadership finds the target leading already',
    before: async () => {
      const { leader, otherId } = await leaderAndOther();
      moveArgs = { from: leader, toId: otherId };
    },
    run: () => acts.moveLeader({ ref, ...(moveArgs ?? { from: '', toId: '' }) }),
    first: 'moved',
    second: 'already-leader',
  },
  {
    name: 'removing the member finds it gone',
    run: () => acts.removeMember({ ref, id: joinerId }),
    first: 'removed',
    second: 'not-found',
  },
  {
    name: "deleting the member's Pod finds it gone",
    run: () => acts.deleteMemberPod({ ref, member: JOINER }),
    first: 'deleted',
    second: 'absent',
  },
  {
    name: "deleting the member's claim finds it gone",
    run: () => acts.deleteMemberClaim({ ref, member: JOINER }),
    first: 'deleted',
    second: 'absent',
  },
];

describe('each activity run twice: the second sees the first one and changes nothing', () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    await c.before?.();
    const etcdBefore = await etcdState();
    const first = await retrying(c.run);
    expect(first).toEqual(c.first);
    await c.after?.(first);
    const etcdAfterFirst = await etcdState();
    const writesAfterFirst = kubeFake.writes.length;
    const objectsAfterFirst = JSON.stringify([...kubeFake.objects]);

    const second = await retrying(c.run);
    expect(second).toEqual(c.second);
    // The same answer about the same thing: an add finds the same member id.
    if (c.name.startsWith('adding')) expect(second).toEqual(first);
    expect(await etcdState()).toBe(etcdAfterFirst);
    expect(kubeFake.writes.length).toBe(writesAfterFirst);
    expect(JSON.stringify([...kubeFake.objects])).toBe(objectsAfterFirst);
    // The first run did something (otherwise the second run proves nothing).
    expect(etcdAfterFirst !== etcdBefore || writesAfterFirst > 0).toBe(true);
  });
});
