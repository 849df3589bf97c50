// Config rollouts on the real stack: an options change and a resources change each roll 3 members one at a time under writes (leader last, no write lost), podLabels are patched in place, claims grow where their StorageClass allows and the refusal is clear where it does not.
import { randomBytes } from 'node:crypto';
import { StorageV1Api } from '@kubernetes/client-node';
import type { V1Pod } from '@kubernetes/client-node';
import { RolloutAnnotations } from '../../activities/rollout-template';
import { PROVISIONER_NAME as LOCAL_PATH_PROVISIONER } from '../../localcluster/real-nodes/local-path-storage';
import type { EtcdCluster } from '../../crds/etcd-cluster';
import type { Harness } from '../support/cluster-harness';
import { expectAvailability, PLANNED_GAP_BOUND_MS } from '../support/availability';
import { watchRoll } from '../support/rolling-watch';
import { startWriterRunning } from '../support/writer';
import {
  connect,
  createCluster,
  eventually,
  freshNamespace,
  getCluster,
  patchSpec,
  waitConverged,
} from '../support/cluster-harness';

jest.setTimeout(1_200_000);

let h: Harness;
let storage: StorageV1Api;
// Cluster-scoped, so deleted at the end (namespaces are deleted by the harness); named per run. The stack's
// provisioner (local-path) serves any class that names it.
const growClass = `rollout-grow-${randomBytes(3).toString('hex')}`;

beforeAll(async () => {
  h = connect();
  storage = h.kc.makeApiClient(StorageV1Api);
  // The host provisioner makes the volume on the node the scheduler picked, and the stack's resizer grows it, only
  // because the class allows expansion.
  await storage.createStorageClass({
    body: {
      metadata: { name: growClass },
      allowVolumeExpansion: true,
      provisioner: LOCAL_PATH_PROVISIONER,
      volumeBindingMode: 'WaitForFirstConsumer',
    },
  });
});

afterAll(async () => {
  await storage.deleteStorageClass({ name: growClass }).catch(() => undefined);
});

const progressing = (c: EtcdCluster) => c.status?.conditions?.find((x) => x.type === 'Progressing');
const memberPods = async (ns: string, name: string): Promise<V1Pod[]> =>
  (await h.core.listNamespacedPod({ namespace: ns })).items.filter((p) =>
    p.metadata?.name?.startsWith(`${name}-`),
  );

/** Every member is ready and on the spec's Pod template. */
const rolledOut = (c: EtcdCluster) =>
  c.status?.updatedReplicas === c.status?.members?.length &&
  c.status?.members?.every((m) => m.ready && m.upToDate === true) === true;

/** Waits until the spec's generation is observed, no operation runs and the last one was a Rollout that succeeded. */
async function waitRolledOut(ns: string, name: string, timeoutMs = 600_000, onPoll?: () => Promise<void>) {
  return eventually(
    `${ns}/${name} rolled out`,
    async () => {
      await onPoll?.();
      const c = await getCluster(h, ns, name);
      const s = c.status;
      if (!s) return undefined;
      const ok =
        s.observedGeneration === c.metadata.generation &&
        !s.currentOperation &&
        s.lastOperation?.type === 'Rollout' &&
        rolledOut(c);
      return ok ? c : undefined;
    },
    timeoutMs,
    300,
  );
}

describe('config rollout', () => {
  let ns: string;
  const name = 'ro';

  test('an options change under writes restarts each member once, one at a time, the leader last; the new flag is in each Pod; no acknowledged write lost; equal hashkv', async () => {
    ns = await freshNamespace(h, 'rollout');
    await createCluster(h, ns, name, {
      replicas: 3,
      storage: { size: '1Gi', medium: '', storageClassName: growClass },
    });
    const before = await waitConverged(h, ns, name, 3, 300_000);
    expect(before.status?.updatedReplicas).toBe(3);
    expect(before.status?.members?.every((m) => m.upToDate === true)).toBe(true);
    const ids = before.status?.members?.map((m) => [m.name, m.id]);
    const oldLeader = before.status?.members?.find((m) => m.leader)?.name ?? '';
    const hashBefore = (await memberPods(ns, name))[0]?.metadata?.annotations?.[
      RolloutAnnotations.podTemplateHash
    ];
    expect(hashBefore).toMatch(/^[0-9a-f]{16}$/);

    const writer = await startWriterRunning({ namespace: ns, name, prefix: '/rollout' });
    await patchSpec(h, ns, name, { options: { 'snapshot-count': '5000' } });

    const roll = await watchRoll(h, ns, name, {
      type: 'Rollout',
      members: 3,
      done: rolledOut,
      what: `${ns}/${name} rolled out`,
      timeoutMs: 900_000,
    });
    const done = roll.cluster;
    const order = roll.restartedOrder;
    const summary = [...roll.workflowIds][0] ?? '';
    const report = await writer.stop();
    console.log(`rollout order ${order.join(', ')}; most down at once ${roll.mostDown}`);

    expect(done.status?.lastOperation).toMatchObject({ type: 'Rollout', result: 'Succeeded' });
    expect(summary).toMatch(/\/op\/\d+-rollout$/);
    // The operation's summary (Temporal UI, Event) says what changed.
    const started = (await h.core.listNamespacedEvent({ namespace: ns })).items.filter(
      (e) => e.reason === 'RolloutStarted',
    );
    expect(started.map((e) => e.message)).toContain(`roll out ${ns}/${name}: options changed (${summary})`);
    // Each member restarted exactly once, followers by ordinal and the leader last; never two down at once.
    expect([...roll.uidsByMember.values()].map((u) => u.length)).toEqual([2, 2, 2]);
    expect([...roll.workflowIds]).toEqual([summary]);
    const followers = ['ro-0', 'ro-1', 'ro-2'].filter((m) => m !== oldLeader);
    expect(order).toEqual([...followers, oldLeader]);
    expect(roll.mostDown).toBeLessThanOrEqual(1);
    // The same members came back on their claims (same ids), each running the new flag.
    expect(done.status?.members?.map((m) => [m.name, m.id])).toEqual(ids);
    const pods = await memberPods(ns, name);
    for (const p of pods) {
      expect(p.spec?.containers[0]?.args).toContain('--snapshot-count=5000');
      expect(p.metadata?.annotations?.[RolloutAnnotations.podTemplateHash]).not.toBe(hashBefore);
    }

    await expectAvailability(h, report, {
      what: 'options rollout',
      boundMs: PLANNED_GAP_BOUND_MS,
      members: ['ro-0', 'ro-1', 'ro-2'],
    });
  });

  test('podLabels and podAnnotations are patched onto the running Pods without a restart, and removed again', async () => {
    expect(ns).toBeDefined();
    const uidsBefore = new Map((await memberPods(ns, name)).map((p) => [p.metadata?.name, p.metadata?.uid]));
    const writer = await startWriterRunning({ namespace: ns, name, prefix: '/pod-labels' });
    await patchSpec(h, ns, name, {
      podLabels: { team: 'storage' },
      podAnnotations: { 'example.com/owner': 'db' },
    });
    await eventually(
      'every Pod labelled and annotated',
      async () => {
        const pods = await memberPods(ns, name);
        return pods.length === 3 &&
          pods.every(
            (p) =>
              p.metadata?.labels?.team === 'storage' &&
              p.metadata.annotations?.['example.com/owner'] === 'db',
          )
          ? pods
          : undefined;
      },
      300_000,
    );
    const labelled = await waitRolledOut(ns, name);
    expect(labelled.status?.updatedReplicas).toBe(3);

    // A key the spec drops is removed from the Pods too (merge patch null removes the map key).
    await patchSpec(h, ns, name, { podLabels: { team: null } as unknown as Record<string, string> });
    await eventually(
      'the label removed from every Pod',
      async () => {
        const pods = await memberPods(ns, name);
        return pods.length === 3 && pods.every((p) => p.metadata?.labels?.team === undefined)
          ? pods
          : undefined;
      },
      300_000,
    );
    await waitRolledOut(ns, name);
    await expectAvailability(h, await writer.stop(), {
      what: 'podLabels and podAnnotations patched in place',
      boundMs: PLANNED_GAP_BOUND_MS,
      members: ['ro-0', 'ro-1', 'ro-2'],
    });
    const uidsAfter = new Map((await memberPods(ns, name)).map((p) => [p.metadata?.name, p.metadata?.uid]));
    expect(uidsAfter).toEqual(uidsBefore);
  });

  test('storage growth expands every claim whose StorageClass allows it, without restarting a member', async () => {
    expect(ns).toBeDefined();
    const uidsBefore = new Map((await memberPods(ns, name)).map((p) => [p.metadata?.name, p.metadata?.uid]));
    const writer = await startWriterRunning({ namespace: ns, name, prefix: '/storage-growth' });
    await patchSpec(h, ns, name, { storage: { size: '2Gi', medium: '', storageClassName: growClass } });
    const claims = await eventually(
      'every claim asks for and holds 2Gi',
      async () => {
        const list = (await h.core.listNamespacedPersistentVolumeClaim({ namespace: ns })).items;
        return list.length === 3 &&
          list.every(
            (c) => c.spec?.resources?.requests?.storage === '2Gi' && c.status?.capacity?.storage === '2Gi',
          )
          ? list
          : undefined;
      },
      300_000,
    );
    expect(claims.map((c) => c.metadata?.name).sort()).toEqual(['data-ro-0', 'data-ro-1', 'data-ro-2']);
    const done = await eventually(
      'the rollout finished and the cluster converged',
      async () => {
        const c = await getCluster(h, ns, name);
        return c.status?.observedGeneration === c.metadata.generation &&
          !c.status?.currentOperation &&
          progressing(c)?.reason === 'Converged'
          ? c
          : undefined;
      },
      300_000,
    );
    expect(done.status?.lastOperation?.type).toBe('Rollout');
    await expectAvailability(h, await writer.stop(), {
      what: 'claims grown in place',
      boundMs: PLANNED_GAP_BOUND_MS,
      members: ['ro-0', 'ro-1', 'ro-2'],
    });
    const uidsAfter = new Map((await memberPods(ns, name)).map((p) => [p.metadata?.name, p.metadata?.uid]));
    expect(uidsAfter).toEqual(uidsBefore);
  });
});

describe('resources rollout', () => {
  test('a resources change under writes restarts each member once, one at a time, the leader last; each Pod has the new requests and limits; members upToDate; no acknowledged write lost; equal hashkv', async () => {
    const ns = await freshNamespace(h, 'rollout-resources');
    const name = 'rr';
    await createCluster(h, ns, name, { replicas: 3 });
    const before = await waitConverged(h, ns, name, 3, 300_000);
    const ids = before.status?.members?.map((m) => [m.name, m.id]);
    const oldLeader = before.status?.members?.find((m) => m.leader)?.name ?? '';

    const writer = await startWriterRunning({ namespace: ns, name, prefix: '/resources' });
    const resources = { requests: { cpu: '50m', memory: '64Mi' }, limits: { cpu: '2', memory: '1Gi' } };
    await patchSpec(h, ns, name, { resources });
    const roll = await watchRoll(h, ns, name, {
      type: 'Rollout',
      members: 3,
      done: rolledOut,
      what: `${ns}/${name} rolled out its new resources`,
      timeoutMs: 900_000,
    });
    const report = await writer.stop();
    console.log(
      `resources rollout order ${roll.restartedOrder.join(', ')}; most down at once ${roll.mostDown}`,
    );

    expect(roll.cluster.status?.lastOperation).toMatchObject({ type: 'Rollout', result: 'Succeeded' });
    expect([...roll.operationTypes]).toEqual(['Rollout']);
    // Each member restarted exactly once, followers by ordinal and the leader last; never two down at once.
    expect([...roll.uidsByMember.values()].map((u) => u.length)).toEqual([2, 2, 2]);
    const followers = [`${name}-0`, `${name}-1`, `${name}-2`].filter((m) => m !== oldLeader);
    expect(roll.restartedOrder).toEqual([...followers, oldLeader]);
    expect(roll.mostDown).toBeLessThanOrEqual(1);
    // The same members came back on their claims, each Pod's etcd container asking for the new resources.
    expect(roll.cluster.status?.members?.map((m) => [m.name, m.id])).toEqual(ids);
    const pods = await memberPods(ns, name);
    expect(pods).toHaveLength(3);
    for (const p of pods) {
      const etcd = p.spec?.containers.find((c) => c.name === 'etcd');
      expect(etcd?.resources).toEqual(resources);
    }

    await expectAvailability(h, report, {
      what: 'resources rollout',
      boundMs: PLANNED_GAP_BOUND_MS,
      members: [`${name}-0`, `${name}-1`, `${name}-2`],
    });
  });
});

describe('storage growth refused', () => {
  test('claims whose StorageClass cannot grow them (none, or one without allowVolumeExpansion) keep their size, and status and an Event say why', async () => {
    const ns = await freshNamespace(h, 'rollout-refused');
    await createCluster(h, ns, 'fixed', { replicas: 1 });
    await waitConverged(h, ns, 'fixed', 1, 300_000);
    await patchSpec(h, ns, 'fixed', { storage: { size: '2Gi', medium: '' } });
    const refused = await eventually(
      'status refuses the growth',
      async () => {
        const c = await getCluster(h, ns, 'fixed');
        return c.status?.observedGeneration === c.metadata.generation &&
          progressing(c)?.reason === 'StorageExpansionRefused'
          ? c
          : undefined;
      },
      300_000,
    );
    expect(progressing(refused)?.status).toBe('False');
    // The stack's default class (local-path, no expansion) takes the claim; without a default class it would have none.
    const claimClass = (
      await h.core.readNamespacedPersistentVolumeClaim({ namespace: ns, name: 'data-fixed-0' })
    ).spec?.storageClassName;
    expect(progressing(refused)?.message).toContain(
      claimClass
        ? `data-fixed-0 (1Gi) has a StorageClass without allowVolumeExpansion (${claimClass})`
        : 'data-fixed-0 (1Gi) has no StorageClass',
    );
    const events = await eventually('the StorageExpansionRefused Event', async () => {
      const list = await h.core.listNamespacedEvent({ namespace: ns });
      const found = list.items.filter((e) => e.reason === 'StorageExpansionRefused');
      return found.length > 0 ? found : undefined;
    });
    expect(events[0]?.message).toContain('spec.storage.size 2Gi is not applied');
    const claim = await h.core.readNamespacedPersistentVolumeClaim({ namespace: ns, name: 'data-fixed-0' });
    expect(claim.spec?.resources?.requests?.storage).toBe('1Gi');
    // The cluster keeps working: still available, its member still ready.
    expect(refused.status?.conditions?.find((x) => x.type === 'Available')?.status).toBe('True');
  });
});
