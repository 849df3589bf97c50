// Bench section "upgrade": a rolling 3.5 -> 3.6 upgrade of 3 members, then the downgrade back to 3.5, each under a steady client write load; prints total time, failed client writes and the longest gap between acknowledged writes.
//
// The write load (startWriteLoad) is also what test/upgrade/upgrade.test.ts drives during its upgrade.
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { Etcd3 } from 'etcd3';
import type { IOptions } from 'etcd3';
import type { EtcdCluster } from '../crds/etcd-cluster';
import { clusterClientEndpoint } from '../crds/names';
import { benchStack, clusterCrd as crd, createEtcdCluster, until } from './bench-stack';
import type { BenchSection, Figure } from './section';
import { createWorkloadNamespace } from '../localcluster/workload-namespace';

export const UPGRADE_FROM = '3.5.35';
export const UPGRADE_TO = '3.6.16';

export interface WriteLoadReport {
  /** Every key a put was acknowledged for, with its value. */
  acknowledged: Map<string, string>;
  /** Attempts that failed (each retried with a new key, so a failed attempt's key may or may not exist). */
  failedAttempts: number;
  /** Writes that never succeeded within their retries. */
  failedWrites: number;
  /** The longest time between two acknowledged writes, in ms. */
  longestGapMs: number;
}

export interface WriteLoad {
  stop(): Promise<WriteLoadReport>;
}

/**
 * One client writing unique keys `<prefix>/<seq>-<attempt>` every `intervalMs` through the cluster's client
 * Service, each write retried (with a new key) up to `retries` times. A key is never reused, so an attempt
 * that failed but committed anyway shows up as an extra key, never as a wrong value.
 */
export function startWriteLoad(input: {
  namespace: string;
  name: string;
  prefix: string;
  intervalMs?: number;
  retries?: number;
  /** For a cluster with spec.tls.client and/or spec.auth: TLS credentials and root's password. */
  secure?: Pick<IOptions, 'credentials' | 'auth'>;
  /**
   * TLS client options, asked before each write: a different answer (a new trust bundle, a reissued client
   * certificate) reconnects with it, as an application that reloads its certificate files does.
   */
  credentials?: () => IOptions['credentials'];
}): WriteLoad {
  const { prefix } = input;
  const interval = input.intervalMs ?? 50;
  const retries = input.retries ?? 20;
  const open = (credentials: IOptions['credentials']) =>
    new Etcd3({
      // The client library takes TLS from the credentials, whatever the URL's scheme.
      hosts: [clusterClientEndpoint({ namespace: input.namespace, name: input.name })],
      ...input.secure,
      dialTimeout: 2000,
      defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + 2000 }),
      ...(credentials ? { credentials } : {}),
    });
  let using = input.credentials?.();
  let client = open(using);
  const report: WriteLoadReport = {
    acknowledged: new Map(),
    failedAttempts: 0,
    failedWrites: 0,
    longestGapMs: 0,
  };
  let stopped = false;
  let lastSuccess = Date.now();
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const loop = (async () => {
    for (let seq = 0; !stopped; seq++) {
      let ok = false;
      for (let attempt = 0; attempt <= retries && !ok && !stopped; attempt++) {
        const key = `${prefix}/${String(seq).padStart(6, '0')}-${attempt}`;
        const value = `${seq}:${attempt}`;
        const wanted = input.credentials?.();
        if (wanted !== using) {
          client.close();
          client = open((using = wanted));
        }
        try {
          await client.put(key).value(value);
          const now = Date.now();
          report.longestGapMs = Math.max(report.longestGapMs, now - lastSuccess);
          lastSuccess = now;
          report.acknowledged.set(key, value);
          ok = true;
        } catch {
          report.failedAttempts += 1;
          await pause(100);
        }
      }
      if (!ok && !stopped) report.failedWrites += 1;
      await pause(interval);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      client.close();
      return report;
    },
  };
}

export const upgradeSection: BenchSection = {
  name: 'upgrade',
  async run(log) {
    const { core, custom } = benchStack(log);
    const namespace = `bench-up-${Date.now().toString(36)}`;
    const name = 'u';
    await createWorkloadNamespace(core, namespace);
    const get = async () =>
      (await custom.getNamespacedCustomObject({ ...crd, namespace, name })) as EtcdCluster;
    const convergedOn = (version: string) =>
      until(
        `3 ready voters on ${version}`,
        async () => {
          const c = await get();
          const s = c.status;
          const ok =
            s?.observedGeneration === c.metadata.generation &&
            s?.readyReplicas === 3 &&
            (s?.members?.length ?? 0) === 3 &&
            s.members?.every((m) => m.version === version) &&
            !s?.currentOperation;
          return ok ? c : undefined;
          // A downgrade waits for etcd to lower the storage version before it rolls anyone: allow it as long as the e2e test does.
        },
        900_000,
      );
    try {
      await createEtcdCluster(custom, namespace, name, { replicas: 3, version: UPGRADE_FROM });
      await convergedOn(UPGRADE_FROM);
      /** Moves every member to `to` under a write load; the figures of one rolling change. */
      const roll = async (label: string, to: string, prefix: string): Promise<Figure[]> => {
        const load = startWriteLoad({ namespace, name, prefix });
        // A few seconds of writes before the change, so the gap figure includes steady-state behaviour.
        await new Promise((r) => setTimeout(r, 3000));
        const t0 = performance.now();
        await custom.patchNamespacedCustomObject(
          { ...crd, namespace, name, body: { spec: { version: to } } },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
        const done = await convergedOn(to);
        const seconds = (performance.now() - t0) / 1000;
        const report = await load.stop();
        log(`${label}: ${done.status?.lastOperation?.type} ${done.status?.lastOperation?.result}`);
        return [
          { name: `rolling ${label}, 3 members`, value: seconds, unit: 's' },
          {
            name: `${label}: failed client writes (after retries)`,
            value: report.failedWrites,
            unit: '',
            note: `target 0; ${report.failedAttempts} attempts retried; ${report.acknowledged.size} acknowledged`,
          },
          {
            name: `${label}: longest gap between acknowledged writes`,
            value: report.longestGapMs / 1000,
            unit: 's',
            note: 'target < 2 s',
          },
        ];
      };
      return [
        ...(await roll(`upgrade ${UPGRADE_FROM} -> ${UPGRADE_TO}`, UPGRADE_TO, '/bench-upgrade')),
        // Back down through etcd's downgrade API (validate, enable, wait for the cluster version, roll).
        ...(await roll(`downgrade ${UPGRADE_TO} -> ${UPGRADE_FROM}`, UPGRADE_FROM, '/bench-downgrade')),
      ] satisfies Figure[];
    } finally {
      await core.deleteNamespace({ name: namespace }).catch(() => undefined);
    }
  },
};
