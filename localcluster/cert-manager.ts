// Runs cert-manager in one stack: installs its CRDs, then its controller as a local process on the stack's address; ready only once the controller answers /livez and serves its metrics.
import { join } from 'node:path';
import { isOk } from './http-probe';
import { installCrds } from './install-crds';
import { startProcess, type ManagedProcess } from './managed-process';
import type { StackLayout } from './stack-layout';
import { waitFor } from './wait-for';

/** Fixed ports on the stack's own host IP, so two stacks never collide (cert-manager's defaults are 9402/9403 too). */
export const CERT_MANAGER_METRICS_PORT = 9402;
export const CERT_MANAGER_HEALTHZ_PORT = 9403;

export const certManagerMetricsUrl = (hostIp: string) =>
  `http://${hostIp}:${CERT_MANAGER_METRICS_PORT}/metrics`;
export const certManagerLivezUrl = (hostIp: string) => `http://${hostIp}:${CERT_MANAGER_HEALTHZ_PORT}/livez`;

/**
 * The controller's flags. There is no webhook: nothing validates or defaults cert-manager resources at admission
 * (a malformed Certificate is accepted and only fails in the controller, which reports it in its status) and
 * nothing converts between API versions (the CRDs serve v1 only, so nothing needs to).
 */
export function certManagerArgs(layout: StackLayout): string[] {
  return [
    `--kubeconfig=${layout.paths.adminKubeconfig}`,
    // ClusterIssuers read their CA Secrets from here, as the chart's default release namespace would hold them.
    '--cluster-resource-namespace=cert-manager',
    `--metrics-listen-address=${layout.hostIp}:${CERT_MANAGER_METRICS_PORT}`,
    `--healthz-listen-address=${layout.hostIp}:${CERT_MANAGER_HEALTHZ_PORT}`,
  ];
}

export async function startCertManager(
  layout: StackLayout,
  tools: { certManagerController: string; certManagerCrds: string },
  log: (line: string) => void,
): Promise<ManagedProcess> {
  // Before the controller starts: its informers for Certificates, Issuers and ACME kinds need the API to exist.
  await installCrds(layout.paths.adminKubeconfig, tools.certManagerCrds, log);
  const p = startProcess({
    name: 'cert-manager',
    command: tools.certManagerController,
    args: certManagerArgs(layout),
    cwd: layout.stateDir,
    logFile: join(layout.paths.logsDir, 'cert-manager.log'),
    stackDir: layout.stateDir,
  });
  try {
    await waitFor(
      'the cert-manager controller to serve /livez and /metrics',
      async () =>
        (await isOk(certManagerLivezUrl(layout.hostIp))) && isOk(certManagerMetricsUrl(layout.hostIp)),
      { timeoutMs: 60000, intervalMs: 500, process: p },
    );
  } catch (e) {
    await p.stop();
    throw e;
  }
  return p;
}
