// One run of the operator bench: bootstrap, scale 3 -> 5 -> 3 and a member Pod deleted, each timed to what etcd says (member list, members answering) and to what the status says.
import type { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { EtcdCluster } from '../crds/etcd-cluster';
import { Labels } from '../crds/labels';
import { clusterCrd as crd, createEtcdCluster, scaleEtcdCluster, until } from './bench-stack';
import { answers, membershipIs, preload, votersAnswering } from './etcd-answers';
import { ETCD_HEALTH_INTERVAL_MS, POLL_MS } from './floor';

/** Seconds per step of one run, each from the spec change (or the Pod deletion). */
export interface OperatorTimes {
  createEtcd: number;
  createStatus: number;
  scaleUpEtcd: number;
  scaleUpStatus: number;
  scaleDownMembership: number;
  scaleDownStatus: number;
  healHealthy: number;
  /** The replacement Pod's Ready condition: what the operator sees of a healed member (kubelet's readiness probe). */
  healPodReady: number;
  healStatus: number;
}

const elapsed = (t0: number) => (performance.now() - t0) / 1000;
const TIMEOUT_MS = 300_000;

export async function runOperator(
  core: CoreV1Api,
  custom: CustomObjectsApi,
  namespace: string,
  name: string,
): Promise<{ times: OperatorTimes; cluster: EtcdCluster; image: string }> {
  const get = async () =>
    (await custom.getNamespacedCustomObject({ ...crd, namespace, name })) as EtcdCluster;
  const pods = async () =>
    (await core.listNamespacedPod({ namespace, labelSelector: `${Labels.cluster}=${name}` })).items;
  const podIPs = async () => (await pods()).flatMap((p) => (p.status?.podIP ? [p.status.podIP] : []));
  // Status done: the spec observed, n ready voters, no operation running, Available.
  const converged = (n: number, also: (c: EtcdCluster) => boolean = () => true) =>
    until(
      `status: ${n} ready voters`,
      async () => {
        const c = await get();
        const s = c.status;
        const ok =
          s?.observedGeneration === c.metadata.generation &&
          s?.readyReplicas === n &&
          (s?.members?.length ?? 0) === n &&
          !s?.currentOperation &&
          s?.conditions?.some((x) => x.type === 'Available' && x.status === 'True') &&
          also(c);
        return ok ? c : undefined;
      },
      TIMEOUT_MS,
      POLL_MS,
    );
  // etcd done: n voters listed and every member's Pod answering a linearizable read.
  const etcdDone = (n: number) =>
    until(
      `etcd: ${n} voters answering`,
      async () => ((await votersAnswering(await podIPs(), n)) ? true : undefined),
      TIMEOUT_MS,
      POLL_MS,
    );
  // Membership: a linearizable member list (through the leader) of n members, from whichever Pod answers.
  const membership = (n: number) =>
    until(
      `etcd: membership ${n}`,
      async () => ((await membershipIs(await podIPs(), n)) ? true : undefined),
      TIMEOUT_MS,
      POLL_MS,
    );
  const scale = (replicas: number) => scaleEtcdCluster(custom, namespace, name, replicas);
  /** Times each check from one start: seconds, one per check, in their order. */
  const timed = async <C extends Array<() => Promise<unknown>>>(
    start: () => Promise<unknown>,
    ...checks: C
  ): Promise<{ [K in keyof C]: number }> => {
    const t0 = performance.now();
    await start();
    const seconds = await Promise.all(checks.map((check) => check().then(() => elapsed(t0))));
    return seconds as { [K in keyof C]: number };
  };

  const [createEtcd, createStatus] = await timed(
    () => createEtcdCluster(custom, namespace, name, { replicas: 3 }),
    () => etcdDone(3),
    () => converged(3),
  );
  // A scale of a cluster in use: its new members get a snapshot, as the floor's do (PRELOAD_ENTRIES). Not timed.
  const [firstIP] = await podIPs();
  if (!firstIP) throw new Error(`${namespace}/${name}: no member Pod has an address after the create`);
  await preload(firstIP);
  // A cluster in use is older than etcd's health interval, which refuses a new member while a peer link is younger
  // (the operator asks again within its step): waited out untimed, as the floor does, so that the scale is timed on
  // the cluster users scale, not on one a few seconds old.
  await new Promise((r) => setTimeout(r, ETCD_HEALTH_INTERVAL_MS));
  const [scaleUpEtcd, scaleUpStatus] = await timed(
    () => scale(5),
    () => etcdDone(5),
    () => converged(5),
  );
  const [scaleDownMembership, scaleDownStatus] = await timed(
    () => scale(3),
    () => membership(3),
    () => converged(3),
  );

  const victim = (await get()).status?.members?.find((m) => !m.leader)?.name ?? `${name}-0`;
  const oldUid = (await core.readNamespacedPod({ namespace, name: victim })).metadata?.uid;
  // The replacement: a Pod of the victim's name that is not the deleted one.
  const replacement = async () => {
    const p = await core.readNamespacedPod({ namespace, name: victim });
    return p.metadata?.uid !== oldUid ? p : undefined;
  };
  const podReady = () =>
    until(
      `${victim} replaced, its Pod Ready`,
      async () => {
        const p = await replacement();
        return p?.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True')
          ? true
          : undefined;
      },
      TIMEOUT_MS,
      POLL_MS,
    );
  const [healHealthy, healPodReady, healStatus] = await timed(
    () => core.deleteNamespacedPod({ namespace, name: victim, gracePeriodSeconds: 0 }),
    () =>
      until(
        `${victim} healthy`,
        async () => {
          const ip = (await replacement())?.status?.podIP;
          return ip && (await answers(ip)) ? true : undefined;
        },
        TIMEOUT_MS,
        POLL_MS,
      ),
    podReady,
    () =>
      podReady().then(() =>
        converged(3, (c) => c.status?.members?.find((m) => m.name === victim)?.ready === true),
      ),
  );

  const cluster = await get();
  const image = (await pods())[0]?.spec?.containers.find((c) => c.name === 'etcd')?.image ?? '';
  return {
    times: {
      createEtcd,
      createStatus,
      scaleUpEtcd,
      scaleUpStatus,
      scaleDownMembership,
      scaleDownStatus,
      healHealthy,
      healPodReady,
      healStatus,
    },
    cluster,
    image,
  };
}
