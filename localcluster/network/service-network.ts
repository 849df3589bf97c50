// Once per stack: serves Service names through a managed /etc/hosts block and ClusterIP ports through loopback forwarders; stop() removes both.
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import type { V1Pod, V1Service } from '@kubernetes/client-node';
import { startRestartingInformer } from '../real-nodes/restarting-informer';
import { renderHostsBlock, spliceHostsBlock } from '../real-nodes/hosts-block';
import { isLoopback, planServices } from './service-plan';
import type { ServiceView } from './service-plan';
import { slicesFromPods } from './pod-endpoints';
import type { PodView } from './pod-endpoints';
import { startTcpForwarder } from './tcp-forwarder';
import type { TcpForwarder } from './tcp-forwarder';

export interface ServiceNetworkOptions {
  kubeconfigPath: string;
  /** Names this stack's hosts block; defaults to a hash of stateDir. */
  stackId?: string;
  stateDir?: string;
  /** Loopback address for a ClusterIP Service whose clusterIP is not loopback; without it such Services are skipped. */
  allocateServiceIp?: () => string;
  releaseServiceIp?: (ip: string) => void;
  /** Defaults to /etc/hosts. */
  hostsPath?: string;
  log: (line: string) => void;
}

export interface ServiceNetwork {
  /**
   * Publishes a Pod's address before the apiserver has it (its node calls this before starting containers), so
   * the Pod's own hostname resolves from its first instruction; the Pod's status takes over once it arrives.
   */
  announcePod(pod: V1Pod, ip: string): Promise<void>;
  stop(): Promise<void>;
}

/** An announced address is dropped once the Pod's status carries it, or after this long. */
const ANNOUNCED_TTL_MS = 60_000;

/** The informer's Pods, with announced addresses filled in where the status has none yet. */
export function withAnnounced(
  pods: readonly V1Pod[],
  announced: Map<string, { pod: V1Pod; ip: string; at: number }>,
  now: number,
): V1Pod[] {
  const byUid = new Map(pods.map((p) => [p.metadata?.uid ?? '', p]));
  for (const [uid, a] of announced) {
    const current = byUid.get(uid);
    if (current?.status?.podIP || now - a.at > ANNOUNCED_TTL_MS) announced.delete(uid);
  }
  const out = pods.map((p) => {
    const a = announced.get(p.metadata?.uid ?? '');
    return a ? { ...p, status: { ...p.status, podIP: a.ip } } : p;
  });
  for (const [uid, a] of announced)
    if (!byUid.has(uid)) out.push({ ...a.pod, status: { ...a.pod.status, podIP: a.ip } });
  return out;
}

function serviceView(s: V1Service): ServiceView {
  return {
    namespace: s.metadata?.namespace ?? '',
    name: s.metadata?.name ?? '',
    uid: s.metadata?.uid ?? '',
    clusterIP: s.spec?.clusterIP ?? '',
    type: s.spec?.type ?? 'ClusterIP',
    publishNotReadyAddresses: s.spec?.publishNotReadyAddresses ?? false,
    ...(s.spec?.selector ? { selector: s.spec.selector } : {}),
    ports: (s.spec?.ports ?? []).map((p) => ({
      name: p.name ?? '',
      port: p.port,
      protocol: p.protocol ?? 'TCP',
      ...(p.targetPort !== undefined ? { targetPort: p.targetPort as number | string } : {}),
    })),
  };
}

function podView(p: V1Pod): PodView {
  const namedPorts: Record<string, number> = {};
  for (const c of p.spec?.containers ?? [])
    for (const port of c.ports ?? []) if (port.name) namedPorts[port.name] = port.containerPort;
  return {
    namespace: p.metadata?.namespace ?? '',
    labels: p.metadata?.labels ?? {},
    ...(p.status?.podIP ? { podIP: p.status.podIP } : {}),
    ready: p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
    terminating: Boolean(p.metadata?.deletionTimestamp),
    ...(p.spec?.hostname ? { hostname: p.spec.hostname } : {}),
    ...(p.spec?.subdomain ? { subdomain: p.spec.subdomain } : {}),
    namedPorts,
  };
}

/** Rewrites the hosts file atomically (temp file + rename in the same directory). */
function writeHostsBlock(path: string, stackId: string, block: string | undefined): void {
  const current = readFileSync(path, 'utf8');
  const next = spliceHostsBlock(current, stackId, block);
  if (next === current) return;
  const tmp = join(dirname(path), `.hosts.${stackId}.${process.pid}.tmp`);
  writeFileSync(tmp, next, { mode: 0o644 });
  renameSync(tmp, path);
}

export async function startServiceNetwork(options: ServiceNetworkOptions): Promise<ServiceNetwork> {
  const stackId =
    options.stackId ??
    createHash('sha256')
      .update(options.stateDir ?? options.kubeconfigPath)
      .digest('hex')
      .slice(0, 12);
  const hostsPath = options.hostsPath ?? '/etc/hosts';
  const log = (line: string): void => options.log(`service network: ${line}`);
  const kc = new KubeConfig();
  kc.loadFromFile(options.kubeconfigPath);
  const core = kc.makeApiClient(CoreV1Api);
  const allocated = new Map<string, string>();
  const forwarders = new Map<string, { listen: string; fwd: TcpForwarder }>();
  let lastBlock: string | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const announced = new Map<string, { pod: V1Pod; ip: string; at: number }>();

  const serviceIp = (svc: ServiceView): string | undefined => {
    if (isLoopback(svc.clusterIP)) return svc.clusterIP;
    if (options.allocateServiceIp === undefined) return undefined;
    let ip = allocated.get(svc.uid);
    if (ip === undefined) {
      ip = options.allocateServiceIp();
      allocated.set(svc.uid, ip);
    }
    return ip;
  };

  const reconcile = async (): Promise<void> => {
    if (stopped) return;
    const services = serviceInformer.list().map(serviceView);
    const pods = withAnnounced(podInformer.list(), announced, Date.now()).map(podView);
    const plan = planServices(services, slicesFromPods(services, pods), serviceIp);
    const live = new Set(services.map((s) => s.uid));
    for (const [uid, ip] of allocated) {
      if (live.has(uid)) continue;
      allocated.delete(uid);
      options.releaseServiceIp?.(ip);
    }
    const wanted = new Map(plan.forwarders.map((f) => [f.key, f]));
    for (const [key, f] of forwarders) {
      const w = wanted.get(key);
      if (w === undefined || `${w.listenIp}:${w.listenPort}` !== f.listen) {
        forwarders.delete(key);
        await f.fwd.close();
      }
    }
    for (const f of plan.forwarders) {
      let entry = forwarders.get(f.key);
      if (entry === undefined) {
        try {
          entry = {
            listen: `${f.listenIp}:${f.listenPort}`,
            fwd: await startTcpForwarder(f.listenIp, f.listenPort, log),
          };
          forwarders.set(f.key, entry);
        } catch (e) {
          log(
            `cannot forward ${f.key} on ${f.listenIp}:${f.listenPort}: ${e instanceof Error ? e.message : String(e)}`,
          );
          continue;
        }
      }
      entry.fwd.setTargets(f.targets);
    }
    const block = renderHostsBlock(stackId, plan.hosts);
    if (block !== lastBlock) {
      writeHostsBlock(hostsPath, stackId, block);
      lastBlock = block;
    }
  };
  // At most 100 ms after the first event, not after the last: a steady stream of Pod events (many clusters
  // changing) must not hold routing to a stopped Pod back.
  const schedule = (): void => {
    if (stopped || timer !== undefined) return;
    timer = setTimeout(() => {
      timer = undefined;
      running = running
        .then(reconcile)
        .catch((e: unknown) => log(`reconcile failed: ${e instanceof Error ? e.message : String(e)}`));
    }, 100);
  };
  const serviceInformer = startRestartingInformer<V1Service>({
    kc,
    path: '/api/v1/services',
    list: () => core.listServiceForAllNamespaces(),
    onEvent: schedule,
    log,
  });
  // Endpoints come from Pods, not EndpointSlices: the apiserver refuses loopback addresses in EndpointSlices.
  const podInformer = startRestartingInformer<V1Pod>({
    kc,
    path: '/api/v1/pods',
    list: () => core.listPodForAllNamespaces(),
    onEvent: schedule,
    log,
  });
  const resync = setInterval(schedule, 30_000);
  log(`managing the "${stackId}" block of ${hostsPath}`);
  return {
    announcePod: async (pod, ip) => {
      announced.set(pod.metadata?.uid ?? '', { pod, ip, at: Date.now() });
      running = running
        .then(reconcile)
        .catch((e: unknown) => log(`reconcile failed: ${e instanceof Error ? e.message : String(e)}`));
      await running;
    },
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      clearInterval(resync);
      await Promise.all([serviceInformer.stop(), podInformer.stop()]);
      await running;
      await Promise.all([...forwarders.values()].map((f) => f.fwd.close()));
      forwarders.clear();
      for (const ip of allocated.values()) options.releaseServiceIp?.(ip);
      writeHostsBlock(hostsPath, stackId, undefined);
    },
  };
}
