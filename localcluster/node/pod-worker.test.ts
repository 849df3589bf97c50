import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { createNodeGate } from './node-gate';
import { PodWorker } from './pod-worker';
import type { PodWorkerDeps } from './pod-worker';
import type { PodStatusJson } from './pod-status';

const maybe = process.getuid?.() === 0 ? describe : describe.skip;

/** Records what the worker writes; the API surface is the worker's real dependency, typed from CoreV1Api. */
function fakeApi(): { core: CoreV1Api; statuses: PodStatusJson[]; deletes: unknown[] } {
  const statuses: PodStatusJson[] = [];
  const deletes: unknown[] = [];
  const api = {
    patchNamespacedPodStatus: async (p: { body: { status: PodStatusJson } }) => {
      statuses.push(JSON.parse(JSON.stringify(p.body.status)) as PodStatusJson);
      return {};
    },
    deleteNamespacedPod: async (p: unknown) => {
      deletes.push(p);
      return {};
    },
    readNamespacedSecret: async () => ({ data: { password: Buffer.from('pw').toString('base64') } }),
    readNamespacedConfigMap: async () => {
      throw Object.assign(new Error('not found'), { code: 404 });
    },
  };
  return { core: api as unknown as CoreV1Api, statuses, deletes };
}

function pod(spec: Partial<NonNullable<V1Pod['spec']>>, name = 'p'): V1Pod {
  return {
    metadata: { name, namespace: 'ns', uid: `uid-${name}` },
    spec: { nodeName: 'n1', containers: [], ...spec },
  };
}

async function until<T>(what: string, f: () => T | undefined, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = f();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

maybe('PodWorker with real processes and a recording API', () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'pod-worker-'));
  let ips = 0;
  const released: string[] = [];
  function deps(core: CoreV1Api, finished: string[]): PodWorkerDeps {
    return {
      core,
      nodeName: 'n1',
      hostIp: '127.0.0.1',
      stateDir,
      images: (image) =>
        image === 'busybox' ? { commands: {}, entrypoint: ['/bin/sh'], path: [] } : undefined,
      allocatePodIp: () => `127.0.0.${++ips + 1}`,
      releasePodIp: (ip) => released.push(ip),
      log: () => undefined,
      backOff: { initialMs: 200, maxMs: 1000 },
      nodeCpuCores: 2,
      nodeMemoryBytes: 2 ** 30,
      gate: createNodeGate(),
      onFinished: (uid) => finished.push(uid),
    };
  }

  it('runs init containers first, expands env and ends a Job-like pod Succeeded with exit codes', async () => {
    const api = fakeApi();
    const w = new PodWorker(
      pod(
        {
          restartPolicy: 'Never',
          initContainers: [{ name: 'init', image: 'busybox', command: ['/bin/sh', '-c', 'echo init-ran'] }],
          containers: [
            {
              name: 'main',
              image: 'busybox',
              env: [
                { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                { name: 'PW', valueFrom: { secretKeyRef: { name: 's', key: 'password' } } },
              ],
              command: ['/bin/sh', '-c', 'echo "$(POD) $PW"'],
            },
          ],
        },
        'job',
      ),
      deps(api.core, []),
    );
    const done = await until('Succeeded', () => api.statuses.find((s) => s.phase === 'Succeeded'));
    expect(done.containerStatuses[0]?.state).toMatchObject({
      terminated: { exitCode: 0, reason: 'Completed' },
    });
    expect(done.initContainerStatuses[0]?.state).toMatchObject({ terminated: { exitCode: 0 } });
    expect(readFileSync(join(w.podDir, 'main.log'), 'utf8')).toBe('job pw\n');
    expect(readFileSync(join(w.podDir, 'init.log'), 'utf8')).toBe('init-ran\n');
  });

  it('restarts a failing container under OnFailure with a growing restart count and CrashLoopBackOff in between', async () => {
    const api = fakeApi();
    const w = new PodWorker(
      pod(
        {
          restartPolicy: 'OnFailure',
          containers: [{ name: 'c', image: 'busybox', command: ['/bin/sh', '-c', 'exit 2'] }],
        },
        'crash',
      ),
      deps(api.core, []),
    );
    await until('two restarts', () =>
      api.statuses.find((s) => (s.containerStatuses[0]?.restartCount ?? 0) >= 2),
    );
    expect(
      api.statuses.some(
        (s) =>
          'waiting' in (s.containerStatuses[0]?.state ?? {}) &&
          JSON.stringify(s).includes('CrashLoopBackOff'),
      ),
    ).toBe(true);
    expect(
      api.statuses.some((s) => JSON.stringify(s.containerStatuses[0]?.lastState).includes('"exitCode":2')),
    ).toBe(true);
    await w.shutdown(100);
  });

  it('leaves a container with an unknown image waiting in ErrImagePull', async () => {
    const api = fakeApi();
    const w = new PodWorker(
      pod({ containers: [{ name: 'c', image: 'nope:1' }] }, 'pull'),
      deps(api.core, []),
    );
    const s = await until('ErrImagePull', () =>
      api.statuses.find((x) => JSON.stringify(x).includes('ErrImagePull')),
    );
    expect(s.phase).toBe('Pending');
    await w.shutdown(100);
  });

  it('becomes Ready through a passing exec readiness probe', async () => {
    const api = fakeApi();
    const w = new PodWorker(
      pod(
        {
          containers: [
            {
              name: 'c',
              image: 'busybox',
              command: ['/bin/sh', '-c', 'sleep 30'],
              readinessProbe: { exec: { command: ['/bin/true'] }, periodSeconds: 1 },
            },
          ],
        },
        'ready',
      ),
      deps(api.core, []),
    );
    const s = await until('Ready', () =>
      api.statuses.find((x) => x.conditions.some((c) => c.type === 'Ready' && c.status === 'True')),
    );
    expect(s.phase).toBe('Running');
    expect(s.podIP).toMatch(/^127\./);
    await w.shutdown(100);
  });

  it('deletes gracefully: SIGTERM, cleanup of emptyDir and pod IP, then DELETE with grace 0 and the uid precondition', async () => {
    const api = fakeApi();
    const finished: string[] = [];
    const p = pod(
      {
        terminationGracePeriodSeconds: 5,
        volumes: [{ name: 'scratch', emptyDir: {} }],
        containers: [
          {
            name: 'c',
            image: 'busybox',
            command: ['/bin/sh', '-c', 'sleep 30'],
            volumeMounts: [{ name: 'scratch', mountPath: '/tmp/etcd-conductor-scratch' }],
          },
        ],
      },
      'del',
    );
    const w = new PodWorker(p, deps(api.core, finished));
    const running = await until('running', () => api.statuses.find((s) => s.phase === 'Running'));
    expect(existsSync(join(w.podDir, 'volumes', 'empty-dir', 'scratch'))).toBe(true);
    expect(existsSync(join(w.podDir, 'termination', 'c', 'message'))).toBe(true);
    const started = Date.now();
    w.update({
      ...p,
      metadata: { ...p.metadata, deletionTimestamp: new Date(), deletionGracePeriodSeconds: 5 },
    });
    await until('finished', () => finished.includes('uid-del'));
    expect(Date.now() - started).toBeLessThan(4000);
    expect(api.deletes).toEqual([
      {
        name: 'del',
        namespace: 'ns',
        gracePeriodSeconds: 0,
        body: { gracePeriodSeconds: 0, preconditions: { uid: 'uid-del' } },
      },
    ]);
    expect(existsSync(join(w.podDir, 'volumes'))).toBe(false);
    expect(existsSync(join(w.podDir, 'termination'))).toBe(false);
    expect(released).toContain(running.podIP);
  });
});
