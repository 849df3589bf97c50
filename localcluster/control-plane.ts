// Starts the Kubernetes control plane of one stack (backing etcd, kube-apiserver, kube-controller-manager, kube-scheduler), each bound to the stack's host IP only, and stops it in reverse order.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isOk } from './http-probe';
import { startProcess, type ManagedProcess } from './managed-process';
import type { Pki } from './pki';
import { realNodeLayout } from './real-nodes/real-node-layout';
import { firstServiceIp, type StackLayout } from './stack-layout';
import type { ToolPaths } from './tool-cache';
import { BACKING_ETCD_VERSION } from './versions';
import { waitFor } from './wait-for';

export const SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local';

export function apiserverUrl(layout: StackLayout): string {
  return `https://${layout.hostIp}:${layout.ports.apiserver}`;
}

export function etcdClientUrl(layout: StackLayout): string {
  return `http://${layout.hostIp}:${layout.ports.etcdClient}`;
}

/** The apiserver serving certificate must name every way a client reaches it, including the in-cluster Service. */
export function apiserverSans(
  layout: StackLayout,
  extraIps: string[] = [],
): { ips: string[]; dnsNames: string[] } {
  return {
    ips: [...new Set([layout.hostIp, '127.0.0.1', firstServiceIp(layout.serviceCidr), ...extraIps])],
    dnsNames: [
      'localhost',
      'kubernetes',
      'kubernetes.default',
      'kubernetes.default.svc',
      'kubernetes.default.svc.cluster.local',
    ],
  };
}

export function etcdArgs(layout: StackLayout): string[] {
  const peer = `http://${layout.hostIp}:${layout.ports.etcdPeer}`;
  return [
    '--name=backing',
    `--data-dir=${layout.paths.etcdDataDir}`,
    `--listen-client-urls=${etcdClientUrl(layout)}`,
    `--advertise-client-urls=${etcdClientUrl(layout)}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=backing=${peer}`,
    // A throw-away development store: skipping fsync makes every apiserver write several times faster on slow disks.
    '--unsafe-no-fsync',
    '--log-level=warn',
  ];
}

export function apiserverArgs(layout: StackLayout, pki: Pki): string[] {
  return [
    `--etcd-servers=${etcdClientUrl(layout)}`,
    `--bind-address=${layout.hostIp}`,
    // The node bridge's address: the `kubernetes` Service's endpoint (kept by the default lease reconciler), which
    // Pods reach; the host IP is loopback, which an Endpoints object may not hold.
    `--advertise-address=${realNodeLayout(layout).bridgeIp}`,
    `--secure-port=${layout.ports.apiserver}`,
    `--tls-cert-file=${pki.apiserver.cert}`,
    `--tls-private-key-file=${pki.apiserver.key}`,
    `--client-ca-file=${pki.caCert}`,
    `--service-account-issuer=${SERVICE_ACCOUNT_ISSUER}`,
    `--service-account-key-file=${pki.serviceAccountPub}`,
    `--service-account-signing-key-file=${pki.serviceAccountKey}`,
    `--service-cluster-ip-range=${layout.serviceCidr}`,
    '--authorization-mode=Node,RBAC',
    '--allow-privileged=true',
    `--cert-dir=${join(layout.paths.pkiDir, 'apiserver-generated')}`,
    '--profiling=false',
    '--v=1',
  ];
}

export function controllerManagerArgs(layout: StackLayout, pki: Pki): string[] {
  const kc = layout.paths.controllerManagerKubeconfig;
  return [
    `--kubeconfig=${kc}`,
    `--authentication-kubeconfig=${kc}`,
    `--authorization-kubeconfig=${kc}`,
    `--bind-address=${layout.hostIp}`,
    `--secure-port=${layout.ports.controllerManager}`,
    `--cert-dir=${join(layout.paths.pkiDir, 'kcm-generated')}`,
    '--leader-elect=false',
    '--controllers=*',
    '--use-service-account-credentials=true',
    `--service-account-private-key-file=${pki.serviceAccountKey}`,
    `--root-ca-file=${pki.caCert}`,
    // Faster than the 50 s default so node-down tests finish sooner; still three of the kubelets' 10 s Lease renewals, so a busy machine does not flap.
    '--node-monitor-period=2s',
    '--node-monitor-grace-period=30s',
    '--v=1',
  ];
}

export function schedulerArgs(layout: StackLayout): string[] {
  const kc = layout.paths.schedulerKubeconfig;
  return [
    `--kubeconfig=${kc}`,
    `--authentication-kubeconfig=${kc}`,
    `--authorization-kubeconfig=${kc}`,
    `--bind-address=${layout.hostIp}`,
    `--secure-port=${layout.ports.scheduler}`,
    `--cert-dir=${join(layout.paths.pkiDir, 'scheduler-generated')}`,
    '--leader-elect=false',
    '--v=1',
  ];
}

/**
 * kube-apiserver stops listening at once on SIGTERM but then idles for a long time before exiting;
 * killing it after a short grace loses nothing (etcd holds the state and is stopped gracefully after it).
 */
const STOP_GRACE_MS: Record<string, number> = { 'kube-apiserver': 3000 };

export interface ControlPlane {
  processes: ManagedProcess[];
  stop(): Promise<void>;
}

/**
 * Real kubelets keep anonymous access off and authorize by webhook, so the apiserver must present a client certificate
 * to them for logs, exec and port-forward; it dials their InternalIP (nodes have no resolvable names here).
 */
export function kubeletClientArgs(pki: Pki): string[] {
  const pair = pki.clients[APISERVER_KUBELET_CLIENT.file];
  if (!pair) throw new Error('no apiserver kubelet-client certificate');
  return [
    `--kubelet-client-certificate=${pair.cert}`,
    `--kubelet-client-key=${pair.key}`,
    '--kubelet-preferred-address-types=InternalIP,Hostname',
  ];
}

export const APISERVER_KUBELET_CLIENT = {
  file: 'apiserver-kubelet-client',
  commonName: 'kube-apiserver-kubelet-client',
  organizations: ['system:masters'],
};

/**
 * The apiserver keeps its first Service CIDR in etcd (the default ServiceCIDR object) and refuses addresses of any
 * other; a state folder last used by the removed process-backed nodes (127.(B+96).0.0/16) has another range, so the
 * throw-away backing store starts empty then (its objects belonged to those nodes anyway).
 */
function resetStoreOnServiceCidrChange(layout: StackLayout, log: (line: string) => void): void {
  const marker = `${layout.paths.etcdDataDir}.service-cidr`;
  const recorded = existsSync(marker) ? readFileSync(marker, 'utf8').trim() : undefined;
  if (existsSync(layout.paths.etcdDataDir) && recorded !== layout.serviceCidr) {
    log(
      `stack: Service CIDR ${recorded ?? '(unrecorded)'} -> ${layout.serviceCidr}; starting with an empty backing etcd`,
    );
    rmSync(layout.paths.etcdDataDir, { recursive: true, force: true });
  }
  mkdirSync(layout.stateDir, { recursive: true });
  writeFileSync(marker, `${layout.serviceCidr}\n`);
}

export async function startControlPlane(
  layout: StackLayout,
  tools: ToolPaths,
  pki: Pki,
  log: (line: string) => void,
  extraApiserverArgs: string[] = [],
): Promise<ControlPlane> {
  const started: ManagedProcess[] = [];
  const spawnOne = (name: string, command: string, args: string[]) => {
    const p = startProcess({
      name,
      command,
      args,
      cwd: layout.stateDir,
      logFile: join(layout.paths.logsDir, `${name}.log`),
      stackDir: layout.stateDir,
    });
    started.push(p);
    return p;
  };
  const stop = async () => {
    for (const p of [...started].reverse()) {
      const t0 = Date.now();
      await p.stop(STOP_GRACE_MS[p.name]);
      log(`stack: stopped ${p.name} (${Date.now() - t0} ms, ${p.exitStatus() ?? 'running'})`);
    }
  };
  try {
    resetStoreOnServiceCidrChange(layout, log);
    const etcd = spawnOne('etcd', join(tools.etcdBinDirs[BACKING_ETCD_VERSION], 'etcd'), etcdArgs(layout));
    await waitFor('the backing etcd to be ready', () => isOk(`${etcdClientUrl(layout)}/readyz`), {
      timeoutMs: 30000,
      process: etcd,
    });
    log(`stack: backing etcd ready on ${etcdClientUrl(layout)}`);

    const apiserver = spawnOne('kube-apiserver', tools.kubeApiserver, [
      ...apiserverArgs(layout, pki),
      ...extraApiserverArgs,
    ]);
    const admin = pki.clients.admin;
    const tls = {
      ca: readFileSync(pki.caCert, 'utf8'),
      cert: admin ? readFileSync(admin.cert, 'utf8') : undefined,
      key: admin ? readFileSync(admin.key, 'utf8') : undefined,
    };
    await waitFor('kube-apiserver to be ready', () => isOk(`${apiserverUrl(layout)}/readyz`, tls), {
      timeoutMs: 90000,
      process: apiserver,
    });
    log(`stack: kube-apiserver ready on ${apiserverUrl(layout)}`);

    const kcm = spawnOne(
      'kube-controller-manager',
      tools.kubeControllerManager,
      controllerManagerArgs(layout, pki),
    );
    const scheduler = spawnOne('kube-scheduler', tools.kubeScheduler, schedulerArgs(layout));
    await Promise.all([
      waitFor(
        'kube-controller-manager to be healthy',
        () => isOk(`https://${layout.hostIp}:${layout.ports.controllerManager}/healthz`, { insecure: true }),
        { timeoutMs: 60000, process: kcm },
      ),
      waitFor(
        'kube-scheduler to be healthy',
        () => isOk(`https://${layout.hostIp}:${layout.ports.scheduler}/healthz`, { insecure: true }),
        { timeoutMs: 60000, process: scheduler },
      ),
    ]);
    log('stack: kube-controller-manager and kube-scheduler healthy');
    return { processes: started, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
