// The floor of the operator bench: each step the operator takes, done by the bench itself on bare Pods (floor-manifests.ts) with the least the platform and etcd allow: Pods created in parallel, voters added and removed by direct etcd calls.
import type { CoreV1Api, V1PersistentVolumeClaim, V1Pod, V1Service } from '@kubernetes/client-node';
import { initialCluster } from '../activities/member-manifests';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import { memberPeerURL } from '../crds/names';
import { until } from './bench-stack';
import { answers, memberAdd, memberList, memberRemove, preload } from './etcd-answers';
import { floorClaim, floorPeerService, floorPod } from './floor-manifests';

/** Seconds per step; one run. */
export interface FloorTimes {
  /** 3 Pods and claims created at once, a static --initial-cluster: all Ready (start and election). */
  bootstrap: number;
  /** 2 voters added one after the other (etcd member add, then the Pod with state existing, to Ready). */
  join: number;
  /** Each joining Pod, created -> Ready and answering. */
  podReady: number[];
  /** 2 voters removed (etcd member remove) until the member list says 3. */
  remove: number;
  /** A member's Pod deleted (grace 0) and created again by the bench on the same claim, to Ready. */
  heal: number;
  /** How often etcd refused a member add or remove as "unhealthy cluster" and the floor asked again (in the log only). */
  refusals: number;
}

export const POLL_MS = 50;
const FLOOR_CLUSTER = 'f';

const elapsed = (t0: number) => (performance.now() - t0) / 1000;
const isReady = (p: V1Pod) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');

/**
 * The Pod `name` once Ready (and, with `notUid`, once it is a new Pod, not that one) and its etcd answering a
 * linearizable read on its client port: "done" as the operator's figures take it. The two differ for a member fed a
 * snapshot: its metrics port's /readyz (the readiness probe) passes while its client port still waits for its own
 * `publish` (docs/local-cluster.md, "Joining by snapshot").
 */
export async function podAnswering(
  core: CoreV1Api,
  namespace: string,
  name: string,
  notUid?: string,
): Promise<V1Pod> {
  const pod = await until(
    `${namespace}/${name} Ready`,
    async () => {
      const p = await core.readNamespacedPod({ namespace, name });
      return isReady(p) && p.metadata?.uid !== notUid && p.status?.podIP ? p : undefined;
    },
    180_000,
    POLL_MS,
  );
  const ip = pod.status?.podIP ?? '';
  await until(
    `${namespace}/${name} answering`,
    async () => ((await answers(ip)) ? true : undefined),
    180_000,
    POLL_MS,
  );
  return pod;
}

export async function measureFloor(
  core: CoreV1Api,
  namespace: string,
  spec: EtcdClusterSpec,
  image: string,
): Promise<FloorTimes> {
  const cluster = FLOOR_CLUSTER;
  const [m0, m1, m2, m3, m4] = ['f-0', 'f-1', 'f-2', 'f-3', 'f-4'] as const;
  const peers = (ms: string[]) =>
    initialCluster(ms.map((name) => ({ name, peerURL: memberPeerURL({ namespace, name: cluster }, name) })));
  const pod = (member: string, state: 'new' | 'existing', members: string[]) =>
    floorPod({
      namespace,
      cluster,
      spec,
      image,
      member,
      initialClusterState: state,
      initialCluster: peers(members),
    });
  const start = async (member: string, state: 'new' | 'existing', members: string[]) => {
    await core.createNamespacedPersistentVolumeClaim({
      namespace,
      body: floorClaim({ namespace, cluster, spec, member }) as V1PersistentVolumeClaim,
    });
    await core.createNamespacedPod({ namespace, body: pod(member, state, members) as V1Pod });
    return podAnswering(core, namespace, member);
  };

  let t0 = performance.now();
  await core.createNamespacedService({ namespace, body: floorPeerService(namespace, cluster) as V1Service });
  const first: string[] = [m0, m1, m2];
  const started = await Promise.all(first.map((m) => start(m, 'new', first)));
  const bootstrap = elapsed(t0);
  const ip0 = started[0]?.status?.podIP ?? '';
  // Joins are timed on a cluster in use, as the operator's are (PRELOAD_ENTRIES).
  await preload(ip0);

  // etcd refuses a voter change while a member's peer link is younger than its health interval (5 s, strict
  // reconfig check, "unhealthy cluster"): the floor waits it out before timing, as the operator's run does before its
  // scale (bench/operator-run.ts), and retries a refusal within the timing.
  await new Promise((r) => setTimeout(r, ETCD_HEALTH_INTERVAL_MS));
  const refused = { count: 0 };
  t0 = performance.now();
  const podReadyTimes: number[] = [];
  const members = [...first];
  for (const m of [m3, m4]) {
    members.push(m);
    await whileUnhealthy(() => memberAdd(ip0, memberPeerURL({ namespace, name: cluster }, m)), refused);
    const t = performance.now();
    await start(m, 'existing', members);
    podReadyTimes.push(elapsed(t));
  }
  const join = elapsed(t0);

  t0 = performance.now();
  const listed = await memberList(ip0);
  for (const name of [m4, m3]) {
    const id = listed.find((m) => m.name === name)?.id;
    if (id) await whileUnhealthy(() => memberRemove(ip0, id), refused);
  }
  await until(
    'floor membership 3',
    async () => ((await memberList(ip0)).length === 3 ? true : undefined),
    60_000,
    POLL_MS,
  );
  const remove = elapsed(t0);
  for (const m of [m3, m4]) await core.deleteNamespacedPod({ namespace, name: m, gracePeriodSeconds: 0 });

  const old = await core.readNamespacedPod({ namespace, name: m1 });
  t0 = performance.now();
  await core.deleteNamespacedPod({ namespace, name: m1, gracePeriodSeconds: 0 });
  await until(
    `${m1} gone`,
    async () =>
      core.readNamespacedPod({ namespace, name: m1 }).then(
        () => undefined,
        (e: unknown) => ((e as { code?: number }).code === 404 ? true : undefined),
      ),
    60_000,
    POLL_MS,
  );
  await core.createNamespacedPod({ namespace, body: pod(m1, 'new', first) as V1Pod });
  await podAnswering(core, namespace, m1, old.metadata?.uid);
  const heal = elapsed(t0);

  return { bootstrap, join, podReady: podReadyTimes, remove, heal, refusals: refused.count };
}

/** etcd's health interval: how old every peer link must be before it accepts a membership change. */
export const ETCD_HEALTH_INTERVAL_MS = 5000;

/** Runs `fn` again while etcd answers "unhealthy cluster" (bounded), counting the refusals; any other error is thrown. */
async function whileUnhealthy(fn: () => Promise<void>, refused: { count: number }): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      if (!/unhealthy cluster/.test(String(e)) || Date.now() > deadline) throw e;
      refused.count += 1;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }
}

/** Deletes the floor's Pods at once (grace 0) so they cost nothing while the operator is measured. */
export async function removeFloor(core: CoreV1Api, namespace: string): Promise<void> {
  const pods = await core.listNamespacedPod({ namespace });
  await Promise.all(
    (pods.items ?? [])
      .filter((p) => p.metadata?.name?.startsWith(`${FLOOR_CLUSTER}-`))
      .map((p) =>
        core
          .deleteNamespacedPod({ namespace, name: p.metadata?.name ?? '', gracePeriodSeconds: 0 })
          .catch(() => undefined),
      ),
  );
}
