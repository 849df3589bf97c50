// Telling the user why a cluster waits, on the real stack: a Pod that cannot pull its image, an etcd that
// crash-loops, a Pod the scheduler cannot place, an unsupported version; each is reported within 30 s as a
// condition reason and one Event naming the Pod, costs next to nothing while it stays (no status write, a
// few history events), and a fixed spec supersedes the wait.
import type { CoreV1Event } from '@kubernetes/client-node';
import { StorageV1Api } from '@kubernetes/client-node';
import type { Harness } from '../support/cluster-harness';
import {
  connect,
  createCluster,
  eventually,
  freshNamespace,
  getCluster,
  patchSpec,
  temporalCli,
  waitConverged,
} from '../support/cluster-harness';
import type { EtcdCluster } from '../../crds/etcd-cluster';
import { containerFaults } from '../support/container-faults';
import { memberRole } from '../support/etcd-view';
import { PROVISIONER_NAME as LOCAL_PATH_PROVISIONER } from '../../localcluster/real-nodes/local-path-storage';

// Connected at load, not in beforeAll: Jest starts concurrent tests before the file's beforeAll hooks run.
const h: Harness = connect();

/** How soon a problem must show in status (issue 15: "within 30 s"). */
const REPORTED_WITHIN_MS = 30_000;
/** How long a stuck cluster is watched for writes and history growth. */
const QUIET_WINDOW_MS = 60_000;

/** Whether the kubelet has seen the member's etcd container pass its startup probe. */
async function containerStarted(namespace: string, pod: string): Promise<boolean> {
  const p = await h.core.readNamespacedPod({ namespace, name: pod });
  return p.status?.containerStatuses?.find((c) => c.name === 'etcd')?.started === true;
}

const condition = (c: EtcdCluster, type: string) => c.status?.conditions?.find((x) => x.type === type);

async function eventsFor(ns: string, cluster: string, reason: string): Promise<CoreV1Event[]> {
  const list = await h.core.listNamespacedEvent({ namespace: ns });
  return list.items.filter((e) => e.involvedObject.name === cluster && e.reason === reason);
}

/** The history length of a workflow, as `temporal workflow describe` reports it. */
function historyLength(workflowId: string): number {
  const described = JSON.parse(
    temporalCli(h, ['workflow', 'describe', '--workflow-id', workflowId, '-o', 'json']),
  ) as { workflowExecutionInfo?: { historyLength?: string | number } };
  return Number(described.workflowExecutionInfo?.historyLength ?? NaN);
}

/** Waits until Degraded (or, for spec-only waits, Progressing) carries `reason`; returns the cluster then. */
async function reported(ns: string, name: string, type: string, reason: string, startedAt: number) {
  const c = await eventually(
    `${type} ${reason} on ${ns}/${name}`,
    async () => {
      const got = await getCluster(h, ns, name);
      return condition(got, type)?.reason === reason ? got : undefined;
    },
    REPORTED_WITHIN_MS + 30_000,
  );
  const tookMs = Date.now() - startedAt;
  console.log(`${reason} reported in ${(tookMs / 1000).toFixed(1)} s: ${condition(c, type)?.message ?? ''}`);
  expect(tookMs).toBeLessThanOrEqual(REPORTED_WITHIN_MS);
  return c;
}

/**
 * Over QUIET_WINDOW_MS of an unchanging world: the EtcdCluster is not written (its resourceVersion stays) and
 * each named workflow's history grows by at most `maxEvents`. Prints the figures.
 */
async function expectQuiet(ns: string, name: string, workflowIds: string[], maxEvents: number) {
  const before = await getCluster(h, ns, name);
  const lengths = workflowIds.map(historyLength);
  await new Promise((r) => setTimeout(r, QUIET_WINDOW_MS));
  const after = await getCluster(h, ns, name);
  const grown = workflowIds.map((id, i) => historyLength(id) - (lengths[i] ?? 0));
  console.log(
    `over ${QUIET_WINDOW_MS / 1000} s stuck: resourceVersion ${before.metadata.resourceVersion} -> ${after.metadata.resourceVersion}; history growth ${workflowIds.map((id, i) => `${id} +${grown[i]}`).join(', ')}`,
  );
  expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
  for (const g of grown) expect(g).toBeLessThanOrEqual(maxEvents);
}

// The tests run side by side: each waits on its own cluster and workflows (most of the file's time is quiet windows
// that measure nothing but their own cluster), so the file takes as long as its longest test, not their sum.
describe('why a cluster waits', () => {
  test.concurrent(
    'an image that cannot be pulled is reported with the Pod and the kubelet message, costs nothing while it stays, and a new version supersedes the wait',
    async () => {
      const ns = await freshNamespace(h, 'pull');
      const startedAt = Date.now();
      await createCluster(h, ns, 'pl', { replicas: 1, version: '3.6.1' });
      const c = await reported(ns, 'pl', 'Degraded', 'ImagePullFailed', startedAt);
      expect(condition(c, 'Degraded')?.message).toContain(
        'Pod pl-0 cannot pull image "quay.io/coreos/etcd:v3.6.1"',
      );
      expect(c.status?.currentOperation?.type).toBe('Bootstrap');
      const op = await eventually('the Bootstrap says why it waits', async () => {
        const o = (await getCluster(h, ns, 'pl')).status?.currentOperation;
        return o?.step?.includes('wait (ImagePullFailed)') ? o : undefined;
      });
      const told = await eventually('the ImagePullFailed Event', async () => {
        const e = await eventsFor(ns, 'pl', 'ImagePullFailed');
        return e.length > 0 ? e : undefined;
      });
      expect(told[0]?.message).toContain('pl-0');

      // Waiting costs nothing visible: no status write, and the operation's first minute of back-off (looks 1, 2, 4,
      // 8, 16, 32 s apart, about eleven events each) where it cost ~330 events a minute before issue 15; the hourly
      // budget after five minutes is held by workflows/waiting-cost.test.ts on the time-skipping server.
      await expectQuiet(ns, 'pl', [op?.workflowId ?? '', `etcdcluster/${ns}/pl`], 70);
      expect(await eventsFor(ns, 'pl', 'ImagePullFailed')).toHaveLength(1);
      expect((await eventsFor(ns, 'pl', 'ImagePullFailed'))[0]?.count ?? 1).toBe(1);

      // The fix supersedes the waiting Bootstrap: the Pod that never ran is replaced and the cluster comes up.
      await patchSpec(h, ns, 'pl', { version: '3.6.16' });
      const done = await waitConverged(h, ns, 'pl', 1);
      expect(done.status?.members?.[0]?.version).toBe('3.6.16');
      expect(await eventsFor(ns, 'pl', 'OperationSuperseded')).toHaveLength(1);
      expect(condition(done, 'Degraded')?.reason).toBe('MembersHealthy');
    },
  );

  test.concurrent(
    'a mirror without the image is reported with the reference spec.image named, and a ref that exists supersedes the wait',
    async () => {
      const ns = await freshNamespace(h, 'mirror');
      const startedAt = Date.now();
      await createCluster(h, ns, 'mi', {
        replicas: 1,
        image: { repository: 'registry.invalid/mirror/etcd' },
      });
      const c = await reported(ns, 'mi', 'Degraded', 'ImagePullFailed', startedAt);
      expect(condition(c, 'Degraded')?.message).toContain(
        'Pod mi-0 cannot pull image "registry.invalid/mirror/etcd:v3.6.16"',
      );
      // A whole reference, used as given (the image every stack has). A merge patch keeps fields it does not name,
      // so the repository is removed in the same edit (the apiserver refuses both at once).
      await patchSpec(h, ns, 'mi', {
        image: { repository: null, ref: 'quay.io/coreos/etcd:v3.6.16' },
      } as never);
      const done = await waitConverged(h, ns, 'mi', 1);
      expect(done.status?.members?.[0]?.version).toBe('3.6.16');
      const pod = await h.core.readNamespacedPod({ namespace: ns, name: 'mi-0' });
      expect(pod.spec?.containers.find((x) => x.name === 'etcd')?.image).toBe('quay.io/coreos/etcd:v3.6.16');
    },
  );

  test.concurrent(
    'an unsupported version (3.6.99) is told once and costs nothing while it stays',
    async () => {
      const ns = await freshNamespace(h, 'unsup');
      const startedAt = Date.now();
      await createCluster(h, ns, 'un', { replicas: 1, version: '3.6.99' });
      const c = await reported(ns, 'un', 'Progressing', 'UnsupportedVersion', startedAt);
      expect(condition(c, 'Progressing')?.message).toContain('spec.version 3.6.99 names no etcd release');
      await eventually('the UnsupportedVersion Event', async () =>
        (await eventsFor(ns, 'un', 'UnsupportedVersion')).length > 0 ? true : undefined,
      );
      // Before issue 15 the cluster workflow observed every 5 s (~132 history events a minute). One wake-up of the
      // workflow (a workflow task, 3-4 events) is allowed: a CI run at load ~14 saw +3 in the minute, no status write.
      await expectQuiet(ns, 'un', [`etcdcluster/${ns}/un`], 4);
      expect(await eventsFor(ns, 'un', 'UnsupportedVersion')).toHaveLength(1);
      expect((await h.core.listNamespacedPod({ namespace: ns })).items).toHaveLength(0);

      await patchSpec(h, ns, 'un', { version: '3.6.16' });
      await waitConverged(h, ns, 'un', 1);
    },
  );

  test.concurrent('a major version change (4.0.0) is refused with one message', async () => {
    const ns = await freshNamespace(h, 'major');
    await createCluster(h, ns, 'mj', { replicas: 1, version: '3.6.16' });
    const refusal = await patchSpec(h, ns, 'mj', { version: '4.0.0' }).then(
      () => undefined,
      (err: unknown) => err as { code?: number; body?: string; message?: string },
    );
    expect(refusal?.code).toBe(422);
    const status = JSON.parse(String(refusal?.body ?? '{}')) as {
      details?: { causes?: { field?: string; message?: string }[] };
    };
    const causes = status.details?.causes ?? [];
    // One violation: no second, contradictory message about minors.
    expect(causes).toHaveLength(1);
    expect(causes[0]?.field).toBe('spec.version');
    expect(causes[0]?.message).toContain('version 3.6.16 -> 4.0.0 changes the major version');
    expect((await getCluster(h, ns, 'mj')).spec.version).toBe('3.6.16');
  });

  test.concurrent(
    'an etcd that crash-loops is reported with its exit, and a fixed spec replaces the seed',
    async () => {
      const ns = await freshNamespace(h, 'crash');
      const startedAt = Date.now();
      // An option etcd cannot parse: the process exits at once, every time.
      await createCluster(h, ns, 'cr', { replicas: 1, options: { 'snapshot-count': 'not-a-number' } });
      const c = await reported(ns, 'cr', 'Degraded', 'MemberCrashLooping', startedAt);
      expect(condition(c, 'Degraded')?.message).toMatch(/^Pod cr-0: etcd keeps exiting/);
      await eventually('the MemberCrashLooping Event', async () =>
        (await eventsFor(ns, 'cr', 'MemberCrashLooping')).length > 0 ? true : undefined,
      );
      await patchSpec(h, ns, 'cr', { options: { 'snapshot-count': '10000' } });
      await waitConverged(h, ns, 'cr', 1);
      expect(await eventsFor(ns, 'cr', 'MemberCrashLooping')).toHaveLength(1);
    },
  );

  test.concurrent(
    "a Pod the scheduler cannot place is reported in the scheduler's words, and smaller requests replace it",
    async () => {
      const ns = await freshNamespace(h, 'sched');
      const startedAt = Date.now();
      await createCluster(h, ns, 'sc', { replicas: 1, resources: { requests: { cpu: '500' } } });
      const c = await reported(ns, 'sc', 'Degraded', 'PodUnschedulable', startedAt);
      expect(condition(c, 'Degraded')?.message).toMatch(/^Pod sc-0 cannot be scheduled: .*cpu/);
      await eventually('the PodUnschedulable Event', async () =>
        (await eventsFor(ns, 'sc', 'PodUnschedulable')).length > 0 ? true : undefined,
      );
      await patchSpec(h, ns, 'sc', { resources: { requests: { cpu: '100m' } } });
      await waitConverged(h, ns, 'sc', 1);
    },
  );

  test.concurrent(
    'a scale-up whose joining member is frozen writes no status while it waits, and its histories grow slowly',
    async () => {
      const ns = await freshNamespace(h, 'frozen');
      await createCluster(h, ns, 'fz', { replicas: 1 });
      await waitConverged(h, ns, 'fz', 1);
      const faults = containerFaults(h);
      // The joiner must be frozen while it is still a learner: frozen after its promotion it is a voter, and a
      // frozen voter of two takes quorum (status is then rightly rewritten). On a slow machine the learner can
      // catch up and be promoted between its Pod running and the freeze; then the joiner is thawed, the cluster
      // settles, and the next scale-up's joiner is tried (its voters keep quorum without it). At most 3 tries.
      let joiner = '';
      let frozenAt = 0;
      for (let replicas = 2; !joiner; replicas++) {
        if (replicas > 4) throw new Error('every joiner was promoted before it could be frozen');
        const candidate = `fz-${replicas - 1}`;
        await patchSpec(h, ns, 'fz', { replicas });
        await eventually(
          `the joining member ${candidate} runs`,
          async () => {
            const pod = await h.core
              .readNamespacedPod({ namespace: ns, name: candidate })
              .catch(() => undefined);
            return pod?.status?.phase === 'Running' ? pod : undefined;
          },
          120_000,
          100,
        );
        await faults.freezeContainer(ns, candidate, 'etcd');
        frozenAt = Date.now();
        const role = await memberRole({ namespace: ns, name: 'fz' }, 'fz-0', candidate);
        if (role === 'learner') joiner = candidate;
        else {
          console.log(
            `frozen joiner: ${candidate} was ${role} when frozen; thawing it and trying the next joiner`,
          );
          await faults.thawContainer(ns, candidate, 'etcd');
          await waitConverged(h, ns, 'fz', replicas, 300_000);
        }
      }
      try {
        const op = await eventually('the scale-up waits on its learner', async () => {
          const c = await getCluster(h, ns, 'fz');
          return c.status?.currentOperation?.step?.startsWith('wait (')
            ? c.status.currentOperation
            : undefined;
        });
        const seenAt = Date.now();
        // The kubelet restarts a frozen container whose startup probe had passed before the freeze: its liveness
        // probe (every 10 s, 5 s timeout, 6 failures) kills it from about 55 s after the freeze, and the restarted
        // learner catches up and is promoted (Session 23's CI rehearsal: the operation ended 96 s after the freeze,
        // inside the window). Before its startup probe passed, that probe (300 failures) holds it for 300 s. Whether
        // the freeze came first is a race with the kubelet; the status says which (a frozen process passes no probe).
        await new Promise((r) => setTimeout(r, 2000));
        const startedBeforeFreeze = await containerStarted(ns, joiner);
        // Let the step settle (its close watch of a starting member lasts 30 s from when the wait began), then watch
        // as issue 15 did (17 status writes and +289 / +170 history events in 120 s then): 120 s, or, when the
        // liveness probe will restart the joiner, until 48 s after the freeze.
        await new Promise((r) => setTimeout(r, Math.max(0, seenAt + 31_000 - Date.now())));
        const windowMs = startedBeforeFreeze ? Math.max(0, frozenAt + 48_000 - Date.now()) : 120_000;
        const before = await getCluster(h, ns, 'fz');
        const ids = [op.workflowId, `etcdcluster/${ns}/fz`];
        const lengths = ids.map(historyLength);
        await new Promise((r) => setTimeout(r, windowMs));
        const after = await getCluster(h, ns, 'fz');
        const grown = ids.map((id, i) => historyLength(id) - (lengths[i] ?? 0));
        console.log(
          `frozen joiner ${joiner} (startup probe ${startedBeforeFreeze ? 'passed' : 'pending'} at the freeze), ${Math.round(windowMs / 1000)} s: resourceVersion ${before.metadata.resourceVersion} -> ${after.metadata.resourceVersion}; operation +${grown[0]} events, cluster workflow +${grown[1]}; step "${after.status?.currentOperation?.step ?? ''}"`,
        );
        // Still waiting on the same joiner: no restart ended the freeze inside the window.
        expect(after.status?.currentOperation?.step).toMatch(/^wait \(/);
        expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
        // The growth bounds are for the whole 120 s (back-off: most of the looks come early in a window).
        if (!startedBeforeFreeze) {
          expect(grown[0]).toBeLessThanOrEqual(100);
          expect(grown[1]).toBeLessThanOrEqual(20);
        }
      } finally {
        await faults.thawContainer(ns, joiner, 'etcd');
      }
      await waitConverged(h, ns, 'fz', Number(joiner.slice('fz-'.length)) + 1, 300_000);
    },
  );

  test.concurrent(
    'a claim on a StorageClass that does not exist yet is reported, and creating the class lets the cluster start by itself',
    async () => {
      const ns = await freshNamespace(h, 'claim');
      // Cluster-scoped, named after the namespace, deleted at the end (the stack's provisioners serve any class
      // that names them, as a user's would).
      const className = `later-${ns}`;
      const storage = h.kc.makeApiClient(StorageV1Api);
      // A class left by an interrupted run would make the claim bind at once.
      await storage.deleteStorageClass({ name: className }).catch(() => undefined);
      const startedAt = Date.now();
      await createCluster(h, ns, 'cl', {
        replicas: 1,
        storage: { size: '1Gi', medium: '', storageClassName: className },
      });
      try {
        const c = await reported(ns, 'cl', 'Degraded', 'ClaimPending', startedAt);
        expect(condition(c, 'Degraded')?.message).toBe(
          `claim data-cl-0 is Pending: StorageClass "${className}" does not exist`,
        );
        await eventually('the ClaimPending Event', async () =>
          (await eventsFor(ns, 'cl', 'ClaimPending')).length > 0 ? true : undefined,
        );
        // The fix is outside the spec (the class is immutable there): once it exists, the claim binds and the
        // waiting Bootstrap goes on by itself. The stack's host provisioner makes the volume on the node the
        // scheduler picks.
        await storage.createStorageClass({
          body: {
            metadata: { name: className },
            provisioner: LOCAL_PATH_PROVISIONER,
            volumeBindingMode: 'WaitForFirstConsumer',
          },
        });
        await waitConverged(h, ns, 'cl', 1);
        expect(await eventsFor(ns, 'cl', 'ClaimPending')).toHaveLength(1);
      } finally {
        await storage.deleteStorageClass({ name: className }).catch(() => undefined);
      }
    },
  );
});
