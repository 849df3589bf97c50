// A process-backed kubelet: registers its Node, runs the Pods bound to it as local processes, and leaves no process behind on stop.
import { cpus, arch, release, totalmem } from 'node:os';
import { CoordinationV1Api, CoreV1Api, KubeConfig, VersionApi } from '@kubernetes/client-node';
import type { V1Pod } from '@kubernetes/client-node';
import { KUBELET_BACK_OFF } from './crash-loop-back-off';
import type { BackOffConfig } from './crash-loop-back-off';
import { createNodeGate } from './node-gate';
import { registerNode, startNodeHeartbeat, machineIdentity } from './node-heartbeat';
import { goArch } from './node-object';
import type { NodeFacts } from './node-object';
import { PodWorker } from './pod-worker';
import { startRestartingInformer } from '../real-nodes/restarting-informer';
import type { NodeAgent, NodeAgentOptions } from './types';

/** Extra knobs, all optional; the defaults are a real kubelet's. */
export interface NodeAgentTuning {
  /** Crash-loop back-off; default 10 s doubling to 300 s. */
  crashLoopBackOff?: BackOffConfig;
  /** Pods the node reports as allocatable; default 110. */
  maxPods?: number;
}

function apiServerAddress(kc: KubeConfig): { host: string; port: string } | undefined {
  const server = kc.getCurrentCluster()?.server;
  if (!server) return undefined;
  const url = new URL(server);
  return {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port || (url.protocol === 'https:' ? '443' : '80'),
  };
}

export async function startNodeAgent(options: NodeAgentOptions & NodeAgentTuning): Promise<NodeAgent> {
  const { nodeName, log } = options;
  const kc = new KubeConfig();
  kc.loadFromFile(options.kubeconfigPath);
  const core = kc.makeApiClient(CoreV1Api);
  const coordination = kc.makeApiClient(CoordinationV1Api);
  const version = await kc
    .makeApiClient(VersionApi)
    .getCode()
    .then((v) => v.gitVersion)
    .catch(() => 'v0.0.0');
  const facts: NodeFacts = {
    nodeName,
    zone: options.zone,
    hostIp: options.hostIp,
    cpuCores: cpus().length,
    memoryBytes: totalmem(),
    maxPods: options.maxPods ?? 110,
    kubeletVersion: version,
    kernelVersion: release(),
    architecture: goArch(arch()),
    ...machineIdentity(),
  };
  const node = await registerNode(core, facts);
  const heartbeat = startNodeHeartbeat(core, coordination, node, facts, log);
  const gate = createNodeGate();
  const workers = new Map<string, PodWorker>();
  const deps = {
    core,
    nodeName,
    hostIp: options.hostIp,
    stateDir: options.stateDir,
    images: options.images,
    allocatePodIp: options.allocatePodIp,
    releasePodIp: options.releasePodIp,
    ...(options.announcePodAddress ? { announcePodAddress: options.announcePodAddress } : {}),
    log,
    backOff: options.crashLoopBackOff ?? KUBELET_BACK_OFF,
    nodeCpuCores: facts.cpuCores,
    nodeMemoryBytes: facts.memoryBytes,
    apiServer: apiServerAddress(kc),
    gate,
    onFinished: (uid: string) => workers.delete(uid),
  };
  let stopping = false;

  const observe = (pod: V1Pod): void => {
    const uid = pod.metadata?.uid;
    if (uid === undefined || stopping || !gate.isUp()) return;
    const worker = workers.get(uid);
    if (worker !== undefined) worker.update(pod);
    else workers.set(uid, new PodWorker(pod, deps));
  };
  const forget = (pod: V1Pod): void => {
    const worker = pod.metadata?.uid === undefined ? undefined : workers.get(pod.metadata.uid);
    if (worker !== undefined && gate.isUp()) void worker.removed();
  };
  const informer = startRestartingInformer<V1Pod>({
    kc,
    path: '/api/v1/pods',
    list: () => core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${nodeName}` }),
    fieldSelector: `spec.nodeName=${nodeName}`,
    onEvent: (event, pod) => (event === 'delete' ? forget(pod) : observe(pod)),
    log,
  });

  const withWorker = async (
    namespace: string,
    pod: string,
    act: (w: PodWorker) => boolean,
    what: string,
  ): Promise<void> => {
    const worker = [...workers.values()].find((w) => w.name === `${namespace}/${pod}`);
    if (worker === undefined || !act(worker))
      throw new Error(`${what}: no running container in pod ${namespace}/${pod} on node ${nodeName}`);
  };

  log(`node ${nodeName}: registered (${options.hostIp}, zone ${options.zone})`);
  return {
    nodeName,
    crashContainer: (ns, pod, container) =>
      withWorker(ns, pod, (w) => w.signalContainer(container, 'SIGKILL'), 'crashContainer'),
    freezeContainer: (ns, pod, container) =>
      withWorker(ns, pod, (w) => w.signalContainer(container, 'SIGSTOP'), 'freezeContainer'),
    thawContainer: (ns, pod, container) =>
      withWorker(ns, pod, (w) => w.signalContainer(container, 'SIGCONT'), 'thawContainer'),
    nodeDown: async () => {
      if (!gate.isUp()) return;
      log(`node ${nodeName}: down (heartbeats stopped, every container killed)`);
      gate.setUp(false);
      heartbeat.pause();
      for (const w of workers.values()) w.killAll();
    },
    nodeUp: async () => {
      if (gate.isUp()) return;
      log(`node ${nodeName}: up (heartbeats resumed, pods resynced)`);
      await heartbeat.resume();
      gate.setUp(true);
      const current = new Map(informer.list().map((p) => [p.metadata?.uid ?? '', p]));
      for (const [uid, w] of workers) {
        const pod = current.get(uid);
        if (pod === undefined) void w.removed();
        else w.resync(pod);
      }
      for (const pod of current.values()) if (!workers.has(pod.metadata?.uid ?? '')) observe(pod);
    },
    stop: async () => {
      stopping = true;
      heartbeat.stop();
      await informer.stop();
      gate.setUp(true);
      await Promise.all([...workers.values()].map((w) => w.shutdown()));
      log(`node ${nodeName}: stopped`);
    },
  };
}
