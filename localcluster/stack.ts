// Brings one stack instance up (PKI, control plane, Temporal, MinIO, real nodes and their cluster services) and down again; a stack is ready only when every part answers, and stop() leaves none of its processes running.
// About 400 lines: the one ordered start of every part and its reverse stop; each part's own logic lives in its module.
import { CoreV1Api, KubeConfig, type V1Node } from '@kubernetes/client-node';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { certManagerMetricsUrl, startCertManager } from './cert-manager';
import {
  APISERVER_KUBELET_CLIENT,
  apiserverSans,
  apiserverUrl,
  kubeletClientArgs,
  startControlPlane,
} from './control-plane';
import { realNodeLayout } from './real-nodes/real-node-layout';
import { KUBE_PROXY_IDENTITY, startRealNodes } from './real-nodes/real-nodes';
import { installClusterDns } from './real-nodes/cluster-dns';
import { startLocalPathStorage } from './real-nodes/local-path-storage';
import { startUpstreamDnsRelay } from './real-nodes/upstream-dns';
import { startHostNames } from './real-nodes/host-names';
import { startClaimResizer } from './real-nodes/claim-resizer';
import { startHostServiceRelays } from './real-nodes/host-service-relays';
import {
  installOperatorChart,
  OPERATOR_CHART_NAMESPACE,
  OPERATOR_CHART_RELEASE,
  uninstallOperatorChart,
} from './operator-chart';
import { renderEnvFile } from './env-file';
import { installCrds } from './install-crds';
import { writeKubeconfig } from './kubeconfig';
import { startProcess, type ManagedProcess } from './managed-process';
import { S3_BUCKET, S3_REGION, s3Endpoint, startMinioServer } from './minio-server';
import { ensurePki, type ClientIdentity, type Pki } from './pki';
import { writeStackInfo, type StackInfo } from './stack-info';
import type { StackLayout } from './stack-layout';
import { TEMPORAL_NAMESPACE, startTemporalServer, temporalAddress, temporalUiUrl } from './temporal-server';
import type { ToolPaths } from './tool-cache';
import { supervise } from './supervised-process';
import { waitFor } from './wait-for';
import { OPERATOR_NODE_FLAGS } from '../contracts/node-flags';

export interface StartStackOptions {
  layout: StackLayout;
  tools: ToolPaths;
  /** The tool cache root the images are built into; each real node imports them into its containerd. */
  cacheRoot: string;
  /** Starts `dist/worker/main.js` when it exists (the operator); off for throw-away test stacks. */
  withOperator: boolean;
  /** Installs the cert-manager CRDs and runs its controller (localcluster/cert-manager.ts); off unless asked for. */
  withCertManager?: boolean;
  /**
   * Claim data in memory, as `npm test` runs: each node's default StorageClass folder is a tmpfs (real-nodes.ts
   * mountVolumesInMemory).
   */
  claimsInMemory?: boolean;
  /**
   * How the operator runs: `process` (default) is dist/worker/main.js on the host; `chart` installs it by its Helm
   * chart into the real nodes (two replicas of the project's image).
   */
  operatorMode?: OperatorMode;
  log: (line: string) => void;
}

export type OperatorMode = 'process' | 'chart';

export interface RunningStack {
  info: StackInfo;
  stop(): Promise<void>;
}

const LOCAL_SERVICES_IDENTITY: ClientIdentity = {
  file: 'local-services',
  commonName: 'etcd-conductor:local-services',
  organizations: ['system:masters'],
};

export function clientIdentities(layout: StackLayout): ClientIdentity[] {
  return [
    { file: 'admin', commonName: 'admin', organizations: ['system:masters'] },
    { file: 'kube-controller-manager', commonName: 'system:kube-controller-manager', organizations: [] },
    { file: 'kube-scheduler', commonName: 'system:kube-scheduler', organizations: [] },
    LOCAL_SERVICES_IDENTITY,
    APISERVER_KUBELET_CLIENT,
    KUBE_PROXY_IDENTITY,
    // Node identities: the Node authorizer and NodeRestriction see each node's kubelet as `system:node:<name>`.
    ...layout.nodes.map((n) => ({
      file: n.name,
      commonName: `system:node:${n.name}`,
      organizations: ['system:nodes'],
    })),
  ];
}

function writeKubeconfigs(layout: StackLayout, pki: Pki): string {
  mkdirSync(join(layout.stateDir, 'kubeconfigs'), { recursive: true, mode: 0o700 });
  const server = apiserverUrl(layout);
  const write = (path: string, file: string, user: string) => {
    const pair = pki.clients[file];
    if (!pair) throw new Error(`no client certificate ${file}`);
    writeKubeconfig(path, server, pki.caCert, pair.cert, pair.key, user);
  };
  write(layout.paths.adminKubeconfig, 'admin', 'admin');
  write(
    layout.paths.controllerManagerKubeconfig,
    'kube-controller-manager',
    'system:kube-controller-manager',
  );
  write(layout.paths.schedulerKubeconfig, 'kube-scheduler', 'system:kube-scheduler');
  const servicesKubeconfig = join(layout.stateDir, 'kubeconfigs', 'local-services.kubeconfig');
  write(servicesKubeconfig, LOCAL_SERVICES_IDENTITY.file, LOCAL_SERVICES_IDENTITY.commonName);
  return servicesKubeconfig;
}

export function isNodeReady(node: V1Node): boolean {
  return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

async function readyNodeNames(kubeconfigPath: string): Promise<string[]> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const nodes = await kc.makeApiClient(CoreV1Api).listNode();
  return nodes.items.filter(isNodeReady).map((n) => n.metadata?.name ?? '');
}

export async function startStack(opts: StartStackOptions): Promise<RunningStack> {
  const { tools, log } = opts;
  const { layout } = opts;
  const net = realNodeLayout(layout);
  const startedAt = new Date().toISOString();
  const beganAt = Date.now();
  mkdirSync(layout.paths.logsDir, { recursive: true });
  const stops: Array<{ name: string; stop: () => Promise<void> }> = [];
  const onStop = (name: string, stop: () => Promise<void>) => stops.push({ name, stop });
  const pids: Record<string, number> = {};
  const track = (p: ManagedProcess) => {
    pids[p.name] = p.pid;
  };
  const stop = async () => {
    for (const s of stops.splice(0).reverse()) {
      const t0 = Date.now();
      await s
        .stop()
        .catch((e: unknown) =>
          log(`stack: error while stopping ${s.name}: ${e instanceof Error ? e.message : String(e)}`),
        );
      log(`stack: stopped ${s.name} (${Date.now() - t0} ms)`);
    }
  };

  try {
    const sans = apiserverSans(layout, [net.bridgeIp]);
    const pki = await ensurePki({
      dir: layout.paths.pkiDir,
      serverIps: sans.ips,
      serverDnsNames: sans.dnsNames,
      clients: clientIdentities(layout),
    });
    const servicesKubeconfig = writeKubeconfigs(layout, pki);

    // Temporal and MinIO do not depend on Kubernetes: start all three at once and wait for each.
    const [controlPlane, temporal, minio] = await Promise.allSettled([
      startControlPlane(layout, tools, pki, log, kubeletClientArgs(pki)),
      startTemporalServer(layout, tools.temporal),
      startMinioServer(layout, tools.minio),
    ]);
    if (controlPlane.status === 'fulfilled') {
      onStop('control plane', controlPlane.value.stop);
      controlPlane.value.processes.forEach(track);
    }
    if (temporal.status === 'fulfilled') {
      onStop('temporal', () => temporal.value.stop());
      track(temporal.value);
    }
    if (minio.status === 'fulfilled') {
      onStop('minio', () => minio.value.process.stop());
      track(minio.value.process);
    }
    for (const r of [controlPlane, temporal, minio]) if (r.status === 'rejected') throw r.reason;
    if (temporal.status !== 'fulfilled' || minio.status !== 'fulfilled') throw new Error('unreachable');
    log(
      `stack: Temporal ready on ${temporalAddress(layout)} (UI ${temporalUiUrl(layout)}); MinIO ready on ${s3Endpoint(layout)}`,
    );

    const real = await startRealNodes({
      layout,
      tools,
      pki,
      cacheRoot: opts.cacheRoot,
      dnsServiceIp: net.dnsServiceIp,
      ...(opts.claimsInMemory ? { volumesInMemory: true } : {}),
      log,
    });
    onStop('real nodes', () => real.stop());
    real.processes.forEach(track);
    const nodeInfo: StackInfo['nodes'] = real.net.nodes.map((n) => ({
      name: n.name,
      zone: n.zone,
      hostIp: n.ip,
    }));
    const names = real.net.nodes.map((n) => n.name);
    await waitFor(
      `real nodes ${names.join(', ')} to be Ready`,
      async () => {
        const ready = await readyNodeNames(layout.paths.adminKubeconfig);
        return names.every((n) => ready.includes(n));
      },
      { timeoutMs: 90000, intervalMs: 300 },
    );
    log(
      `stack: real nodes ${names.join(', ')} Ready ${((Date.now() - beganAt) / 1000).toFixed(1)} s after the stack began`,
    );
    await waitForDefaultServiceAccount(layout);
    const relay = await startUpstreamDnsRelay(real.net.bridgeIp, log);
    if (relay) onStop('upstream DNS relay', () => relay.stop());
    await installClusterDns(
      tools.kubectl,
      layout.paths.adminKubeconfig,
      net.dnsServiceIp,
      log,
      relay?.address,
    );
    const provisioner = await startLocalPathStorage({
      net: real.net,
      kubectl: tools.kubectl,
      adminKubeconfig: layout.paths.adminKubeconfig,
      kubeconfig: servicesKubeconfig,
      log,
    });
    // Stopped before the nodes (stops run in reverse).
    onStop('host provisioner', () => provisioner.stop());
    const resizer = startClaimResizer({ kubeconfig: servicesKubeconfig, log });
    onStop('claim resizer', () => resizer.stop());
    const hostNames = startHostNames({ kubeconfig: servicesKubeconfig, stateDir: layout.stateDir, log });
    onStop('host names', () => hostNames.stop());
    const relays = await startHostServiceRelays(net.bridgeIp, temporalAddress(layout), s3Endpoint(layout));
    onStop('Temporal and MinIO relays', () => relays.close());
    const podReachable = { temporalAddress: relays.temporalAddress, s3Endpoint: relays.s3Endpoint };
    log(`stack: Pods reach Temporal at ${relays.temporalAddress} and MinIO at ${relays.s3Endpoint}`);

    if (opts.withCertManager) {
      const certManager = await startCertManager(layout, tools, log);
      onStop('cert-manager', () => certManager.stop());
      track(certManager);
      log(
        `stack: cert-manager ready (metrics ${certManagerMetricsUrl(layout.hostIp)}, log ${certManager.logFile})`,
      );
    }

    const creds = minio.value.credentials;
    const info: StackInfo = {
      version: 1,
      phase: 'ready',
      stateDir: layout.stateDir,
      hostIp: layout.hostIp,
      // Pods take their addresses from the nodes' Pod CIDRs.
      podCidr: net.clusterPodCidr,
      serviceCidr: layout.serviceCidr,
      ownerPid: process.pid,
      pids,
      kubeconfig: layout.paths.adminKubeconfig,
      apiserverUrl: apiserverUrl(layout),
      temporal: {
        address: temporalAddress(layout),
        namespace: TEMPORAL_NAMESPACE,
        uiUrl: temporalUiUrl(layout),
      },
      s3: { endpoint: s3Endpoint(layout), bucket: S3_BUCKET, region: S3_REGION, ...creds },
      ...(opts.withCertManager ? { certManager: { metricsUrl: certManagerMetricsUrl(layout.hostIp) } } : {}),
      nodes: nodeInfo,
      podReachable,
      ...(opts.withOperator && opts.operatorMode === 'chart'
        ? { operatorChart: { namespace: OPERATOR_CHART_NAMESPACE, release: OPERATOR_CHART_RELEASE } }
        : {}),
      nodeRuntime: 'real',
      podsReachHostAt: net.bridgeIp,
      tools: {
        kubectl: tools.kubectl,
        temporal: tools.temporal,
        minio: tools.minio,
        helm: tools.helm,
        etcdBinDirs: tools.etcdBinDirs,
      },
      logsDir: layout.paths.logsDir,
      startedAt,
      readyAt: undefined,
    };
    writeFileSync(layout.paths.envSh, renderEnvFile(info), { mode: 0o600 });

    if (opts.withOperator) {
      // What `kubectl apply -f crds/` does in a real cluster; the operator needs its API before it starts.
      await installCrds(layout.paths.adminKubeconfig, join(layout.repoRoot, 'crds'), log);
      const entry = join(layout.repoRoot, 'dist', 'worker', 'main.js');
      if (opts.operatorMode === 'chart') {
        await installOperatorChart({
          helm: tools.helm,
          kubectl: tools.kubectl,
          kubeconfig: layout.paths.adminKubeconfig,
          repoRoot: layout.repoRoot,
          temporalAddress: podReachable.temporalAddress,
          temporalNamespace: TEMPORAL_NAMESPACE,
          excludeNamespaces: [IN_CLUSTER_NAMESPACE],
          log,
        });
      } else if (existsSync(entry)) {
        await uninstallOperatorChart({ helm: tools.helm, kubeconfig: layout.paths.adminKubeconfig, log });
        const operator = supervise(() => startOperator(layout, info, entry), {
          onRestart: (next, why, delayMs) => {
            track(next);
            if (info.readyAt) writeStackInfo(layout.paths.stackJson, info);
            log(`stack: operator ${why}; restarted after ${delayMs} ms (pid ${next.pid})`);
          },
        });
        track(operator.current());
        onStop('operator', () => operator.stop(10000));
        log(`stack: operator started (pid ${operator.current().pid}, log ${operator.current().logFile})`);
      }
    }
    info.readyAt = new Date().toISOString();
    writeStackInfo(layout.paths.stackJson, info);
    return {
      info,
      stop: async () => {
        writeStackInfo(layout.paths.stackJson, { ...info, phase: 'stopping' });
        await stop();
      },
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

/** Where the stack's operator serves /metrics, /healthz and /readyz: the chart's port on the stack's address. */
export const operatorHttpAddress = (hostIp: string) => `${hostIp}:9464`;

/**
 * The namespace the stack's own operator leaves alone: an operator installed from the chart into it (namespace-scoped
 * RBAC, WATCH_NAMESPACE) is then the only one serving its EtcdClusters, as two installations of a real cluster must
 * split their namespaces. test/incluster/ installs there.
 */
export const IN_CLUSTER_NAMESPACE = 'etcd-conductor-in-cluster';

/** The operator hook: once `dist/worker/main.js` exists, the stack runs it with the same environment env.sh exports. */
function startOperator(layout: StackLayout, info: StackInfo, entry: string): ManagedProcess {
  return startProcess({
    name: 'operator',
    command: process.execPath,
    args: [...OPERATOR_NODE_FLAGS, entry],
    cwd: layout.repoRoot,
    logFile: join(layout.paths.logsDir, 'operator.log'),
    stackDir: layout.stateDir,
    env: {
      KUBECONFIG: info.kubeconfig,
      // /metrics, /healthz and /readyz on the stack's own address, as the chart serves them in a Pod.
      OPERATOR_HTTP_ADDRESS: operatorHttpAddress(info.hostIp),
      TEMPORAL_ADDRESS: info.temporal.address,
      TEMPORAL_NAMESPACE: info.temporal.namespace,
      S3_ENDPOINT: info.s3.endpoint,
      S3_BUCKET: info.s3.bucket,
      AWS_REGION: info.s3.region,
      AWS_ACCESS_KEY_ID: info.s3.accessKeyId,
      AWS_SECRET_ACCESS_KEY: info.s3.secretAccessKey,
      EXCLUDE_NAMESPACES: IN_CLUSTER_NAMESPACE,
    },
  });
}

/** ServiceAccount admission refuses Pods (403) until the controller manager has created the namespace's default account. */
async function waitForDefaultServiceAccount(layout: StackLayout): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(layout.paths.adminKubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  await waitFor(
    'the default ServiceAccount of namespace default',
    async () => {
      await core.readNamespacedServiceAccount({ namespace: 'default', name: 'default' });
      return true;
    },
    { timeoutMs: 60000, intervalMs: 200 },
  );
}
