// The manifests users apply, applied: the chart rendered with helm, `kubectl apply`-ed into the local stack, and the
// operator running as a Pod there from its service-account token (namespace-scoped RBAC, in-cluster config), creating
// an EtcdCluster and scaling it with its workflows on a task queue of its own.
//
// The stack's own operator leaves IN_CLUSTER_NAMESPACE alone (EXCLUDE_NAMESPACES), so the Pod is the only operator
// serving that namespace; otherwise both watchers would race to start the same workflow id on their own queues.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { V1Pod } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { helmTemplate } from '../../localcluster/render-chart';
import { repoRoot } from '../../localcluster/stack-info';
import { IN_CLUSTER_NAMESPACE } from '../../localcluster/stack';
import type { Harness } from '../support/cluster-harness';
import {
  connect,
  createCluster,
  etcdMemberList,
  eventually,
  listWorkflows,
  patchSpec,
  temporalCli,
  waitConverged,
} from '../support/cluster-harness';

const RELEASE = 'etcd-conductor';
const ns = IN_CLUSTER_NAMESPACE;
const suffix = randomBytes(3).toString('hex');
// A queue and a cluster name of this run only: a workflow left by an earlier run can never take this run's signals.
const taskQueue = `in-cluster-${suffix}`;
const clusterName = `pod-run-${suffix}`;

let h: Harness;

function kubectl(args: string[], input?: string): string {
  return execFileSync(h.stack.tools.kubectl, ['--kubeconfig', h.stack.kubeconfig, ...args], {
    encoding: 'utf8',
    ...(input !== undefined ? { input } : {}),
  });
}

async function namespaceGone(): Promise<boolean | undefined> {
  try {
    await h.core.readNamespace({ name: ns });
    return undefined;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return true;
    throw err;
  }
}

/** The operator Pods of the release; the container's pid comes from its containerID (`process://<uid>/<name>/<pid>`). */
async function operatorPods(): Promise<V1Pod[]> {
  const list = await h.core.listNamespacedPod({
    namespace: ns,
    labelSelector: `app.kubernetes.io/instance=${RELEASE},app.kubernetes.io/name=etcd-conductor`,
  });
  return list.items.filter((p) => !p.metadata?.deletionTimestamp);
}

/** A file of the operator process's /proc: PID 1 of the container, read with `kubectl exec` (the image has `cat`). */
function operatorProcFile(pod: V1Pod, file: 'environ' | 'mountinfo'): string {
  return kubectl([
    '-n',
    ns,
    'exec',
    pod.metadata?.name ?? '',
    '-c',
    'operator',
    '--',
    'cat',
    `/proc/1/${file}`,
  ]);
}

beforeAll(async () => {
  h = connect();
  // A run that was interrupted leaves the namespace behind; start from nothing.
  await h.core.deleteNamespace({ name: ns }).catch(() => undefined);
  await eventually(`namespace ${ns} from an earlier run to be gone`, namespaceGone, 300_000, 1000);
  await h.core.createNamespace({ body: { metadata: { name: ns } } });
});

afterAll(async () => {
  if (process.env.E2E_KEEP_NAMESPACES === '1') return;
  // The cluster's workflows run on this run's queue, whose only worker goes with the namespace: end them first.
  try {
    temporalCli(h, [
      'workflow',
      'terminate',
      '--query',
      `TaskQueue = "${taskQueue}" AND ExecutionStatus = "Running"`,
      '--reason',
      'test/incluster cleanup',
      '--yes',
    ]);
  } catch {
    // Nothing running is fine.
  }
  await h.core.deleteNamespace({ name: ns }).catch(() => undefined);
});

describe('the operator installed from the chart, running as a Pod', () => {
  it('comes up Ready on its in-cluster credentials, creates a cluster of 1 and scales it to 3 on its own task queue', async () => {
    // The Pod has a network of its own: Temporal is where Pods reach the host (the bridge address).
    const temporalAddress = h.stack.podReachable.temporalAddress;
    const rendered = helmTemplate(repoRoot(), {
      release: RELEASE,
      namespace: ns,
      set: [
        'rbac.scope=namespace',
        `temporal.address=${temporalAddress}`,
        `temporal.namespace=${h.stack.temporal.namespace}`,
        `temporal.taskQueue=${taskQueue}`,
        // One replica: the machine is shared; two replicas on one queue are the runtime tests' subject.
        'replicaCount=1',
        // The Pod's own address (the chart's other choice besides 0.0.0.0), as OPERATOR_HTTP_ADDRESS is checked below.
        'http.host=$(POD_IP)',
        'logLevel=debug',
      ],
    });
    // Namespace-scoped: a Role and RoleBinding; the only cluster-wide grant is reading StorageClasses (cluster-scoped
    // objects, which a Role cannot grant), so storage growth can tell whether a class allows expansion.
    // (helm template leaves the CRDs out; the stack has them.)
    expect(rendered).toContain('kind: Role\n');
    const clusterRoles = parseAllDocuments(rendered)
      .map((d) => d.toJS() as { kind?: string; metadata?: { name?: string }; rules?: unknown } | null)
      .filter((o) => o?.kind === 'ClusterRole');
    expect(clusterRoles).toEqual([
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: expect.objectContaining({ name: `${RELEASE}-cluster-read` }),
        rules: [{ apiGroups: ['storage.k8s.io'], resources: ['storageclasses'], verbs: ['get'] }],
      },
    ]);
    kubectl(['apply', '-n', ns, '-f', '-'], rendered);

    const pod = await eventually(
      'the operator Pod to be Ready (its /readyz answers)',
      async () => {
        const [p] = await operatorPods();
        const ready = p?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
        return ready ? p : undefined;
      },
      300_000,
      1000,
    );

    // In-cluster config: the process has no kubeconfig, the kubernetes Service variables, and the token volume
    // mounted where client libraries look for it.
    const environ = new Map(
      operatorProcFile(pod, 'environ')
        .split('\0')
        .filter(Boolean)
        .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)] as const),
    );
    expect(environ.has('KUBECONFIG')).toBe(false);
    // The kubelet names the apiserver by the `kubernetes` Service's ClusterIP (kube-proxy routes it).
    const apiHost = (await h.core.readNamespacedService({ namespace: 'default', name: 'kubernetes' })).spec
      ?.clusterIP;
    expect(environ.get('KUBERNETES_SERVICE_HOST')).toBe(apiHost);
    // The image's HOME (the Dockerfile's ENV: /tmp, the one writable place under a read-only /).
    expect(environ.get('HOME')).toBe('/tmp');
    expect(environ.get('OPERATOR_HTTP_ADDRESS')).toBe(`${pod.status?.podIP}:9464`);
    expect(operatorProcFile(pod, 'mountinfo')).toMatch(
      / \/(var\/)?run\/secrets\/kubernetes\.io\/serviceaccount ro,/,
    );
    expect(pod.spec?.serviceAccountName).toBe(RELEASE);

    await createCluster(h, ns, clusterName, { replicas: 1 });
    await waitConverged(h, ns, clusterName, 1, 300_000);
    await patchSpec(h, ns, clusterName, { replicas: 3 });
    const c = await waitConverged(h, ns, clusterName, 3, 600_000);
    expect(c.status?.conditions?.find((x) => x.type === 'Available')?.status).toBe('True');
    expect((await etcdMemberList(ns, clusterName)).filter((m) => !m.isLearner)).toHaveLength(3);

    // Every workflow of this cluster (the cluster workflow and its operations) ran on the Pod's queue, and there
    // were a bootstrap and a scale-up among them.
    const rows = listWorkflows(
      h,
      `EtcdClusterNamespace = "${ns}" AND EtcdClusterName = "${clusterName}"`,
    ) as Array<{ execution: { workflowId: string }; taskQueue?: string; type?: { name: string } }>;
    expect(rows.length).toBeGreaterThanOrEqual(3);
    expect(new Set(rows.map((r) => r.taskQueue))).toEqual(new Set([taskQueue]));
    const ids = rows.map((r) => r.execution.workflowId);
    expect(ids).toContain(`etcdcluster/${ns}/${clusterName}`);
    expect(ids.some((id) => /\/op\/\d+-bootstrap$/i.test(id))).toBe(true);
    expect(ids.some((id) => /\/op\/\d+-scaleup$/i.test(id))).toBe(true);
  });
});
