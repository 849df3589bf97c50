// Computes a Pod's phase, conditions and container statuses from what the node observed; the kubelet's rules, nothing else.
import { messageBytesPerContainer, truncateMessage } from './termination-message';

export interface WaitingState {
  waiting: { reason: string; message?: string };
}
export interface RunningState {
  running: { startedAt: string };
}
export interface TerminatedState {
  terminated: {
    exitCode: number;
    signal?: number;
    reason: string;
    message?: string;
    startedAt?: string;
    finishedAt: string;
    containerID?: string;
  };
}
export type ContainerStateJson = WaitingState | RunningState | TerminatedState;

/** The JSON shape of a V1ContainerStatus as this node writes it (times as RFC 3339 strings). */
export interface ContainerStatusJson {
  name: string;
  image: string;
  imageID: string;
  containerID?: string;
  state: ContainerStateJson;
  lastState: ContainerStateJson | Record<string, never>;
  ready: boolean;
  started: boolean;
  restartCount: number;
}

export interface ConditionJson {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastProbeTime: null;
  lastTransitionTime: string;
}

export interface PodStatusJson {
  phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';
  conditions: ConditionJson[];
  hostIP: string;
  hostIPs: Array<{ ip: string }>;
  podIP?: string;
  podIPs?: Array<{ ip: string }>;
  startTime: string;
  initContainerStatuses: ContainerStatusJson[];
  containerStatuses: ContainerStatusJson[];
}

export type RestartPolicy = 'Always' | 'OnFailure' | 'Never';

export interface PodStatusInput {
  restartPolicy: RestartPolicy;
  /** Init containers in spec order, with whether each is a restartable (sidecar) init container. */
  initContainers: Array<{ status: ContainerStatusJson; sidecar: boolean }>;
  containers: ContainerStatusJson[];
  sandboxReady: boolean;
  /** Every container was stopped for good (deletion or completion): phase is then Succeeded or Failed. */
  terminal: boolean;
  readinessGates: string[];
  /** Conditions currently on the Pod, including ones other components own (PodScheduled, DisruptionTarget, gates). */
  currentConditions: ConditionJson[];
  podIp?: string;
  hostIp: string;
  startTime: string;
  now: string;
}

const OWNED_CONDITIONS = ['PodReadyToStartContainers', 'Initialized', 'ContainersReady', 'Ready'];

function lastTerminated(s: ContainerStatusJson): TerminatedState['terminated'] | undefined {
  return 'terminated' in s.lastState ? (s.lastState as TerminatedState).terminated : undefined;
}

/** The kubelet's getPhase, restricted to the states this node produces. */
export function podPhase(
  input: Pick<PodStatusInput, 'restartPolicy' | 'initContainers' | 'containers' | 'terminal'>,
): PodStatusJson['phase'] {
  let pendingInit = 0;
  let failedInit = 0;
  for (const { status, sidecar } of input.initContainers) {
    const st = status.state;
    if (sidecar) {
      if (!('running' in st && status.started)) pendingInit++;
      continue;
    }
    if ('running' in st) pendingInit++;
    else if ('terminated' in st) {
      if (st.terminated.exitCode !== 0) failedInit++;
    } else {
      const last = lastTerminated(status);
      if (last !== undefined) {
        if (last.exitCode !== 0) failedInit++;
      } else pendingInit++;
    }
  }
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const status of input.containers) {
    const st = status.state;
    if ('running' in st) running++;
    else if ('terminated' in st) {
      stopped++;
      if (st.terminated.exitCode === 0) succeeded++;
    } else if (lastTerminated(status) !== undefined) stopped++;
    else waiting++;
  }
  if (failedInit > 0 && input.restartPolicy === 'Never') return 'Failed';
  if (input.terminal && running === 0 && waiting === 0 && stopped > 0)
    return stopped === succeeded ? 'Succeeded' : 'Failed';
  if (pendingInit > 0 || failedInit > 0 || waiting > 0) return 'Pending';
  if (running > 0) return 'Running';
  if (stopped > 0) {
    if (input.restartPolicy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    if (input.restartPolicy === 'Never') return 'Failed';
    return 'Running';
  }
  return 'Pending';
}

function condition(
  type: string,
  ok: boolean,
  reason?: string,
  message?: string,
): Omit<ConditionJson, 'lastTransitionTime'> {
  const c: Omit<ConditionJson, 'lastTransitionTime'> = {
    type,
    status: ok ? 'True' : 'False',
    lastProbeTime: null,
  };
  if (!ok && reason !== undefined) c.reason = reason;
  if (!ok && message !== undefined) c.message = message;
  return c;
}

/** A sidecar counts once started; a plain init container once it exited 0, which is also when the kubelet calls it ready. */
function initCompleted(status: ContainerStatusJson, sidecar: boolean): boolean {
  if (sidecar) return status.started;
  const st = status.state;
  return 'terminated' in st && st.terminated.exitCode === 0;
}

function capState<S extends ContainerStateJson | Record<string, never>>(state: S, maxBytes: number): S {
  if (!('terminated' in state)) return state;
  const t = (state as TerminatedState).terminated;
  if (t.message === undefined) return state;
  const message = truncateMessage(t.message, maxBytes);
  return message === t.message ? state : ({ terminated: { ...t, message } } as S);
}

/** The kubelet's normalizeStatus: a Pod's termination messages share 12 KiB, each container an even part. */
export function capTerminationMessages(
  statuses: ContainerStatusJson[],
  containerCount: number,
): ContainerStatusJson[] {
  const maxBytes = messageBytesPerContainer(containerCount);
  return statuses.map((s) => {
    const state = capState(s.state, maxBytes);
    const lastState = capState(s.lastState, maxBytes);
    return state === s.state && lastState === s.lastState ? s : { ...s, state, lastState };
  });
}

export function computePodStatus(input: PodStatusInput): PodStatusJson {
  const phase = podPhase(input);
  const containerCount = input.initContainers.length + input.containers.length;
  const completed = phase === 'Succeeded' || phase === 'Failed';
  const incompleteInit = input.initContainers
    .filter((c) => !initCompleted(c.status, c.sidecar))
    .map((c) => c.status.name);
  const unready = [...input.initContainers.filter((c) => c.sidecar).map((c) => c.status), ...input.containers]
    .filter((s) => !s.ready)
    .map((s) => s.name);
  const initialized = incompleteInit.length === 0 || phase === 'Succeeded';
  const containersReady = unready.length === 0 && !completed;
  const missingGates = input.readinessGates.filter(
    (g) => !input.currentConditions.some((c) => c.type === g && c.status === 'True'),
  );
  const notReadyReason = completed ? 'PodCompleted' : 'ContainersNotReady';
  const notReadyMessage = completed ? undefined : `containers with unready status: [${unready.join(' ')}]`;
  const owned = [
    condition('PodReadyToStartContainers', input.sandboxReady && !(input.terminal && completed)),
    condition(
      'Initialized',
      initialized,
      'ContainersNotInitialized',
      `containers with incomplete status: [${incompleteInit.join(' ')}]`,
    ),
    condition('ContainersReady', containersReady, notReadyReason, notReadyMessage),
    containersReady && missingGates.length > 0
      ? condition(
          'Ready',
          false,
          'ReadinessGatesNotReady',
          `the status of pod readiness gate "${missingGates[0]}" is not "True"`,
        )
      : condition('Ready', containersReady, notReadyReason, notReadyMessage),
  ];
  const foreign = input.currentConditions.filter((c) => !OWNED_CONDITIONS.includes(c.type));
  if (!foreign.some((c) => c.type === 'PodScheduled'))
    foreign.unshift({
      type: 'PodScheduled',
      status: 'True',
      lastProbeTime: null,
      lastTransitionTime: input.startTime,
    });
  const conditions: ConditionJson[] = [
    ...foreign,
    ...owned.map((c) => {
      const previous = input.currentConditions.find((p) => p.type === c.type);
      const lastTransitionTime =
        previous !== undefined && previous.status === c.status ? previous.lastTransitionTime : input.now;
      return { ...c, lastTransitionTime };
    }),
  ];
  const status: PodStatusJson = {
    phase,
    conditions,
    hostIP: input.hostIp,
    hostIPs: [{ ip: input.hostIp }],
    startTime: input.startTime,
    initContainerStatuses: capTerminationMessages(
      input.initContainers.map((c) =>
        c.sidecar ? c.status : { ...c.status, ready: initCompleted(c.status, false) },
      ),
      containerCount,
    ),
    containerStatuses: capTerminationMessages(input.containers, containerCount),
  };
  if (input.podIp !== undefined) {
    status.podIP = input.podIp;
    status.podIPs = [{ ip: input.podIp }];
  }
  return status;
}

/** Whether two statuses differ in anything but times a kubelet would not rewrite on its own. */
export function statusChanged(previous: PodStatusJson | undefined, next: PodStatusJson): boolean {
  return previous === undefined || JSON.stringify(previous) !== JSON.stringify(next);
}
