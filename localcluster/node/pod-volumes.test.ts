import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AuthenticationV1TokenRequest, CoreV1Api, V1Pod, V1Volume } from '@kubernetes/client-node';
import { materialisePodVolumes } from './pod-volumes';
import type { PodVolumeContext } from './pod-volumes';

/** The volume the ServiceAccount admission plugin adds to a Pod that automounts its token. */
const apiAccess: V1Volume = {
  name: 'kube-api-access-x1',
  projected: {
    defaultMode: 0o644,
    sources: [
      { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
      { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      { downwardAPI: { items: [{ path: 'namespace', fieldRef: { fieldPath: 'metadata.namespace' } }] } },
    ],
  },
};

interface TokenCall {
  name: string;
  namespace: string;
  body: AuthenticationV1TokenRequest;
}

/** The calls the volume code makes, typed from CoreV1Api; each TokenRequest answers a new token valid for its expirationSeconds. */
function fakeCore(clock: { now: number }): { core: CoreV1Api; calls: TokenCall[] } {
  const calls: TokenCall[] = [];
  const api: Pick<CoreV1Api, 'createNamespacedServiceAccountToken' | 'readNamespacedConfigMap'> = {
    createNamespacedServiceAccountToken: async (p: TokenCall) => {
      calls.push(p);
      const seconds = p.body.spec?.expirationSeconds ?? 3600;
      return {
        spec: p.body.spec,
        status: {
          token: `token-${calls.length}`,
          expirationTimestamp: new Date(clock.now + seconds * 1000),
        },
      };
    },
    readNamespacedConfigMap: async (p: { name: string }) => {
      if (p.name !== 'kube-root-ca.crt') throw Object.assign(new Error('not found'), { code: 404 });
      return { data: { 'ca.crt': 'CA PEM' } };
    },
  } as Pick<CoreV1Api, 'createNamespacedServiceAccountToken' | 'readNamespacedConfigMap'>;
  return { core: api as CoreV1Api, calls };
}

function pod(volumes: V1Volume[]): V1Pod {
  return {
    metadata: { name: 'operator-0', namespace: 'ops', uid: 'uid-op' },
    spec: { serviceAccountName: 'etcd-conductor', containers: [], volumes },
  };
}

describe('the service-account token volume', () => {
  const hour = 3600_000;
  function setUp(volumes: V1Volume[]) {
    const clock = { now: Date.UTC(2026, 0, 1) };
    const { core, calls } = fakeCore(clock);
    const podDir = mkdtempSync(join(tmpdir(), 'pod-volumes-'));
    const ctx: PodVolumeContext = {
      core,
      pod: pod(volumes),
      podDir,
      facts: { podIp: '127.5.0.2', hostIp: '127.4.1.1' },
      tokens: new Map(),
      now: () => clock.now,
    };
    const dir = join(podDir, 'volumes', 'projected', apiAccess.name);
    const read = (f: string) => readFileSync(join(dir, f), 'utf8');
    return { clock, calls, ctx, dir, read };
  }

  it('holds a token bound to the Pod, the cluster CA and the namespace, readable by any user', async () => {
    const { calls, ctx, dir, read } = setUp([apiAccess]);
    const volumes = await materialisePodVolumes(ctx);
    expect(volumes.get(apiAccess.name)).toEqual({ hostPath: dir, readOnly: true });
    expect([read('token'), read('ca.crt'), read('namespace')]).toEqual(['token-1', 'CA PEM', 'ops']);
    expect(statSync(join(dir, 'token')).mode & 0o777).toBe(0o644);
    expect(calls).toEqual([
      {
        name: 'etcd-conductor',
        namespace: 'ops',
        body: {
          spec: {
            audiences: [],
            expirationSeconds: 3607,
            boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'operator-0', uid: 'uid-op' },
          },
        },
      },
    ]);
  });

  const refreshes: Array<[string, number, string, number]> = [
    ['a sync at half the lifetime keeps the token', 0.5 * hour, 'token-1', 1],
    ['a sync at 79% of the lifetime keeps the token', 0.79 * 3607_000, 'token-1', 1],
    ['a sync at 80% of the lifetime writes a new token', 0.8 * 3607_000, 'token-2', 2],
    ['a sync after expiry writes a new token', 2 * hour, 'token-2', 2],
  ];
  it.each(refreshes)('%s', async (_n, later, token, requests) => {
    const { clock, calls, ctx, read } = setUp([apiAccess]);
    await materialisePodVolumes(ctx);
    clock.now += later;
    await materialisePodVolumes(ctx);
    expect(read('token')).toBe(token);
    expect(calls).toHaveLength(requests);
  });

  it('asks for the audience and lifetime a projection names', async () => {
    const custom: V1Volume = {
      name: 'vault-token',
      projected: {
        sources: [
          { serviceAccountToken: { audience: 'vault', expirationSeconds: 600, path: 'vault/token' } },
        ],
      },
    };
    const { calls, ctx } = setUp([custom]);
    await materialisePodVolumes(ctx);
    expect(
      readFileSync(join(ctx.podDir, 'volumes', 'projected', 'vault-token', 'vault', 'token'), 'utf8'),
    ).toBe('token-1');
    expect(calls[0]?.body.spec).toMatchObject({ audiences: ['vault'], expirationSeconds: 600 });
  });

  it('a Pod without the volume (automountServiceAccountToken: false) gets no token and asks for none', async () => {
    const { calls, ctx, dir } = setUp([{ name: 'tmp', emptyDir: {} }]);
    const volumes = await materialisePodVolumes(ctx);
    expect([...volumes.keys()]).toEqual(['tmp']);
    expect(existsSync(dir)).toBe(false);
    expect(calls).toEqual([]);
  });
});
