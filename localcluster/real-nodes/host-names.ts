// The machine itself resolves the cluster's Service names: a managed block of /etc/hosts (the stack's own, removed on
// stop and by `down`) maps `<svc>.<ns>.svc[.cluster.local]` to the ClusterIP (routed through node-a's kube-proxy) and
// headless per-Pod names to Pod IPs. The Pods themselves use CoreDNS.
import { CoreV1Api, DiscoveryV1Api, KubeConfig } from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { renderHostsBlock, spliceHostsBlock, type HostEntry } from './hosts-block';

/** Names a stack's block in /etc/hosts; derived from the state folder so `down` finds it without the daemon. */
export function hostsStackId(stateDir: string): string {
  return createHash('sha256').update(stateDir).digest('hex').slice(0, 12);
}

export interface ServiceFacts {
  namespace: string;
  name: string;
  clusterIp: string | undefined;
}
export interface SliceFacts {
  namespace: string;
  service: string;
  endpoints: Array<{ hostname: string | undefined; addresses: string[] }>;
}

const namesOf = (name: string, namespace: string) => [
  `${name}.${namespace}.svc`,
  `${name}.${namespace}.svc.cluster.local`,
];

/** Pure: the host entries for the cluster's Services and the headless ones' named endpoints. */
export function hostEntries(services: ServiceFacts[], slices: SliceFacts[]): HostEntry[] {
  const entries: HostEntry[] = [];
  const headless = new Set<string>();
  for (const s of services) {
    if (s.clusterIp && s.clusterIp !== 'None') {
      for (const name of namesOf(s.name, s.namespace)) entries.push({ ip: s.clusterIp, name });
    } else headless.add(`${s.namespace}/${s.name}`);
  }
  for (const slice of slices) {
    if (!headless.has(`${slice.namespace}/${slice.service}`)) continue;
    for (const e of slice.endpoints) {
      const ip = e.addresses[0];
      if (!ip || !e.hostname) continue;
      for (const name of namesOf(`${e.hostname}.${slice.service}`, slice.namespace))
        entries.push({ ip, name });
    }
  }
  return entries;
}

/**
 * Puts this stack's block into the hosts file as it is now; writes (by rename) only when the file differs. Every
 * stack on the machine splices its own block by read-modify-rename, so one stack's write can carry another's older
 * block back: callers run this on every poll, not only when their own block changed, so a lost block is restored
 * within a poll.
 */
export function writeHostsBlock(hostsPath: string, stackId: string, block: string | undefined): void {
  const current = readFileSync(hostsPath, 'utf8');
  const next = spliceHostsBlock(current, stackId, block);
  if (next === current) return;
  const tmp = join(dirname(hostsPath), `.hosts.${stackId}.${process.pid}.tmp`);
  writeFileSync(tmp, next, { mode: 0o644 });
  renameSync(tmp, hostsPath);
}

/** For `down` after a crash: drops the stack's /etc/hosts block that a dead daemon could not remove. */
export function removeHostsBlock(stateDir: string, hostsPath = '/etc/hosts'): void {
  writeHostsBlock(hostsPath, hostsStackId(stateDir), undefined);
}

/**
 * Polls Services and EndpointSlices every second (bounded: it stops with the stack) and rewrites the block whenever
 * the file's differs.
 */
export function startHostNames(opts: {
  kubeconfig: string;
  stateDir: string;
  log: (line: string) => void;
  hostsPath?: string;
}): { stop(): Promise<void> } {
  const kc = new KubeConfig();
  kc.loadFromFile(opts.kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  const discovery = kc.makeApiClient(DiscoveryV1Api);
  const stackId = hostsStackId(opts.stateDir);
  const hostsPath = opts.hostsPath ?? '/etc/hosts';
  let stopped = false;
  const sync = async () => {
    const [services, slices] = await Promise.all([
      core.listServiceForAllNamespaces(),
      discovery.listEndpointSliceForAllNamespaces(),
    ]);
    const entries = hostEntries(
      services.items.map((s) => ({
        namespace: s.metadata?.namespace ?? '',
        name: s.metadata?.name ?? '',
        clusterIp: s.spec?.clusterIP,
      })),
      slices.items.map((s) => ({
        namespace: s.metadata?.namespace ?? '',
        service: s.metadata?.labels?.['kubernetes.io/service-name'] ?? '',
        endpoints: (s.endpoints ?? []).map((e) => ({ hostname: e.hostname, addresses: e.addresses })),
      })),
    );
    // Compared with the file, not with what this stack wrote last: another stack's write may have undone it.
    if (!stopped) writeHostsBlock(hostsPath, stackId, renderHostsBlock(stackId, entries));
  };
  const loop = (async () => {
    while (!stopped) {
      await sync().catch((e: unknown) =>
        opts.log(`host names: ${e instanceof Error ? e.message : String(e)}`),
      );
      await new Promise((r) => setTimeout(r, 1000));
    }
  })();
  opts.log(
    `real nodes: cluster Service names resolve on this machine through the "${stackId}" block of ${hostsPath}`,
  );
  return {
    async stop() {
      stopped = true;
      await loop;
      writeHostsBlock(hostsPath, stackId, undefined);
    },
  };
}
