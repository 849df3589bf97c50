import type { MemberProblem, ProblemClaim, ProblemPod } from './member-problems';
import { lastWords, memberProblem, PENDING_GRACE_MS, pullFailureCause } from './member-problems';

const NOW = Date.parse('2026-11-25T18:00:00Z');
const ago = (ms: number) => new Date(NOW - ms).toISOString();
const IMAGE = 'quay.io/coreos/etcd:v3.6.1';
const WHY = `failed to resolve reference "${IMAGE}": not found`;

const pod = (over: Partial<ProblemPod> = {}): ProblemPod => ({
  name: 'main-0',
  creationTimestamp: ago(60_000),
  conditions: [{ type: 'PodScheduled', status: 'True' }],
  etcd: { image: IMAGE },
  ...over,
});
const waiting = (
  reason: string,
  message?: string,
  lastTerminated?: { exitCode?: number; message?: string },
) =>
  pod({
    etcd: {
      image: IMAGE,
      waiting: { reason, ...(message ? { message } : {}) },
      ...(lastTerminated ? { lastTerminated } : {}),
    },
  });
const unschedulable = (forMs: number) =>
  pod({
    conditions: [
      {
        type: 'PodScheduled',
        status: 'False',
        reason: 'Unschedulable',
        message: '0/1 nodes are available: 1 Insufficient cpu.',
        lastTransitionTime: ago(forMs),
      },
    ],
  });
const claim = (over: Partial<ProblemClaim> = {}): ProblemClaim => ({
  name: 'data-main-0',
  phase: 'Bound',
  creationTimestamp: ago(60_000),
  ...over,
});

describe('memberProblem', () => {
  it.each<[string, ProblemPod | undefined, ProblemClaim | undefined, MemberProblem | undefined]>([
    ['a running Pod on a bound claim has none', pod(), claim(), undefined],
    ['a container being created has none', waiting('ContainerCreating'), claim(), undefined],
    [
      "ErrImagePull names the Pod, the image and the kubelet's cause",
      waiting('ErrImagePull', `Failed to pull image "${IMAGE}": ${WHY}`),
      claim(),
      { reason: 'ImagePullFailed', message: `Pod main-0 cannot pull image "${IMAGE}": ${WHY}` },
    ],
    [
      'ImagePullBackOff says the same as ErrImagePull, so status does not change between the two',
      waiting('ImagePullBackOff', `Back-off pulling image "${IMAGE}": ErrImagePull: ${WHY}`),
      claim(),
      { reason: 'ImagePullFailed', message: `Pod main-0 cannot pull image "${IMAGE}": ${WHY}` },
    ],
    [
      'an image pull failure without a message still says which',
      waiting('ImagePullBackOff'),
      undefined,
      { reason: 'ImagePullFailed', message: `Pod main-0 cannot pull image "${IMAGE}" (ImagePullBackOff)` },
    ],
    [
      "an init container's image that cannot be pulled is named with the container, while etcd only waits",
      pod({
        etcd: { image: IMAGE, waiting: { reason: 'PodInitializing' } },
        init: [
          {
            name: 'restore',
            image: 'agent:1',
            waiting: { reason: 'ErrImagePull', message: 'Failed to pull image "agent:1": not found' },
          },
        ],
      }),
      claim(),
      {
        reason: 'ImagePullFailed',
        message: 'Pod main-0 cannot pull image "agent:1" for init container restore: not found',
      },
    ],
    [
      'an init container that runs is no problem',
      pod({
        etcd: { image: IMAGE, waiting: { reason: 'PodInitializing' } },
        init: [{ name: 'restore', image: 'agent:1' }],
      }),
      claim(),
      undefined,
    ],
    [
      'a crash loop names the exit code and what etcd said last, without its timestamp',
      waiting('CrashLoopBackOff', 'back-off 40s restarting failed container=etcd pod=main-0_ns(uid)', {
        exitCode: 1,
        message:
          '{"level":"info","msg":"starting"}\n{"level":"fatal","ts":"2026-11-25T18:00:00Z","msg":"failed to start","error":"bad flag"}',
      }),
      claim(),
      {
        reason: 'MemberCrashLooping',
        message:
          'Pod main-0: etcd keeps exiting with exit code 1 (CrashLoopBackOff): failed to start: bad flag',
      },
    ],
    [
      'a Pod unschedulable for a moment is not reported yet',
      unschedulable(PENDING_GRACE_MS - 1000),
      claim(),
      undefined,
    ],
    [
      "a Pod unschedulable past the grace says the scheduler's message",
      unschedulable(PENDING_GRACE_MS),
      claim(),
      {
        reason: 'PodUnschedulable',
        message: 'Pod main-0 cannot be scheduled: 0/1 nodes are available: 1 Insufficient cpu.',
      },
    ],
    [
      'a claim Pending for a moment is not reported yet',
      pod(),
      claim({ phase: 'Pending', creationTimestamp: ago(1000) }),
      undefined,
    ],
    [
      'a claim Pending on a StorageClass that does not exist says so, before the Pod it holds back',
      unschedulable(60_000),
      claim({ phase: 'Pending', storageClassName: 'fast', classExists: false }),
      { reason: 'ClaimPending', message: 'claim data-main-0 is Pending: StorageClass "fast" does not exist' },
    ],
    [
      'a claim Pending on an existing class says no volume was bound yet',
      undefined,
      claim({ phase: 'Pending', storageClassName: 'slow', classExists: true }),
      {
        reason: 'ClaimPending',
        message: 'claim data-main-0 is Pending: no volume of StorageClass "slow" was bound to it yet',
      },
    ],
    [
      'a claim waiting for its first consumer is no problem while the Pod is placed',
      pod({ conditions: [] }),
      claim({
        phase: 'Pending',
        storageClassName: 'local-path',
        classExists: true,
        bindsOnFirstConsumer: true,
      }),
      undefined,
    ],
    [
      "a claim waiting for its first consumer yields to the scheduler's words on the Pod it waits for",
      unschedulable(60_000),
      claim({
        phase: 'Pending',
        storageClassName: 'local-path',
        classExists: true,
        bindsOnFirstConsumer: true,
      }),
      {
        reason: 'PodUnschedulable',
        message: 'Pod main-0 cannot be scheduled: 0/1 nodes are available: 1 Insufficient cpu.',
      },
    ],
    [
      'a claim binding immediately that stays Pending is said before an unschedulable Pod',
      unschedulable(60_000),
      claim({ phase: 'Pending', storageClassName: 'slow', classExists: true }),
      {
        reason: 'ClaimPending',
        message: 'claim data-main-0 is Pending: no volume of StorageClass "slow" was bound to it yet',
      },
    ],
    [
      'a claim on a missing class is said even when its class would bind on first consumer',
      unschedulable(60_000),
      claim({ phase: 'Pending', storageClassName: 'later', classExists: false, bindsOnFirstConsumer: true }),
      {
        reason: 'ClaimPending',
        message: 'claim data-main-0 is Pending: StorageClass "later" does not exist',
      },
    ],
    [
      'a claim whose node was picked but has no volume yet names the node',
      pod({ conditions: [] }),
      claim({
        phase: 'Pending',
        storageClassName: 'local-path',
        classExists: true,
        bindsOnFirstConsumer: true,
        selectedNode: 'node-b',
      }),
      {
        reason: 'ClaimPending',
        message:
          'claim data-main-0 is Pending: no volume of StorageClass "local-path" was provisioned for it on node node-b yet',
      },
    ],
    [
      'a claim whose node was picked a moment ago is not reported yet',
      pod({ conditions: [] }),
      claim({
        phase: 'Pending',
        creationTimestamp: ago(1000),
        storageClassName: 'local-path',
        classExists: true,
        bindsOnFirstConsumer: true,
        selectedNode: 'node-b',
      }),
      undefined,
    ],
    [
      'a claim Pending without a class says so',
      undefined,
      claim({ phase: 'Pending' }),
      {
        reason: 'ClaimPending',
        message: 'claim data-main-0 is Pending: it names no StorageClass and no volume was bound to it',
      },
    ],
  ])('%s', (_name, p, c, expected) => {
    expect(memberProblem(p, c, NOW)).toEqual(expected);
  });
});

describe('the words kept', () => {
  it.each([
    ['a kubelet pull message loses its prefix', `Failed to pull image "x": boom`, 'boom'],
    ['a back-off message loses both prefixes', `Back-off pulling image "x": ErrImagePull: boom`, 'boom'],
    ['anything else stays as it is', 'rpc error: code = NotFound', 'rpc error: code = NotFound'],
  ])('%s', (_name, message, cause) => {
    expect(pullFailureCause(message)).toBe(cause);
  });
  it.each([
    ['a plain last line', 'one\ntwo\n', 'two'],
    ['a JSON line without an error keeps its msg', '{"msg":"stopped","ts":"t"}', 'stopped'],
    ['no text', undefined, undefined],
    [
      "a panic's stack trace after etcd's line: etcd's panic-level line says why",
      [
        '{"level":"info","ts":"t1","msg":"applied"}',
        '{"level":"panic","ts":"t2","caller":"wal/wal.go:800","msg":"failed to write WAL","error":"write /var/lib/etcd/member/wal/0.tmp: no space left on device","stacktrace":"go.etcd.io/etcd/server/v3/storage/wal.(*WAL).Save\\n\\t/wal.go:800"}',
        'panic: failed to write WAL',
        '',
        'goroutine 177 [running]:',
        'go.uber.org/zap/zapcore.CheckWriteAction.OnWrite(0x2, 0xc0001, {0x0, 0x0, 0x0})',
        '\t/go/pkg/mod/go.uber.org/zap@v1.27.0/zapcore/entry.go:196 +0x65',
      ].join('\n'),
      'failed to write WAL: write /var/lib/etcd/member/wal/0.tmp: no space left on device',
    ],
    [
      "a fatal line before etcd's closing info lines still says why",
      '{"level":"fatal","msg":"failed to start","error":"mkdir /var/lib/etcd/member: no space left on device"}\n{"level":"info","msg":"closing"}',
      'failed to start: mkdir /var/lib/etcd/member: no space left on device',
    ],
    [
      "a tail cut before etcd's line falls back to Go's panic line",
      'ded\npanic: runtime error: index out of range [3] with length 3\n\ngoroutine 1 [running]:\nmain.main()\n\t/main.go:9 +0x1d',
      'panic: runtime error: index out of range [3] with length 3',
    ],
    [
      "a panic in one of etcd's scheduled jobs: the line where it happened says why, not the scheduler's",
      [
        '{"level":"panic","msg":"failed to commit tx","error":"write /var/lib/etcd/data/member/snap/db: no space left on device"}',
        '{"level":"panic","msg":"execute job failed","job":"apply","panic":"failed to commit tx"}',
        'panic: execute job failed',
        'goroutine 1 [running]:',
      ].join('\n'),
      'failed to commit tx: write /var/lib/etcd/data/member/snap/db: no space left on device',
    ],
    [
      "the scheduler's line alone says what it caught",
      '{"level":"panic","msg":"execute job failed","job":"apply","panic":"runtime error: invalid memory address"}\npanic: execute job failed',
      'execute job failed: runtime error: invalid memory address',
    ],
    [
      'an error-level line is no last word when the process did not die of it',
      '{"level":"error","msg":"request timed out"}\n{"level":"info","msg":"bye"}',
      'bye',
    ],
  ])('%s', (_name, text, words) => {
    expect(lastWords(text)).toBe(words);
  });
});
