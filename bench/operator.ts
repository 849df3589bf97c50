// Bench section "operator": how long the operator takes to bootstrap, scale and heal a cluster on the local stack, and what an idle cluster costs.
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { API_VERSION, ETCD_CLUSTER } from '../crds/etcd-cluster';
import type { EtcdCluster } from '../crds/etcd-cluster';
import { benchStack, clusterCrd as crd, until } from './bench-stack';
import type { BenchSection, Figure } from './section';

export const operatorSection: BenchSection = {
  name: 'operator',
  async run(log) {
    const { core, custom } = benchStack(log);
    const namespace = `bench-${Date.now().toString(36)}`;
    const name = 'b';
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    const get = async () =>
      (await custom.getNamespacedCustomObject({ ...crd, namespace, name })) as EtcdCluster;
    const converged = (n: number) =>
      until(`${n} ready voters`, async () => {
        const c = await get();
        const s = c.status;
        const ok =
          s?.observedGeneration === c.metadata.generation &&
          s?.readyReplicas === n &&
          (s?.members?.length ?? 0) === n &&
          !s?.currentOperation &&
          s?.conditions?.some((x) => x.type === 'Available' && x.status === 'True');
        return ok ? c : undefined;
      });
    const scale = async (replicas: number) =>
      custom.patchNamespacedCustomObject(
        { ...crd, namespace, name, body: { spec: { replicas } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    const timed = async (fn: () => Promise<unknown>) => {
      const t0 = performance.now();
      await fn();
      return (performance.now() - t0) / 1000;
    };

    const figures: Figure[] = [];
    try {
      const apply = await timed(async () => {
        await custom.createNamespacedCustomObject({
          ...crd,
          namespace,
          body: {
            apiVersion: API_VERSION,
            kind: ETCD_CLUSTER.kind,
            metadata: { name, namespace },
            spec: { replicas: 3 },
          },
        });
        await converged(3);
      });
      figures.push({ name: 'apply -> Available, 3 members', value: apply, unit: 's', note: 'target < 10 s' });
      figures.push({
        name: 'scale 3 -> 5',
        value: await timed(() => scale(5).then(() => converged(5))),
        unit: 's',
        note: 'target < 10 s',
      });
      figures.push({
        name: 'scale 5 -> 3',
        value: await timed(() => scale(3).then(() => converged(3))),
        unit: 's',
        note: 'target < 5 s',
      });

      const victim = (await get()).status?.members?.find((m) => !m.leader)?.name ?? `${name}-0`;
      const heal = await timed(async () => {
        await core.deleteNamespacedPod({ namespace, name: victim, gracePeriodSeconds: 0 });
        await until(
          'the Pod is replaced',
          async () => {
            const c = await get();
            return c.status?.readyReplicas !== 3 ? c : undefined;
          },
          30_000,
        ).catch(() => undefined);
        await converged(3);
      });
      figures.push({ name: 'killed member Pod -> all ready', value: heal, unit: 's', note: 'target < 10 s' });

      const before = (await get()).metadata.resourceVersion;
      const idleMs = 60_000;
      let writes = 0;
      let last = before;
      const t0 = Date.now();
      while (Date.now() - t0 < idleMs) {
        await new Promise((r) => setTimeout(r, 1000));
        const rv = (await get()).metadata.resourceVersion;
        if (rv !== last) writes += 1;
        last = rv;
      }
      figures.push({ name: 'idle cluster: status writes', value: writes, unit: '/min', note: 'target 0' });
    } finally {
      await core.deleteNamespace({ name: namespace }).catch(() => undefined);
    }
    return figures;
  },
};
