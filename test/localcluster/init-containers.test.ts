// Init containers behave as the stack's kubelets run them: in order, each to completion, before any app container; failures follow the restart policy.
import { containerFaults } from '../support/container-faults';
import { connect, createNamespace, deleteNamespace, type Kube } from './kube';
import { containerStatus, podWhere, SHARED, shell, shellPod } from './shell-pod';

const phase = (want: string) => (p: { status?: { phase?: string } }) => p.status?.phase === want;
const condition = (
  pod: { status?: { conditions?: Array<{ type: string; status: string }> } },
  type: string,
) => pod.status?.conditions?.find((c) => c.type === type)?.status;

/** Fails on its first run (leaving a marker on the emptyDir) and succeeds on the second; logs each run to `runs`. */
const flakyInit = shell(
  'flaky',
  `if [ -e ${SHARED}/marker ]; then echo second >> ${SHARED}/runs; else touch ${SHARED}/marker; echo first >> ${SHARED}/runs; exit 1; fi`,
);

describe('init containers on the stack nodes', () => {
  let kube: Kube;
  let ns: string;
  beforeAll(async () => {
    kube = connect();
    ns = await createNamespace(kube, 'init');
  }, 60000);
  afterAll(() => deleteNamespace(kube, ns), 60000);

  it('runs two init containers in order, each to completion, then the app container sees what they wrote', async () => {
    await kube.core.createNamespacedPod({
      namespace: ns,
      body: shellPod('ordered', {
        restartPolicy: 'Never',
        initContainers: [
          shell('one', `sleep 1; echo one >> ${SHARED}/order`),
          shell('two', `test -s ${SHARED}/order && echo two >> ${SHARED}/order`),
        ],
        containers: [shell('app', `cat ${SHARED}/order > /dev/termination-log`)],
      }),
    });
    const pod = await podWhere(kube, ns, 'ordered', 'Succeeded', phase('Succeeded'));
    for (const name of ['one', 'two'])
      expect(containerStatus(pod, name)).toMatchObject({
        ready: true,
        state: { terminated: { exitCode: 0, reason: 'Completed' } },
      });
    const one = containerStatus(pod, 'one')?.state?.terminated;
    const two = containerStatus(pod, 'two')?.state?.terminated;
    expect(new Date(two?.startedAt ?? 0).getTime()).toBeGreaterThanOrEqual(
      new Date(one?.finishedAt ?? 0).getTime(),
    );
    expect(containerStatus(pod, 'app')?.state?.terminated).toMatchObject({
      exitCode: 0,
      message: 'one\ntwo\n',
    });
    expect(condition(pod, 'Initialized')).toBe('True');
  });

  it('holds the Pod Pending with Initialized False while an init container runs', async () => {
    await kube.core.createNamespacedPod({
      namespace: ns,
      body: shellPod('waiting', {
        restartPolicy: 'Never',
        initContainers: [shell('gate', `until [ -e ${SHARED}/open ]; do sleep 0.2; done`)],
        containers: [shell('app', 'true')],
      }),
    });
    const pod = await podWhere(kube, ns, 'waiting', 'init container running', (p) =>
      Boolean(containerStatus(p, 'gate')?.state?.running),
    );
    expect(pod.status?.phase).toBe('Pending');
    expect(condition(pod, 'Initialized')).toBe('False');
    expect(containerStatus(pod, 'app')?.state?.waiting?.reason).toBe('PodInitializing');
    await kube.core.deleteNamespacedPod({ namespace: ns, name: 'waiting' });
  });

  it('fails a restartPolicy Never Pod whose init container fails, and never starts its app container', async () => {
    await kube.core.createNamespacedPod({
      namespace: ns,
      body: shellPod('doomed', {
        restartPolicy: 'Never',
        initContainers: [shell('init', 'echo cannot restore >&2; exit 3')],
        containers: [shell('app', 'echo app ran > /dev/termination-log')],
      }),
    });
    const pod = await podWhere(kube, ns, 'doomed', 'Failed', phase('Failed'));
    expect(containerStatus(pod, 'init')).toMatchObject({
      restartCount: 0,
      state: { terminated: { exitCode: 3, reason: 'Error' } },
    });
    const app = containerStatus(pod, 'app');
    expect(app?.state?.waiting?.reason).toBe('PodInitializing');
    expect(app?.lastState?.terminated).toBeUndefined();
    expect(app?.restartCount).toBe(0);
    expect(condition(pod, 'Initialized')).toBe('False');
  });

  it('restarts a failed init container under OnFailure, counting restarts, and starts the app once it succeeds', async () => {
    await kube.core.createNamespacedPod({
      namespace: ns,
      body: shellPod('retried', {
        restartPolicy: 'OnFailure',
        initContainers: [flakyInit],
        containers: [shell('app', `cat ${SHARED}/runs > /dev/termination-log`)],
      }),
    });
    const pod = await podWhere(kube, ns, 'retried', 'Succeeded', phase('Succeeded'));
    expect(containerStatus(pod, 'flaky')).toMatchObject({
      restartCount: 1,
      state: { terminated: { exitCode: 0 } },
    });
    // The failed first run shows in the count above and in what the app read (two runs); a real kubelet does not keep
    // a finished init container's lastState once the Pod has succeeded, so that is not asserted.
    expect(containerStatus(pod, 'app')?.state?.terminated?.message).toBe('first\nsecond\n');
  });

  it('under Always, restarts a failed init container, and an app container restart does not run init containers again', async () => {
    await kube.core.createNamespacedPod({
      namespace: ns,
      body: shellPod('steady', {
        restartPolicy: 'Always',
        initContainers: [flakyInit],
        containers: [
          shell('app', `cat ${SHARED}/runs > /dev/termination-log; exec sleep 3600`, {
            // Ready once it has written what it read: a kill before that (the test ran at load 7 once) would leave
            // no message to compare.
            readinessProbe: {
              exec: { command: ['sh', '-c', 'test -s /dev/termination-log'] },
              periodSeconds: 1,
            },
          }),
        ],
      }),
    });
    const running = await podWhere(kube, ns, 'steady', 'app running and ready', (p) => {
      const app = containerStatus(p, 'app');
      return Boolean(app?.state?.running) && app?.ready === true;
    });
    expect(running.status?.phase).toBe('Running');
    const init = containerStatus(running, 'flaky');
    expect(init).toMatchObject({ restartCount: 1, state: { terminated: { exitCode: 0 } } });

    await containerFaults({ core: kube.core, stack: kube.info }).crashContainer(ns, 'steady', 'app');
    const restarted = await podWhere(kube, ns, 'steady', 'app restarted', (p) => {
      const app = containerStatus(p, 'app');
      return app?.restartCount === 1 && Boolean(app.state?.running);
    });
    // The killed instance's message is what it read: the init container had run twice, not three times.
    expect(containerStatus(restarted, 'app')?.lastState?.terminated).toMatchObject({
      exitCode: 137,
      message: 'first\nsecond\n',
    });
    expect(containerStatus(restarted, 'flaky')).toEqual(init);
    await kube.core.deleteNamespacedPod({ namespace: ns, name: 'steady' });
  });
});
