// Keeps deploy/ generated from one source: copies crds/*.yaml into the chart and renders the chart's defaults into deploy/etcd-conductor.yaml.
// CRDs are copied, not symlinked: `helm package` and `helm pull` archives must carry real files, and a
// unit test (render-chart.test.ts) fails whenever the copy or the rendered manifest is stale.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './stack-info';
import { cacheRoot, toolPaths } from './tool-cache';

export const CHART_DIR = 'deploy/chart';
export const MANIFEST_FILE = 'deploy/etcd-conductor.yaml';
/** Namespace and release name of the plain manifest; the chart's install docs use the same. */
export const MANIFEST_NAMESPACE = 'etcd-conductor';
/** The sample PodMonitor and PrometheusRule, for a `kubectl apply` install beside the plain manifest. */
export const MONITORING_FILE = 'deploy/monitoring/etcd-conductor-monitoring.yaml';
export const MANIFEST_RELEASE = 'etcd-conductor';

/** The helm binary from the tool cache (`npm run tools` builds it). */
export function helmPath(): string {
  return process.env.HELM_PATH ?? toolPaths(cacheRoot()).helm;
}

/** `crds/*.yaml` by file name: the CRDs the chart must carry. */
export function sourceCrdFiles(root: string): string[] {
  return readdirSync(join(root, 'crds'))
    .filter((f) => f.endsWith('.yaml'))
    .sort();
}

export function syncChartCrds(root: string): void {
  const target = join(root, CHART_DIR, 'crds');
  rmSync(target, { recursive: true, force: true });
  mkdirSync(target, { recursive: true });
  for (const f of sourceCrdFiles(root)) copyFileSync(join(root, 'crds', f), join(target, f));
}

/** `helm template` of the chart; throws with helm's own message (a schema error names the value). */
export function helmTemplate(
  root: string,
  opts: {
    release?: string;
    namespace?: string;
    set?: string[];
    includeCrds?: boolean;
    showOnly?: string[];
  } = {},
): string {
  const args = [
    'template',
    opts.release ?? MANIFEST_RELEASE,
    join(root, CHART_DIR),
    '--namespace',
    opts.namespace ?? MANIFEST_NAMESPACE,
    ...(opts.includeCrds ? ['--include-crds'] : []),
    ...(opts.set ?? []).flatMap((s) => ['--set', s]),
    ...(opts.showOnly ?? []).flatMap((s) => ['--show-only', s]),
  ];
  const res = spawnSync(helmPath(), args, { encoding: 'utf8' });
  if (res.error)
    throw new Error(`cannot run helm (${helmPath()}): ${res.error.message}; run \`npm run tools\``);
  if (res.status !== 0) throw new Error(`helm ${args.join(' ')} failed:\n${res.stderr.trim()}`);
  return res.stdout;
}

/** The single-file manifest: the namespace, the CRDs and every object of the chart with default values. */
export function renderManifest(root: string): string {
  const header = [
    '# etcd-conductor, rendered from deploy/chart with its default values by `npm run chart`; do not edit.',
    `# Installs into the namespace ${MANIFEST_NAMESPACE}; set temporal.address through Helm or edit TEMPORAL_ADDRESS below.`,
    '---',
    'apiVersion: v1',
    'kind: Namespace',
    'metadata:',
    `  name: ${MANIFEST_NAMESPACE}`,
    '',
  ].join('\n');
  return header + helmTemplate(root, { includeCrds: true });
}

/** The chart's PodMonitor and PrometheusRule with default values, switched on. */
export function renderMonitoring(root: string): string {
  return (
    '# etcd-conductor monitoring for the Prometheus Operator, rendered from deploy/chart by `npm run chart`; do not edit.\n' +
    helmTemplate(root, {
      set: [
        'monitoring.podMonitor.enabled=true',
        'monitoring.etcdPodMonitor.enabled=true',
        'monitoring.prometheusRule.enabled=true',
      ],
      showOnly: [
        'templates/podmonitor.yaml',
        'templates/etcd-podmonitor.yaml',
        'templates/prometheusrule.yaml',
      ],
    })
  );
}

if (require.main === module) {
  const root = repoRoot();
  syncChartCrds(root);
  writeFileSync(join(root, MANIFEST_FILE), renderManifest(root));
  writeFileSync(join(root, MONITORING_FILE), renderMonitoring(root));
  console.log(
    `chart: copied ${sourceCrdFiles(root).join(', ')} into ${CHART_DIR}/crds; wrote ${MANIFEST_FILE} and ${MONITORING_FILE}`,
  );
}
