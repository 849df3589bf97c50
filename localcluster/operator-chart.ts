// The operator as users run it: installed by its Helm chart (deploy/chart) into the real-node stack, two replicas of
// the project's image (project-image.ts) in a namespace that enforces the restricted Pod Security profile. Temporal
// stays a host process; the chart's one setting for that is temporal.address, the bridge address Pods dial.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CHART_DIR, MANIFEST_NAMESPACE, MANIFEST_RELEASE } from './render-chart';

const run = promisify(execFile);

export const OPERATOR_CHART_NAMESPACE = MANIFEST_NAMESPACE;
export const OPERATOR_CHART_RELEASE = MANIFEST_RELEASE;

export interface OperatorChartOptions {
  helm: string;
  kubectl: string;
  kubeconfig: string;
  repoRoot: string;
  /** host:port of the Temporal frontend as Pods reach it. */
  temporalAddress: string;
  temporalNamespace: string;
  /** Namespaces another installation serves (the stack's in-cluster tests install one there). */
  excludeNamespaces: string[];
  log: (line: string) => void;
}

/**
 * The chart's values for the stack: where Temporal is, and the namespaces another installation serves; everything
 * else is the chart's default.
 */
export function operatorChartValues(
  temporalAddress: string,
  temporalNamespace: string,
  excludeNamespaces: string[] = [],
): string[] {
  return [
    `temporal.address=${temporalAddress}`,
    `temporal.namespace=${temporalNamespace}`,
    ...(excludeNamespaces.length > 0 ? [`rbac.excludeNamespaces={${excludeNamespaces.join(',')}}`] : []),
  ];
}

async function exec(command: string, args: string[]): Promise<string> {
  try {
    return (await run(command, args, { maxBuffer: 16 << 20 })).stdout;
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new Error(`${command} ${args.join(' ')} failed: ${(err.stderr ?? '').trim() || err.message}`, {
      cause: e,
    });
  }
}

/** `helm upgrade --install` (idempotent across `up`s), then waits until both replicas are Ready. */
export async function installOperatorChart(opts: OperatorChartOptions): Promise<void> {
  const t0 = Date.now();
  const kubectl = (...args: string[]) => exec(opts.kubectl, ['--kubeconfig', opts.kubeconfig, ...args]);
  const ns = OPERATOR_CHART_NAMESPACE;
  await kubectl('create', 'namespace', ns).catch((e: unknown) => {
    if (!(e instanceof Error && /AlreadyExists/.test(e.message))) throw e;
  });
  await kubectl('label', '--overwrite', 'namespace', ns, 'pod-security.kubernetes.io/enforce=restricted');
  await exec(opts.helm, [
    'upgrade',
    '--install',
    OPERATOR_CHART_RELEASE,
    join(opts.repoRoot, CHART_DIR),
    '--kubeconfig',
    opts.kubeconfig,
    '--namespace',
    ns,
    // The stack installed them already (install-crds.ts), from the same files.
    '--skip-crds',
    ...operatorChartValues(opts.temporalAddress, opts.temporalNamespace, opts.excludeNamespaces).flatMap(
      (v) => ['--set', v],
    ),
  ]);
  await kubectl('-n', ns, 'rollout', 'status', `deployment/${OPERATOR_CHART_RELEASE}`, '--timeout=180s');
  opts.log(
    `stack: operator installed by its chart (release ${OPERATOR_CHART_RELEASE} in namespace ${ns}, Temporal at ${opts.temporalAddress}) and Ready in ${((Date.now() - t0) / 1000).toFixed(1)}s`,
  );
}

/**
 * `helm uninstall` of the stack's chart release, if there is one: a stack brought up with `--operator=chart` keeps the
 * release in its apiserver's data, so an `up` with the host-process operator afterwards would otherwise run two
 * operators on the same task queue and Lease. Returns whether a release was removed.
 */
export async function uninstallOperatorChart(
  opts: Pick<OperatorChartOptions, 'helm' | 'kubeconfig' | 'log'>,
): Promise<boolean> {
  const helm = (...args: string[]) =>
    exec(opts.helm, [...args, '--kubeconfig', opts.kubeconfig, '--namespace', OPERATOR_CHART_NAMESPACE]);
  const releases = (await helm('list', '--short')).split('\n').map((l) => l.trim());
  if (!releases.includes(OPERATOR_CHART_RELEASE)) return false;
  await helm('uninstall', OPERATOR_CHART_RELEASE, '--wait', '--timeout', '120s');
  opts.log(
    `stack: removed the operator chart release ${OPERATOR_CHART_RELEASE} an earlier \`up --operator=chart\` left (this stack runs the operator as a host process)`,
  );
  return true;
}
