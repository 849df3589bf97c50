// A container's result comes back through state.terminated.message, as on a kubelet: the termination file, or the log tail with FallbackToLogsOnError.
import { existsSync } from 'node:fs';
import type { V1Job } from '@kubernetes/client-node';
import { connect, createNamespace, deleteNamespace, eventually, type Kube } from './kube';
import { containerStatus, podWhere, PROJECT_IMAGE, shell, shellPod } from './shell-pod';

describe('termination messages on the stack nodes', () => {
  let kube: Kube;
  let ns: string;
  beforeAll(async () => {
    kube = connect();
    ns = await createNamespace(kube, 'termination');
  }, 60000);
  afterAll(() => deleteNamespace(kube, ns), 60000);

  it('a Job whose container writes JSON to /dev/termination-log completes and its Pod carries that JSON', async () => {
    const result = { snapshot: 's3://etcd-conductor/backups/a.db', revision: 42, sha256: 'ab'.repeat(32) };
    const job: V1Job = {
      metadata: { name: 'reporter' },
      spec: {
        backoffLimit: 0,
        template: {
          spec: {
            restartPolicy: 'Never',
            containers: [
              {
                name: 'agent',
                image: PROJECT_IMAGE,
                command: [
                  'node',
                  '-e',
                  'require("fs").writeFileSync("/dev/termination-log", process.argv[1])',
                ],
                args: [JSON.stringify(result)],
              },
            ],
          },
        },
      },
    };
    await kube.batch.createNamespacedJob({ namespace: ns, body: job });
    await eventually(
      'the Job to complete',
      async () =>
        (await kube.batch.readNamespacedJob({ namespace: ns, name: 'reporter' })).status?.conditions?.some(
          (c) => c.type === 'Complete' && c.status === 'True',
        ) === true,
      90000,
    );
    const pods = await kube.core.listNamespacedPod({ namespace: ns, labelSelector: 'job-name=reporter' });
    const terminated = pods.items[0]?.status?.containerStatuses?.[0]?.state?.terminated;
    expect(terminated?.exitCode).toBe(0);
    expect(JSON.parse(terminated?.message ?? 'null')).toEqual(result);
    // The file existed only inside the container: the host's /dev is untouched.
    expect(existsSync('/dev/termination-log')).toBe(false);
  });

  it('a failed container with FallbackToLogsOnError and nothing in its file reports the tail of its log', async () => {
    await kube.core.createNamespacedPod({
      namespace: ns,
      body: shellPod('crashing', {
        restartPolicy: 'Never',
        containers: [
          shell(
            'main',
            // One stream: a real kubelet's log interleaves stdout and stderr by the time containerd read each pipe,
            // so the place of a stderr line among stdout lines is not something a kubelet promises.
            'exec 2>&1; for i in $(seq 1 100); do echo "line $i"; done; echo "fatal: member not found" >&2; exit 4',
            {
              terminationMessagePolicy: 'FallbackToLogsOnError',
            },
          ),
        ],
      }),
    });
    const pod = await podWhere(kube, ns, 'crashing', 'Failed', (p) => p.status?.phase === 'Failed');
    const lines = Array.from({ length: 79 }, (_, i) => `line ${i + 22}\n`).join('');
    expect(containerStatus(pod, 'main')?.state?.terminated).toMatchObject({
      exitCode: 4,
      message: `${lines}fatal: member not found\n`,
    });
  });

  it('an init container gets its message too, and with the default File policy a failure without a file has none', async () => {
    await kube.core.createNamespacedPod({
      namespace: ns,
      body: shellPod('init-report', {
        restartPolicy: 'Never',
        initContainers: [
          shell('restore', 'printf restored-42 > /dev/termination-log'),
          shell('check', 'echo "snapshot corrupt" >&2; exit 2'),
        ],
        containers: [shell('app', 'true')],
      }),
    });
    const pod = await podWhere(kube, ns, 'init-report', 'Failed', (p) => p.status?.phase === 'Failed');
    expect(containerStatus(pod, 'restore')?.state?.terminated).toMatchObject({
      exitCode: 0,
      message: 'restored-42',
    });
    const check = containerStatus(pod, 'check')?.state?.terminated;
    expect(check?.exitCode).toBe(2);
    expect(check?.message).toBeUndefined();
  });
});
