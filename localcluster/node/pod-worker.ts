// Runs one Pod on this node from sandbox to final DELETE; the only writer of that Pod's status, and it writes only changes.
// Over 400 lines and not split: it is the process-backed node runtime, which real nodes replace (issue 14).
import { accessSync, constants as fsConstants, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { CoreV1Api, V1Container, V1Pod, V1Probe } from '@kubernetes/client-node';
import { resolveContainerCommand } from './container-command';
import {
  baseContainerEnv,
  ContainerConfigError,
  effectiveRunAsUser,
  expandCommand,
  referencedEnvObjects,
  resolveContainerEnv,
} from './container-env';
import type { ApiServerAddress, EnvSources } from './container-env';
import { spawnContainer, stopContainer } from './container-process';
import type { ContainerExit, ContainerProcess } from './container-process';
import { planRestart } from './crash-loop-back-off';
import type { BackOffConfig, BackOffEntry } from './crash-loop-back-off';
import { expandVars } from './expand-vars';
import type { BindMount } from './mount-script';
import type { NodeGate } from './node-gate';
import { isDirectory, materialisePodVolumes, removePodVolumes, VolumeNotReadyError } from './pod-volumes';
import type { MaterialisedVolume } from './pod-volumes';
import { computePodStatus, statusChanged } from './pod-status';
import type {
  ConditionJson,
  ContainerStatusJson,
  PodStatusJson,
  RestartPolicy,
  TerminatedState,
} from './pod-status';
import { runProbe } from './probe-runner';
import {
  logOffset,
  messageFilePath,
  prepareTerminationFile,
  readLogTail,
  readMessageFile,
  removeTerminationFiles,
  terminationDir,
} from './termination-files';
import { DEFAULT_TERMINATION_MESSAGE_PATH, terminationMessage } from './termination-message';
import type { TerminationMessagePolicy } from './termination-message';
import { rfc3339 } from './rfc3339';
import type { ProbeTarget } from './probe-runner';
import { initialProbeCounter, probeTimings, recordProbeOutcome } from './probe-state';
import type { ProbeKind, ProbeResult } from './probe-state';
import type { ImageResolution, ImageTable } from './types';

export interface PodWorkerDeps {
  core: CoreV1Api;
  nodeName: string;
  hostIp: string;
  stateDir: string;
  images: ImageTable;
  allocatePodIp: () => string;
  releasePodIp: (ip: string) => void;
  /** See NodeAgentOptions.announcePodAddress. */
  announcePodAddress?: (pod: V1Pod, ip: string) => Promise<void>;
  log: (line: string) => void;
  backOff: BackOffConfig;
  nodeCpuCores: number;
  nodeMemoryBytes: number;
  /** Where in-cluster clients find the apiserver (KUBERNETES_SERVICE_HOST/PORT). */
  apiServer?: ApiServerAddress;
  gate: NodeGate;
  /** Called once the worker has nothing left to do (Pod deleted and cleaned up). */
  onFinished: (uid: string) => void;
}

type Role = 'init' | 'sidecar' | 'app';

interface ContainerSlot {
  spec: V1Container;
  role: Role;
  status: ContainerStatusJson;
  proc?: ContainerProcess;
  env?: Record<string, string>;
  image?: ImageResolution;
  lastExit?: TerminatedState;
  backOff?: BackOffEntry;
  pullFailures: number;
  everStarted: boolean;
  probeStops: Array<() => void>;
  /** Where the running instance's output starts in the appended log (its log fallback reads only that part). */
  logOffset: number;
}

type LoopEnd = 'succeeded' | 'failed' | 'stopped';

const SYSTEM_PATH = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];
const RETRY_MS = 3000;

function toIso(v: unknown): string {
  return v instanceof Date ? rfc3339(v) : String(v ?? '');
}

function apiCode(e: unknown): number | undefined {
  return typeof e === 'object' && e !== null && 'code' in e ? (e as { code: number }).code : undefined;
}

function errorText(e: unknown): string {
  if (typeof e === 'object' && e !== null && 'body' in e) return String((e as { body: unknown }).body);
  return e instanceof Error ? e.message : String(e);
}

function executable(path: string): boolean {
  try {
    accessSync(path, fsConstants.X_OK);
    return !isDirectory(path);
  } catch {
    return false;
  }
}

export function podDirName(pod: V1Pod): string {
  return `${pod.metadata?.namespace}_${pod.metadata?.name}_${pod.metadata?.uid}`;
}

export class PodWorker {
  private pod: V1Pod;
  readonly uid: string;
  readonly podDir: string;
  private ip?: string;
  private sandboxReady = false;
  private volumes = new Map<string, MaterialisedVolume>();
  private readonly tokens = new Map<string, { token: string; issuedAt: number; expiresAt: number }>();
  private readonly slots: ContainerSlot[];
  private terminating = false;
  private terminal = false;
  private gone = false;
  private completedBefore: boolean;
  private readonly abort = new AbortController();
  private readonly startTime = rfc3339(new Date());
  private lastWritten?: PodStatusJson;
  private flushTimer?: NodeJS.Timeout;
  private writing: Promise<void> = Promise.resolve();
  private refreshTimer?: NodeJS.Timeout;
  private readonly running: Promise<void>;
  private termination?: Promise<void>;

  constructor(
    pod: V1Pod,
    private readonly deps: PodWorkerDeps,
  ) {
    this.pod = pod;
    this.uid = pod.metadata?.uid ?? '';
    this.podDir = join(deps.stateDir, 'pods', podDirName(pod));
    const phase = pod.status?.phase;
    this.completedBefore = phase === 'Succeeded' || phase === 'Failed';
    const hasInit = (pod.spec?.initContainers ?? []).length > 0;
    const previous = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
    const slot = (spec: V1Container, role: Role): ContainerSlot => ({
      spec,
      role,
      status: {
        name: spec.name,
        image: spec.image ?? '',
        imageID: '',
        state: { waiting: { reason: role === 'app' && !hasInit ? 'ContainerCreating' : 'PodInitializing' } },
        lastState: {},
        ready: false,
        started: false,
        restartCount: previous.find((p) => p.name === spec.name)?.restartCount ?? 0,
      },
      pullFailures: 0,
      everStarted: false,
      probeStops: [],
      logOffset: 0,
    });
    this.slots = [
      ...(pod.spec?.initContainers ?? []).map((c) =>
        slot(c, c.restartPolicy === 'Always' ? 'sidecar' : 'init'),
      ),
      ...(pod.spec?.containers ?? []).map((c) => slot(c, 'app')),
    ];
    this.running = this.completedBefore
      ? Promise.resolve()
      : this.run().catch((e: unknown) => this.deps.log(`pod ${this.name}: worker failed: ${errorText(e)}`));
    if (pod.metadata?.deletionTimestamp) void this.terminate(true);
  }

  get name(): string {
    return `${this.pod.metadata?.namespace}/${this.pod.metadata?.name}`;
  }

  private get restartPolicy(): RestartPolicy {
    return (this.pod.spec?.restartPolicy as RestartPolicy | undefined) ?? 'Always';
  }

  /** A newer version of the Pod arrived from the watch. */
  update(pod: V1Pod): void {
    this.pod = pod;
    if (pod.metadata?.deletionTimestamp) void this.terminate(true);
  }

  /** The Pod is gone from the API (force-deleted): stop everything, nothing left to write. */
  removed(): Promise<void> {
    this.gone = true;
    return this.terminate(false);
  }

  findSlot(container: string | undefined): ContainerSlot | undefined {
    return this.slots.find((s) => (container === undefined ? s.role === 'app' : s.spec.name === container));
  }

  signalContainer(container: string | undefined, sig: NodeJS.Signals): boolean {
    const slot = this.findSlot(container);
    if (slot?.proc === undefined) return false;
    slot.proc.signal(sig);
    return true;
  }

  /** Node down: every process dies at once; the container loops wait for the node to come back. */
  killAll(): void {
    for (const slot of this.slots) {
      this.stopProbes(slot);
      slot.proc?.signal('SIGKILL');
    }
  }

  /** Node up: write whatever changed while down. */
  resync(pod: V1Pod | undefined): void {
    if (pod !== undefined) this.update(pod);
    this.changed();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.abort.signal.aborted) return resolve();
      const timer = setTimeout(resolve, ms);
      this.abort.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private async run(): Promise<void> {
    if (!(await this.setUpSandbox())) return;
    const loops: Array<Promise<LoopEnd>> = [];
    for (const slot of this.slots.filter((s) => s.role !== 'app')) {
      if (slot.role === 'sidecar') {
        loops.push(this.containerLoop(slot));
        while (!slot.status.started && !this.terminating) await this.sleep(100);
      } else {
        const end = await this.containerLoop(slot);
        // An init container that failed for good (restartPolicy Never) fails the Pod: no app container ever starts.
        if (end === 'failed') return this.finish(loops);
        if (end !== 'succeeded') return;
      }
      if (this.terminating) return;
    }
    for (const slot of this.slots.filter((s) => s.role === 'app'))
      if ('waiting' in slot.status.state) slot.status.state = { waiting: { reason: 'ContainerCreating' } };
    await Promise.all(this.slots.filter((s) => s.role === 'app').map((s) => this.containerLoop(s)));
    if (this.terminating) return;
    // Every app container is done for good (Never/OnFailure).
    await this.finish(loops);
  }

  /** The Pod is terminal: sidecars are stopped and nothing runs again. */
  private async finish(sidecarLoops: Array<Promise<LoopEnd>>): Promise<void> {
    this.terminal = true;
    await Promise.all(this.slots.filter((s) => s.role === 'sidecar' && s.proc).map((s) => this.stopSlot(s)));
    await Promise.all(sidecarLoops);
    this.changed();
  }

  private async setUpSandbox(): Promise<boolean> {
    while (!this.terminating) {
      await this.deps.gate.waitUp();
      if (this.terminating) return false;
      try {
        if (this.ip === undefined) {
          this.ip = this.deps.allocatePodIp();
          // Best effort: a Pod whose name resolves a moment late still starts (its process retries the lookup).
          await this.deps
            .announcePodAddress?.(this.pod, this.ip)
            .catch((e: unknown) =>
              this.deps.log(`pod ${this.name}: announcing its address: ${errorText(e)}`),
            );
        }
        mkdirSync(this.podDir, { recursive: true });
        this.volumes = await materialisePodVolumes(this.volumeContext());
        this.sandboxReady = true;
        this.changed();
        this.scheduleVolumeRefresh();
        return true;
      } catch (e) {
        const message = e instanceof VolumeNotReadyError ? e.message : errorText(e);
        this.deps.log(`pod ${this.name}: volumes not ready: ${message}`);
        this.changed();
        await this.sleep(RETRY_MS);
      }
    }
    return false;
  }

  private volumeContext(): Parameters<typeof materialisePodVolumes>[0] {
    return {
      core: this.deps.core,
      pod: this.pod,
      podDir: this.podDir,
      facts: { podIp: this.ip ?? '', hostIp: this.deps.hostIp },
      tokens: this.tokens,
      now: Date.now,
    };
  }

  /** Secrets, ConfigMaps, downward API files and tokens are kept current, as the kubelet's periodic sync does. */
  private scheduleVolumeRefresh(): void {
    this.refreshTimer = setTimeout(() => {
      if (this.terminating) return;
      const refresh = this.deps.gate.isUp()
        ? materialisePodVolumes(this.volumeContext()).then((v) => void (this.volumes = v))
        : Promise.resolve();
      refresh
        .catch((e: unknown) => this.deps.log(`pod ${this.name}: volume refresh failed: ${errorText(e)}`))
        .finally(() => this.scheduleVolumeRefresh());
    }, 60_000);
    this.refreshTimer.unref();
  }

  private async containerLoop(slot: ContainerSlot): Promise<LoopEnd> {
    for (;;) {
      await this.deps.gate.waitUp();
      if (this.terminating) return 'stopped';
      const started = await this.startContainer(slot);
      if (started === 'retry') continue;
      const exit =
        started === 'started' && slot.proc
          ? await this.awaitExit(slot, slot.proc)
          : started === 'started'
            ? undefined
            : started;
      if (exit === undefined || this.terminating) return 'stopped';
      await this.deps.gate.waitUp();
      if (this.terminating) return 'stopped';
      const ok = exit.exitCode === 0;
      const policy = this.restartPolicy;
      const restart =
        slot.role === 'sidecar' ||
        (slot.role === 'init'
          ? !ok && policy !== 'Never'
          : policy === 'Always' || (policy === 'OnFailure' && !ok));
      if (!restart) return ok ? 'succeeded' : 'failed';
      const plan = planRestart(slot.backOff, exit.finishedAt.getTime(), Date.now(), this.deps.backOff);
      if (plan.delayMs > 0) {
        const md = this.pod.metadata ?? {};
        const seconds = Math.round((slot.backOff?.backOffMs ?? plan.delayMs) / 1000);
        const message = `back-off ${seconds}s restarting failed container=${slot.spec.name} pod=${md.name}_${md.namespace}(${md.uid})`;
        slot.status = {
          ...slot.status,
          state: { waiting: { reason: 'CrashLoopBackOff', message } },
          lastState: slot.lastExit ?? {},
        };
        this.changed();
        await this.sleep(plan.delayMs);
      }
      slot.backOff = plan.next;
    }
  }

  private async awaitExit(slot: ContainerSlot, proc: ContainerProcess): Promise<ContainerExit> {
    const exit = await proc.exited;
    this.stopProbes(slot);
    slot.proc = undefined;
    const terminated: TerminatedState = {
      terminated: {
        exitCode: exit.exitCode,
        reason: exit.exitCode === 0 ? 'Completed' : 'Error',
        startedAt: rfc3339(proc.startedAt),
        finishedAt: rfc3339(exit.finishedAt),
        containerID: slot.status.containerID,
      },
    };
    if (exit.signal !== undefined) terminated.terminated.signal = exit.signal;
    const message = this.terminationMessageOf(slot, exit.exitCode);
    if (message !== undefined) terminated.terminated.message = message;
    slot.lastExit = terminated;
    slot.status = { ...slot.status, state: terminated, ready: false, started: false };
    this.deps.log(`pod ${this.name}: container ${slot.spec.name} exited with ${exit.exitCode}`);
    this.changed();
    return exit;
  }

  private logPath(slot: ContainerSlot): string {
    return join(this.podDir, `${slot.spec.name}.log`);
  }

  private terminationMessageOf(slot: ContainerSlot, exitCode: number): string | undefined {
    const hostPath = messageFilePath(terminationDir(this.podDir, slot.spec.name));
    const policy = slot.spec.terminationMessagePolicy as TerminationMessagePolicy | undefined;
    return terminationMessage({
      policy: policy ?? 'File',
      exitCode,
      couldNotRun: false,
      file: readMessageFile(hostPath),
      hostPath,
      logTail: () => readLogTail(this.logPath(slot), slot.logOffset),
    });
  }

  private setWaiting(slot: ContainerSlot, reason: string, message: string): void {
    slot.status = { ...slot.status, state: { waiting: { reason, message } }, ready: false, started: false };
    this.changed();
  }

  private async envSources(container: V1Container): Promise<EnvSources> {
    const refs = referencedEnvObjects(container);
    const namespace = this.pod.metadata?.namespace ?? 'default';
    const sources: EnvSources = { secrets: new Map(), configMaps: new Map() };
    const absent = (e: unknown): undefined => {
      if (apiCode(e) === 404) return undefined;
      throw e;
    };
    for (const name of refs.secrets) {
      const s = await this.deps.core.readNamespacedSecret({ name, namespace }).catch(absent);
      sources.secrets.set(
        name,
        s
          ? Object.fromEntries(
              Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]),
            )
          : undefined,
      );
    }
    for (const name of refs.configMaps) {
      const c = await this.deps.core.readNamespacedConfigMap({ name, namespace }).catch(absent);
      sources.configMaps.set(name, c ? { ...(c.data ?? {}) } : undefined);
    }
    return sources;
  }

  private baseEnv(slot: ContainerSlot, image: ImageResolution): Record<string, string> {
    return baseContainerEnv({
      imagePath: image.path,
      systemPath: SYSTEM_PATH,
      hostname: this.pod.spec?.hostname ?? this.pod.metadata?.name ?? '',
      runAsUser: effectiveRunAsUser(this.pod, slot.spec),
      apiServer: this.deps.apiServer,
    });
  }

  private mountsFor(slot: ContainerSlot, env: Record<string, string>): BindMount[] {
    const mounts: BindMount[] = [];
    for (const vm of slot.spec.volumeMounts ?? []) {
      const volume = this.volumes.get(vm.name);
      if (volume === undefined) {
        this.deps.log(
          `pod ${this.name}: container ${slot.spec.name} mounts unsupported volume ${vm.name}; skipped`,
        );
        continue;
      }
      const sub = vm.subPathExpr ? expandVars(vm.subPathExpr, (n) => env[n]) : vm.subPath;
      let source = volume.hostPath;
      if (sub) {
        source = join(volume.hostPath, sub);
        if (!volume.readOnly) mkdirSync(source, { recursive: true });
      }
      mounts.push({
        source,
        target: vm.mountPath,
        readOnly: volume.readOnly || (vm.readOnly ?? false),
        file: !isDirectory(source),
      });
    }
    return mounts;
  }

  /** 'started', 'retry' (waiting state set, already slept) or the exit of a container that could not start. */
  private async startContainer(slot: ContainerSlot): Promise<'started' | 'retry' | ContainerExit> {
    const imageName = slot.spec.image ?? '';
    const image = this.deps.images(imageName);
    if (image === undefined) {
      slot.pullFailures++;
      const why = `failed to resolve reference "${imageName}": not in this node's image table`;
      this.setWaiting(slot, 'ErrImagePull', `Failed to pull image "${imageName}": ${why}`);
      await this.sleep(1000);
      if (this.terminating) return 'retry';
      this.setWaiting(
        slot,
        'ImagePullBackOff',
        `Back-off pulling image "${imageName}": ErrImagePull: ${why}`,
      );
      await this.sleep(
        Math.min(this.deps.backOff.initialMs * 2 ** (slot.pullFailures - 1), this.deps.backOff.maxMs),
      );
      return 'retry';
    }
    slot.pullFailures = 0;
    let env: Record<string, string>;
    try {
      const facts = {
        podIp: this.ip ?? '',
        hostIp: this.deps.hostIp,
        nodeCpuCores: this.deps.nodeCpuCores,
        nodeMemoryBytes: this.deps.nodeMemoryBytes,
      };
      env = resolveContainerEnv(
        this.pod,
        slot.spec,
        await this.envSources(slot.spec),
        facts,
        this.baseEnv(slot, image),
      );
    } catch (e) {
      const message = e instanceof ContainerConfigError ? e.message : errorText(e);
      this.setWaiting(slot, 'CreateContainerConfigError', message);
      await this.sleep(RETRY_MS);
      return 'retry';
    }
    const fallbackPath = SYSTEM_PATH;
    const resolved = resolveContainerCommand(
      image,
      expandCommand(slot.spec.command, env),
      expandCommand(slot.spec.args, env),
      fallbackPath,
      executable,
    );
    const now = new Date();
    if ('error' in resolved) {
      const state: TerminatedState = {
        terminated: {
          exitCode: 128,
          reason: 'StartError',
          message: `failed to create containerd task: ${resolved.error}`,
          startedAt: '1970-01-01T00:00:00Z',
          finishedAt: rfc3339(now),
        },
      };
      if (slot.everStarted) slot.status.restartCount++;
      slot.everStarted = true;
      slot.lastExit = state;
      slot.status = { ...slot.status, state, ready: false, started: false };
      this.changed();
      return { exitCode: 128, finishedAt: now };
    }
    const workingDir = slot.spec.workingDir ?? join(this.podDir, 'work', slot.spec.name);
    // The node's default working folder is made here, not by the container: under a checkout that the
    // container sees read-only (an image folder bound back over a volume) it could not make it itself.
    if (slot.spec.workingDir === undefined) mkdirSync(workingDir, { recursive: true });
    const logPath = this.logPath(slot);
    slot.logOffset = logOffset(logPath);
    const proc = spawnContainer({
      argv: resolved.argv,
      env,
      mounts: this.mountsFor(slot, env),
      workingDir,
      logPath,
      termination: prepareTerminationFile(
        terminationDir(this.podDir, slot.spec.name),
        slot.spec.terminationMessagePath || DEFAULT_TERMINATION_MESSAGE_PATH,
      ),
      ...(image.roots ? { imageRoots: image.roots } : {}),
    });
    if (slot.everStarted) slot.status.restartCount++;
    slot.everStarted = true;
    slot.proc = proc;
    slot.env = env;
    slot.image = image;
    const hasStartup = slot.spec.startupProbe !== undefined;
    slot.status = {
      ...slot.status,
      imageID: `process://${resolved.argv[0] ?? ''}`,
      containerID: `process://${this.uid}/${slot.spec.name}/${proc.pid}`,
      state: { running: { startedAt: rfc3339(proc.startedAt) } },
      lastState: slot.lastExit ?? {},
      started: !hasStartup,
      ready: !hasStartup && slot.spec.readinessProbe === undefined && slot.role !== 'init',
    };
    this.deps.log(
      `pod ${this.name}: started container ${slot.spec.name} pid ${proc.pid}: ${resolved.argv.join(' ')}`,
    );
    this.startProbes(slot, proc);
    this.changed();
    return 'started';
  }

  private startProbes(slot: ContainerSlot, proc: ContainerProcess): void {
    if (slot.role === 'init') return;
    const image = slot.image;
    const target: ProbeTarget = {
      podIp: this.ip ?? '127.0.0.1',
      ports: slot.spec.ports ?? [],
      pid: proc.pid,
      env: slot.env ?? {},
      resolveArgv: (command) => {
        if (image === undefined) return undefined;
        const r = resolveContainerCommand(image, command, undefined, SYSTEM_PATH, executable);
        return 'argv' in r ? r.argv : undefined;
      },
    };
    const afterStart = (): void => {
      slot.status = { ...slot.status, started: true, ready: slot.spec.readinessProbe === undefined };
      this.changed();
      const liveness = slot.spec.livenessProbe;
      if (liveness)
        this.probeLoop(
          slot,
          'liveness',
          liveness,
          target,
          (r, msg) => r === 'failure' && this.killForProbe(slot, proc, 'Liveness', liveness, msg),
        );
      const readiness = slot.spec.readinessProbe;
      if (readiness)
        this.probeLoop(slot, 'readiness', readiness, target, (r) => {
          slot.status = { ...slot.status, ready: r === 'success' };
          this.changed();
        });
    };
    const startup = slot.spec.startupProbe;
    if (startup === undefined) return afterStart();
    const stop = this.probeLoop(slot, 'startup', startup, target, (r, msg) => {
      if (r === 'success') {
        stop();
        afterStart();
      } else if (r === 'failure') this.killForProbe(slot, proc, 'Startup', startup, msg);
    });
  }

  private probeLoop(
    slot: ContainerSlot,
    kind: ProbeKind,
    probe: V1Probe,
    target: ProbeTarget,
    onChange: (r: ProbeResult, message?: string) => void,
  ): () => void {
    const t = probeTimings(probe);
    let counter = initialProbeCounter(kind);
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    const tick = async (): Promise<void> => {
      if (stopped) return;
      if (this.deps.gate.isUp()) {
        const outcome = await runProbe(probe, target, t.timeoutMs);
        if (stopped) return;
        const before = counter.result;
        counter = recordProbeOutcome(counter, outcome.ok, t);
        if (counter.result !== before) onChange(counter.result, outcome.message);
      }
      if (!stopped) timer = setTimeout(() => void tick(), t.periodMs);
    };
    timer = setTimeout(() => void tick(), t.initialDelayMs);
    const stop = (): void => {
      stopped = true;
      clearTimeout(timer);
    };
    slot.probeStops.push(stop);
    return stop;
  }

  private killForProbe(
    slot: ContainerSlot,
    proc: ContainerProcess,
    kind: string,
    probe: V1Probe,
    message: string | undefined,
  ): void {
    if (slot.proc !== proc || this.terminating) return;
    this.deps.log(
      `pod ${this.name}: container ${slot.spec.name} failed ${kind.toLowerCase()} probe (${message ?? 'no message'}), will be restarted`,
    );
    this.stopProbes(slot);
    const graceS = probe.terminationGracePeriodSeconds ?? this.pod.spec?.terminationGracePeriodSeconds ?? 30;
    void stopContainer(proc, graceS * 1000);
  }

  private stopProbes(slot: ContainerSlot): void {
    for (const stop of slot.probeStops) stop();
    slot.probeStops = [];
  }

  private async stopSlot(slot: ContainerSlot, graceMs?: number): Promise<void> {
    this.stopProbes(slot);
    const proc = slot.proc;
    if (proc === undefined) return;
    const grace = graceMs ?? (this.pod.spec?.terminationGracePeriodSeconds ?? 30) * 1000;
    await stopContainer(proc, grace);
  }

  /** Graceful termination: SIGTERM, wait the grace period, SIGKILL, clean up, then (for a deleted Pod) the final DELETE. */
  terminate(deleteFromApi: boolean): Promise<void> {
    if (this.termination === undefined) {
      this.terminating = true;
      this.termination = this.doTerminate(deleteFromApi);
    }
    return this.termination;
  }

  private async doTerminate(deleteFromApi: boolean): Promise<void> {
    const md = this.pod.metadata ?? {};
    const graceMs =
      (md.deletionGracePeriodSeconds ?? this.pod.spec?.terminationGracePeriodSeconds ?? 30) * 1000;
    const deadline = Date.now() + graceMs;
    this.abort.abort();
    clearTimeout(this.refreshTimer);
    for (const slot of this.slots) this.stopProbes(slot);
    await Promise.all(this.slots.filter((s) => s.role === 'app').map((s) => this.stopSlot(s, graceMs)));
    await Promise.all(
      this.slots
        .filter((s) => s.role !== 'app')
        .map((s) => this.stopSlot(s, Math.max(0, deadline - Date.now()))),
    );
    await this.running;
    this.terminal = true;
    if (deleteFromApi && !this.gone) {
      await this.deps.gate.waitUp();
      this.changed();
      await this.flush();
    }
    removePodVolumes(this.podDir);
    removeTerminationFiles(this.podDir);
    if (this.ip !== undefined) this.deps.releasePodIp(this.ip);
    this.ip = undefined;
    if (deleteFromApi && !this.gone) await this.deleteFromApi();
    this.deps.log(`pod ${this.name}: terminated and cleaned up`);
    this.deps.onFinished(this.uid);
  }

  /** Agent stop: every process ends (SIGTERM, SIGKILL after a short grace); API objects and volumes stay as they are. */
  async shutdown(graceMs = 5000): Promise<void> {
    this.gone = true;
    this.terminating = true;
    this.abort.abort();
    clearTimeout(this.refreshTimer);
    clearTimeout(this.flushTimer);
    await Promise.all(this.slots.map((s) => this.stopSlot(s, graceMs)));
    await this.running;
    if (this.ip !== undefined) this.deps.releasePodIp(this.ip);
    this.ip = undefined;
  }

  private async deleteFromApi(): Promise<void> {
    const md = this.pod.metadata ?? {};
    for (let attempt = 0; attempt < 10; attempt++) {
      await this.deps.gate.waitUp();
      try {
        await this.deps.core.deleteNamespacedPod({
          name: md.name ?? '',
          namespace: md.namespace ?? '',
          gracePeriodSeconds: 0,
          body: { gracePeriodSeconds: 0, preconditions: { uid: this.uid } },
        });
        return;
      } catch (e) {
        const code = apiCode(e);
        if (code === 404 || code === 409) return;
        this.deps.log(`pod ${this.name}: final delete failed: ${errorText(e)}`);
        await new Promise((r) => setTimeout(r, 1000 * (attempt + 1)));
      }
    }
  }

  private changed(): void {
    if (this.flushTimer !== undefined || this.gone) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      void this.flush();
    }, 50);
  }

  private flush(): Promise<void> {
    this.writing = this.writing.then(() => this.writeStatus());
    return this.writing;
  }

  private currentConditions(): ConditionJson[] {
    const fromApi: ConditionJson[] = (this.pod.status?.conditions ?? []).map((c) => ({
      type: c.type,
      status: c.status as ConditionJson['status'],
      ...(c.reason !== undefined ? { reason: c.reason } : {}),
      ...(c.message !== undefined ? { message: c.message } : {}),
      lastProbeTime: null,
      lastTransitionTime: toIso(c.lastTransitionTime),
    }));
    if (this.lastWritten === undefined) return fromApi;
    const mine = new Set(this.lastWritten.conditions.map((c) => c.type));
    return [
      ...fromApi.filter((c) => !mine.has(c.type) || c.type === 'PodScheduled'),
      ...this.lastWritten.conditions.filter((c) => c.type !== 'PodScheduled'),
    ];
  }

  private computeStatus(): PodStatusJson {
    return computePodStatus({
      restartPolicy: this.restartPolicy,
      initContainers: this.slots
        .filter((s) => s.role !== 'app')
        .map((s) => ({ status: s.status, sidecar: s.role === 'sidecar' })),
      containers: this.slots.filter((s) => s.role === 'app').map((s) => s.status),
      sandboxReady: this.sandboxReady && this.ip !== undefined,
      terminal: this.terminal,
      readinessGates: (this.pod.spec?.readinessGates ?? []).map((g) => g.conditionType),
      currentConditions: this.currentConditions(),
      podIp: this.ip ?? this.lastWritten?.podIP,
      hostIp: this.deps.hostIp,
      startTime: this.pod.status?.startTime ? toIso(this.pod.status.startTime) : this.startTime,
      now: rfc3339(new Date()),
    });
  }

  private async writeStatus(): Promise<void> {
    if (this.gone || this.completedBefore || !this.deps.gate.isUp()) return;
    const status = this.computeStatus();
    if (!statusChanged(this.lastWritten, status)) return;
    const md = this.pod.metadata ?? {};
    try {
      await this.deps.core.patchNamespacedPodStatus(
        { name: md.name ?? '', namespace: md.namespace ?? '', body: { status } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      this.lastWritten = status;
    } catch (e) {
      if (apiCode(e) === 404) {
        this.gone = true;
        return;
      }
      this.deps.log(`pod ${this.name}: status write failed: ${errorText(e)}`);
      setTimeout(() => this.changed(), 1000).unref();
    }
  }
}
