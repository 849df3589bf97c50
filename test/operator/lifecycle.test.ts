// End-to-end journeys on the local stack: real apiserver, real etcd members as Pods, real Temporal, the operator the stack runs.
import { containerFaults } from '../support/container-faults';
import { expectAvailability, FAULT_GAP_BOUND_MS, PLANNED_GAP_BOUND_MS } from '../support/availability';
import type { Harness } from '../support/cluster-harness';
import {
  connect,
  createCluster,
  freshNamespace,
  getCluster,
  patchSpec,
  waitConverged,
  writeKeys,
  eventually,
  expectClusterData,
} from '../support/cluster-harness';
import { startWriterRunning } from '../support/writer';

// Connected at load, not in beforeAll: Jest starts concurrent tests before the file's beforeAll hooks run.
const h: Harness = connect();

/**
 * The journeys run side by side, each on a cluster in its own namespace (the file takes about as long as the 3 -> 5
 * -> 3 -> 1 -> 3 journey rather than the sum of all), but at most this many at once: each runs its own writer under
 * the 1 s planned-gap bound, and more clusters starting together on two cores would load the machine for nothing.
 */
const AT_ONCE = 3;
let running = 0;
const queued: (() => void)[] = [];
async function inTurn(body: () => Promise<void>): Promise<void> {
  if (running >= AT_ONCE) await new Promise<void>((r) => queued.push(r));
  else running++;
  try {
    await body();
  } finally {
    const next = queued.shift();
    if (next) next();
    else running--;
  }
}
/** A journey that runs beside the others (see AT_ONCE). */
const journey = (title: string, body: () => Promise<void>) => test.concurrent(title, () => inTurn(body));
const expectDataIntact = (ns: string, name: string, prefix: string, written: Map<string, string>) =>
  expectClusterData(h, ns, name, prefix, written);

describe('EtcdCluster lifecycle', () => {
  journey(
    'a 1-member cluster bootstraps in a namespace that enforces the restricted Pod Security Standard and serves writes through its client Service',
    async () => {
      // PodSecurity admission refuses any member Pod that is not non-root, capability-free, seccomp RuntimeDefault.
      const ns = await freshNamespace(h, 'boot1', { 'pod-security.kubernetes.io/enforce': 'restricted' });
      await createCluster(h, ns, 'solo', { replicas: 1 });
      const c = await waitConverged(h, ns, 'solo', 1);
      expect(c.status?.clientEndpoint).toBe(`http://solo-client.${ns}.svc:2379`);
      expect(c.status?.lastOperation).toMatchObject({ type: 'Bootstrap', result: 'Succeeded' });
      const written = await writeKeys(ns, 'solo', 'k', 10);
      await expectDataIntact(ns, 'solo', 'k', written);
    },
  );

  journey(
    'a 3-member cluster bootstraps, then scales 3 -> 5 -> 3 -> 1 -> 3 under writes keeping every key, no acknowledged write lost, equal hashkv, no write gap of 1 s',
    async () => {
      const ns = await freshNamespace(h, 'scale');
      await createCluster(h, ns, 'main', { replicas: 3 });
      const boot = await waitConverged(h, ns, 'main', 3);
      const clusterId = boot.status?.clusterId;
      expect(clusterId).toBeTruthy();
      const written = await writeKeys(ns, 'main', 'before', 50);

      let from = 3;
      for (const replicas of [5, 3, 1, 3]) {
        const writer = await startWriterRunning({
          namespace: ns,
          name: 'main',
          prefix: `/scale-${replicas}`,
        });
        await patchSpec(h, ns, 'main', { replicas });
        const c = await waitConverged(h, ns, 'main', replicas);
        await expectAvailability(h, await writer.stop(), {
          what: `scale ${from} -> ${replicas}`,
          boundMs: PLANNED_GAP_BOUND_MS,
        });
        from = replicas;
        expect(c.status?.clusterId).toBe(clusterId);
        expect(c.status?.members?.filter((m) => m.leader)).toHaveLength(1);
        await expectDataIntact(ns, 'main', 'before', written);
      }
    },
  );
});

describe('pause, heal and scale through kubectl', () => {
  journey('pause 1 -> 0 -> 1 keeps the data and the cluster id', async () => {
    const ns = await freshNamespace(h, 'pause');
    await createCluster(h, ns, 'p', { replicas: 1 });
    const before = await waitConverged(h, ns, 'p', 1);
    const written = await writeKeys(ns, 'p', 'kept', 20);

    await patchSpec(h, ns, 'p', { replicas: 0 });
    const paused = await eventually('paused', async () => {
      const c = await getCluster(h, ns, 'p');
      const avail = c.status?.conditions?.find((x) => x.type === 'Available');
      return avail?.reason === 'Paused' && !c.status?.currentOperation ? c : undefined;
    });
    expect(paused.status?.replicas ?? 0).toBe(0);
    const pods = await h.core.listNamespacedPod({ namespace: ns });
    expect(pods.items.filter((p) => !p.metadata?.deletionTimestamp)).toHaveLength(0);
    const claims = await h.core.listNamespacedPersistentVolumeClaim({ namespace: ns });
    expect(claims.items.map((c) => c.metadata?.name)).toEqual(['data-p-0']);

    await patchSpec(h, ns, 'p', { replicas: 1 });
    const resumed = await waitConverged(h, ns, 'p', 1);
    expect(resumed.status?.clusterId).toBe(before.status?.clusterId);
    expect(resumed.status?.lastOperation).toMatchObject({ type: 'Resume', result: 'Succeeded' });
    await expectDataIntact(ns, 'p', 'kept', written);
  });

  journey('a killed member Pod comes back as the same member with its data', async () => {
    const ns = await freshNamespace(h, 'heal');
    await createCluster(h, ns, 'hc', { replicas: 3 });
    const before = await waitConverged(h, ns, 'hc', 3);
    const written = await writeKeys(ns, 'hc', 'heal', 20);
    const victim = before.status?.members?.find((m) => !m.leader);
    expect(victim).toBeDefined();
    const writer = await startWriterRunning({ namespace: ns, name: 'hc', prefix: '/heal-writes' });
    await h.core.deleteNamespacedPod({ namespace: ns, name: victim!.name, gracePeriodSeconds: 0 });
    await eventually('the Pod is recreated', async () => {
      const p = await h.core.readNamespacedPod({ namespace: ns, name: victim!.name });
      return p.metadata?.uid ? p : undefined;
    });
    const after = await waitConverged(h, ns, 'hc', 3);
    expect(after.status?.members?.find((m) => m.name === victim!.name)?.id).toBe(victim!.id);
    await expectAvailability(h, await writer.stop(), {
      what: 'a follower Pod killed and healed',
      boundMs: FAULT_GAP_BOUND_MS,
    });
    await expectDataIntact(ns, 'hc', 'heal', written);
  });

  journey('a claim marked data-lost leads to remove-then-add of a fresh member', async () => {
    const ns = await freshNamespace(h, 'lost');
    await createCluster(h, ns, 'dl', { replicas: 3 });
    const before = await waitConverged(h, ns, 'dl', 3);
    const written = await writeKeys(ns, 'dl', 'lost', 20);
    const victim = before.status?.members?.find((m) => !m.leader);
    const writer = await startWriterRunning({ namespace: ns, name: 'dl', prefix: '/lost-writes' });
    const { setHeaderOptions, PatchStrategy } = await import('@kubernetes/client-node');
    await h.core.patchNamespacedPersistentVolumeClaim(
      {
        namespace: ns,
        name: `data-${victim!.name}`,
        body: { metadata: { annotations: { 'etcd.conductor.dev/data-lost': 'true' } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const after = await eventually(
      'the lost member is replaced',
      async () => {
        const c = await waitConverged(h, ns, 'dl', 3, 30_000).catch(() => undefined);
        return c && !c.status?.members?.some((m) => m.id === victim!.id) ? c : undefined;
      },
      240_000,
    );
    expect(after.status?.members).toHaveLength(3);
    // A planned replacement (remove, then add a fresh member) of a follower.
    await expectAvailability(h, await writer.stop(), {
      what: 'a data-lost member replaced',
      boundMs: PLANNED_GAP_BOUND_MS,
    });
    await expectDataIntact(ns, 'dl', 'lost', written);
  });

  journey(
    'a claim wiped in place leads to remove-then-add: etcd reports its raft log lost and the operator replaces the member',
    async () => {
      const ns = await freshNamespace(h, 'wiped');
      await createCluster(h, ns, 'wc', { replicas: 3 });
      const before = await waitConverged(h, ns, 'wc', 3);
      const written = await writeKeys(ns, 'wc', 'wiped', 20);
      const victim = before.status?.members?.find((m) => !m.leader);
      expect(victim).toBeDefined();
      const writer = await startWriterRunning({ namespace: ns, name: 'wc', prefix: '/wiped-writes' });
      // The disk is emptied under the running member, then etcd restarts on it: nobody annotates anything.
      const faults = containerFaults(h);
      await faults.wipeClaim(ns, `data-${victim!.name}`);
      await faults.crashContainer(ns, victim!.name, 'etcd');
      const after = await eventually(
        'the wiped member is replaced by a fresh one',
        async () => {
          const c = await waitConverged(h, ns, 'wc', 3, 30_000).catch(() => undefined);
          return c && !c.status?.members?.some((m) => m.id === victim!.id) ? c : undefined;
        },
        240_000,
      );
      expect(after.status?.members).toHaveLength(3);
      expect(after.status?.clusterId).toBe(before.status?.clusterId);
      // The Events say why: the data loss is the reason the member was removed.
      const events = await h.core.listNamespacedEvent({ namespace: ns });
      expect(events.items.map((e) => `${e.reason}: ${e.message}`).join('\n')).toMatch(
        new RegExp(`${victim!.name}.*data is lost|data is lost.*${victim!.name}`),
      );
      await expectAvailability(h, await writer.stop(), {
        what: 'a wiped member replaced',
        boundMs: FAULT_GAP_BOUND_MS,
      });
      await expectDataIntact(ns, 'wc', 'wiped', written);
    },
  );

  journey('kubectl scale changes spec.replicas through the scale subresource', async () => {
    const ns = await freshNamespace(h, 'kscale');
    await createCluster(h, ns, 'ks', { replicas: 1 });
    await waitConverged(h, ns, 'ks', 1);
    const writer = await startWriterRunning({ namespace: ns, name: 'ks', prefix: '/kscale' });
    const { execFileSync } = await import('node:child_process');
    const out = execFileSync(
      h.stack.tools.kubectl,
      ['--kubeconfig', h.stack.kubeconfig, '-n', ns, 'scale', 'etcd/ks', '--replicas=3'],
      { encoding: 'utf8' },
    );
    expect(out).toContain('scaled');
    const c = await waitConverged(h, ns, 'ks', 3);
    expect(c.spec.replicas).toBe(3);
    await expectAvailability(h, await writer.stop(), {
      what: 'kubectl scale 1 -> 3',
      boundMs: PLANNED_GAP_BOUND_MS,
    });
    const scale = execFileSync(
      h.stack.tools.kubectl,
      [
        '--kubeconfig',
        h.stack.kubeconfig,
        '-n',
        ns,
        'get',
        'etcd',
        'ks',
        '-o',
        'jsonpath={.status.selector}',
      ],
      { encoding: 'utf8' },
    );
    expect(scale).toBe('etcd.conductor.dev/cluster=ks');
  });
});

describe('the API server refuses bad specs with a message a user understands', () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['too many replicas', { replicas: 10 }, /replicas/],
    ['a version with a leading v', { version: 'v3.6.16' }, /version must look like 3\.6\.16/],
    [
      'an option the operator owns',
      { options: { 'data-dir': '/tmp/x' } },
      /options may not set flags the operator manages/,
    ],
    ['an option with dashes', { options: { '--quota-backend-bytes': '1' } }, /without leading dashes/],
    ['a zero storage size', { storage: { size: '0' } }, /storage.size must be a positive quantity/],
    ['pausing a memory-backed cluster', { replicas: 0, storage: { medium: 'Memory' } }, /cannot be paused/],
    [
      'a progress deadline over 24 h',
      { progressDeadlineSeconds: 86401 },
      /progressDeadlineSeconds may be at most 86400 \(24 h\)/,
    ],
    [
      'an image repository with a tag',
      { image: { repository: 'registry.example.com/etcd:v3.6.16' } },
      /spec.image.repository must be a repository without a tag or digest/,
    ],
    [
      'both an image repository and a ref',
      { image: { repository: 'registry.example.com/etcd', ref: 'registry.example.com/etcd:v3.6.16' } },
      /spec.image takes repository or ref, not both/,
    ],
    [
      "an image ref without spec.version's tag",
      { version: '3.6.16', image: { ref: 'registry.example.com/etcd:v3.6.15@sha256:' + '0'.repeat(64) } },
      /spec.image.ref must carry the tag of spec.version/,
    ],
  ];
  test.each(cases)('%s is rejected', async (_name, spec, message) => {
    const ns = 'default';
    const err = await createCluster(
      h,
      ns,
      `bad-${Math.random().toString(36).slice(2, 8)}`,
      spec as never,
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeDefined();
    expect(String((err as { body?: unknown }).body ?? err)).toMatch(message);
  });

  test('shrinking storage is rejected on update', async () => {
    const ns = await freshNamespace(h, 'shrink');
    await createCluster(h, ns, 's', { replicas: 1, storage: { size: '2Gi', medium: '' } });
    const err = await patchSpec(h, ns, 's', { storage: { size: '1Gi', medium: '' } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(String((err as { body?: unknown }).body ?? err)).toMatch(/may grow but never shrink/);
  });
});
