import { computePodStatus, podPhase } from './pod-status';
import type { ContainerStateJson, ContainerStatusJson, PodStatusInput, RestartPolicy } from './pod-status';

const T = '2026-01-01T00:00:00Z';
const running: ContainerStateJson = { running: { startedAt: T } };
const exited = (exitCode: number): ContainerStateJson => ({
  terminated: { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', finishedAt: T },
});
const waiting = (reason: string): ContainerStateJson => ({ waiting: { reason } });

function cs(
  name: string,
  state: ContainerStateJson,
  extra: Partial<ContainerStatusJson> = {},
): ContainerStatusJson {
  return {
    name,
    image: 'img',
    imageID: 'img',
    state,
    lastState: {},
    ready: false,
    started: 'running' in state,
    restartCount: 0,
    ...extra,
  };
}

function input(
  restartPolicy: RestartPolicy,
  init: Array<[ContainerStatusJson, boolean]>,
  containers: ContainerStatusJson[],
  terminal = false,
): PodStatusInput {
  return {
    restartPolicy,
    initContainers: init.map(([status, sidecar]) => ({ status, sidecar })),
    containers,
    sandboxReady: true,
    terminal,
    readinessGates: [],
    currentConditions: [],
    podIp: '127.1.0.2',
    hostIp: '127.1.0.1',
    startTime: T,
    now: T,
  };
}

describe('podPhase', () => {
  const cases: Array<[string, PodStatusInput, string]> = [
    [
      'a pod whose containers are still being created is Pending',
      input('Always', [], [cs('a', waiting('ContainerCreating'))]),
      'Pending',
    ],
    [
      'a running init container keeps the pod Pending',
      input('Always', [[cs('i', running), false]], [cs('a', waiting('PodInitializing'))]),
      'Pending',
    ],
    [
      'a running container makes the pod Running',
      input('Always', [[cs('i', exited(0)), false]], [cs('a', running)]),
      'Running',
    ],
    [
      'a failed init container fails a Never pod',
      input('Never', [[cs('i', exited(1)), false]], [cs('a', waiting('PodInitializing'))]),
      'Failed',
    ],
    [
      'a failed init container of an Always pod keeps it Pending',
      input('Always', [[cs('i', exited(1)), false]], [cs('a', waiting('PodInitializing'))]),
      'Pending',
    ],
    [
      'an init container waiting in crash-loop back-off keeps an OnFailure pod Pending',
      input(
        'OnFailure',
        [[cs('i', waiting('CrashLoopBackOff'), { lastState: exited(1), restartCount: 1 }), false]],
        [cs('a', waiting('PodInitializing'))],
      ),
      'Pending',
    ],
    [
      'the second init container still waiting keeps the pod Pending after the first completed',
      input(
        'Always',
        [
          [cs('i1', exited(0)), false],
          [cs('i2', waiting('PodInitializing')), false],
        ],
        [cs('a', waiting('PodInitializing'))],
      ),
      'Pending',
    ],
    [
      'a failed init container fails a Never pod even once the node marked it terminal',
      input('Never', [[cs('i', exited(1)), false]], [cs('a', waiting('PodInitializing'))], true),
      'Failed',
    ],
    [
      'a sidecar that has not started keeps the pod Pending',
      input('Always', [[cs('s', running, { started: false }), true]], [cs('a', waiting('PodInitializing'))]),
      'Pending',
    ],
    [
      'a container in crash loop back-off still counts as Running under Always',
      input('Always', [], [cs('a', waiting('CrashLoopBackOff'), { lastState: exited(1) })]),
      'Running',
    ],
    [
      'all containers exiting 0 under Never is Succeeded',
      input('Never', [], [cs('a', exited(0)), cs('b', exited(0))]),
      'Succeeded',
    ],
    [
      'one container exiting non-zero under Never is Failed',
      input('Never', [], [cs('a', exited(0)), cs('b', exited(2))]),
      'Failed',
    ],
    [
      'all containers exiting 0 under OnFailure is Succeeded',
      input('OnFailure', [], [cs('a', exited(0))]),
      'Succeeded',
    ],
    [
      'a failed container under OnFailure will restart so the pod stays Running',
      input('OnFailure', [], [cs('a', exited(1))]),
      'Running',
    ],
    ['an exited container under Always stays Running', input('Always', [], [cs('a', exited(0))]), 'Running'],
    [
      'a terminal pod whose containers all exited 0 is Succeeded even under Always',
      input('Always', [], [cs('a', exited(0))], true),
      'Succeeded',
    ],
    [
      'a terminal pod with a killed container is Failed',
      input('Always', [], [cs('a', exited(137))], true),
      'Failed',
    ],
  ];
  it.each(cases)('%s', (_name, i, expected) => {
    expect(podPhase(i)).toBe(expected);
  });
});

describe('computePodStatus', () => {
  function cond(
    i: PodStatusInput,
    type: string,
  ): { status: string; reason?: string; message?: string; lastTransitionTime: string } | undefined {
    return computePodStatus(i).conditions.find((c) => c.type === type);
  }

  it('reports Ready when every container is ready', () => {
    const i = input('Always', [], [cs('a', running, { ready: true })]);
    expect(cond(i, 'Ready')?.status).toBe('True');
    expect(cond(i, 'ContainersReady')?.status).toBe('True');
  });

  it('names the unready containers in the Ready condition', () => {
    const i = input('Always', [], [cs('a', running, { ready: true }), cs('b', running)]);
    expect(cond(i, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'ContainersNotReady',
      message: 'containers with unready status: [b]',
    });
  });

  it('names the incomplete init containers in the Initialized condition', () => {
    const i = input(
      'Always',
      [
        [cs('i1', exited(0)), false],
        [cs('i2', running), false],
      ],
      [cs('a', waiting('PodInitializing'))],
    );
    expect(cond(i, 'Initialized')).toMatchObject({
      status: 'False',
      reason: 'ContainersNotInitialized',
      message: 'containers with incomplete status: [i2]',
    });
  });

  it('marks a completed pod not ready with reason PodCompleted', () => {
    const i = input('Never', [], [cs('a', exited(0))]);
    expect(cond(i, 'Ready')).toMatchObject({ status: 'False', reason: 'PodCompleted' });
  });

  it('keeps a condition transition time while its status is unchanged', () => {
    const i = { ...input('Always', [], [cs('a', running, { ready: true })]), now: '2026-02-02T00:00:00Z' };
    i.currentConditions = [
      { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: '2025-12-31T00:00:00Z' },
    ];
    expect(cond(i, 'Ready')?.lastTransitionTime).toBe('2025-12-31T00:00:00Z');
    expect(cond(i, 'ContainersReady')?.lastTransitionTime).toBe('2026-02-02T00:00:00Z');
  });

  it('keeps conditions owned by other components such as the scheduler', () => {
    const i = input('Always', [], [cs('a', running)]);
    i.currentConditions = [
      {
        type: 'PodScheduled',
        status: 'True',
        lastProbeTime: null,
        lastTransitionTime: '2025-01-01T00:00:00Z',
      },
    ];
    expect(cond(i, 'PodScheduled')?.lastTransitionTime).toBe('2025-01-01T00:00:00Z');
  });

  it('holds Ready false while a readiness gate is not true', () => {
    const i = {
      ...input('Always', [], [cs('a', running, { ready: true })]),
      readinessGates: ['example.com/gate'],
    };
    expect(cond(i, 'Ready')).toMatchObject({ status: 'False', reason: 'ReadinessGatesNotReady' });
  });

  it('writes the pod and host IPs', () => {
    const s = computePodStatus(input('Always', [], [cs('a', running)]));
    expect(s).toMatchObject({ podIP: '127.1.0.2', podIPs: [{ ip: '127.1.0.2' }], hostIP: '127.1.0.1' });
  });

  it('reports Initialized once every init container completed', () => {
    const i = input(
      'Always',
      [
        [cs('i1', exited(0)), false],
        [cs('i2', exited(0)), false],
      ],
      [cs('a', running)],
    );
    expect(cond(i, 'Initialized')?.status).toBe('True');
  });

  it('reports a Pod failed by its init container, once terminal, neither sandbox-ready nor initialized', () => {
    const failed = (terminal: boolean) =>
      input('Never', [[cs('i', exited(1)), false]], [cs('a', waiting('PodInitializing'))], terminal);
    expect(cond(failed(true), 'PodReadyToStartContainers')?.status).toBe('False');
    expect(cond(failed(true), 'Initialized')).toMatchObject({
      status: 'False',
      message: 'containers with incomplete status: [i]',
    });
  });

  it('keeps termination messages, in state and lastState, within the 12 KiB a Pod has, split evenly', () => {
    const long = 'm'.repeat(5000);
    const withMessage = (exitCode: number): ContainerStateJson => ({
      terminated: { exitCode, reason: 'Error', finishedAt: T, message: long },
    });
    const s = computePodStatus(
      input(
        'Always',
        [[cs('i', withMessage(0)), false]],
        [cs('a', waiting('CrashLoopBackOff'), { lastState: withMessage(1) }), cs('b', withMessage(0))],
      ),
    );
    const message = (st: ContainerStateJson | Record<string, never>) =>
      'terminated' in st ? (st as { terminated: { message?: string } }).terminated.message : undefined;
    expect(message(s.initContainerStatuses[0]!.state)).toBe('m'.repeat(4096));
    expect(message(s.containerStatuses[0]!.lastState)).toBe('m'.repeat(4096));
    expect(message(s.containerStatuses[1]!.state)).toBe('m'.repeat(4096));
    const one = computePodStatus(input('Never', [], [cs('a', withMessage(0))]));
    expect(message(one.containerStatuses[0]!.state)).toBe(long);
  });

  it('reports an init container ready once it exited 0, and not while it runs or after it failed', () => {
    const s = computePodStatus(
      input(
        'Always',
        [
          [cs('done', exited(0)), false],
          [cs('failed', exited(1)), false],
          [cs('busy', running), false],
        ],
        [cs('a', waiting('PodInitializing'))],
      ),
    );
    expect(s.initContainerStatuses.map((c) => [c.name, c.ready])).toEqual([
      ['done', true],
      ['failed', false],
      ['busy', false],
    ]);
  });
});
