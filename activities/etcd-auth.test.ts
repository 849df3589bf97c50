// The root credentials from spec.auth's Secret (table), the contributor built on them, and the auth fallback of etcd calls against a real etcd.
import type { LocalEtcd } from '../test/support/local-etcd';
import { startLocalEtcd } from '../test/support/local-etcd';
import { Etcd3 } from 'etcd3';
import { withEtcdClient } from './etcd-admin';
import { authConnection, credentialsFromSecret } from './etcd-auth';
import type { KubeObjects, ObjectRef } from './kube-objects';
import { snapshotJob } from './snapshot-manifests';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const secret = (data: Record<string, string>) => ({
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
});

describe('credentialsFromSecret', () => {
  test.each<[string, ReturnType<typeof secret> | undefined, ReturnType<typeof credentialsFromSecret>]>([
    [
      'password only: the user is root',
      secret({ password: 's3cret' }),
      { ok: true, username: 'root', password: 's3cret' },
    ],
    [
      'username root and password',
      secret({ username: 'root', password: 'p' }),
      { ok: true, username: 'root', password: 'p' },
    ],
    [
      'a missing Secret is named',
      undefined,
      { ok: false, problem: 'the Secret ns/root-auth named by spec.auth.rootSecretRef does not exist' },
    ],
    [
      'no password key is named',
      secret({ username: 'root' }),
      {
        ok: false,
        problem: 'the Secret ns/root-auth named by spec.auth.rootSecretRef has no non-empty key password',
      },
    ],
    [
      'an empty password is no password',
      secret({ password: '' }),
      {
        ok: false,
        problem: 'the Secret ns/root-auth named by spec.auth.rootSecretRef has no non-empty key password',
      },
    ],
    [
      'another user is refused, naming the user but not the password',
      secret({ username: 'admin', password: 'hidden-value' }),
      {
        ok: false,
        problem:
          'the Secret ns/root-auth named by spec.auth.rootSecretRef names user "admin" in key username; the operator needs etcd\'s root user: leave the key out or set it to root',
      },
    ],
  ])('%s', (_name, s, expected) => {
    expect(credentialsFromSecret('ns', 'root-auth', s as never)).toEqual(expected);
  });
});

/** A KubeObjects that answers reads from a map keyed by kind/namespace/name. */
function fakeKube(objects: Record<string, object>): KubeObjects {
  const unused = () => Promise.reject(new Error('not used'));
  return {
    read: async (ref: ObjectRef) => objects[`${ref.kind}/${ref.namespace}/${ref.name}`] as never,
    createIfAbsent: unused,
    deleteIfPresent: unused,
    list: unused,
    mergePatch: unused,
  };
}

describe('authConnection', () => {
  const cluster = { namespace: 'ns', name: 'main' };

  test('a cluster with spec.auth gets root and the Secret’s password', async () => {
    const kube = fakeKube({
      'EtcdCluster/ns/main': { spec: { auth: { rootSecretRef: { name: 'root-auth' } } } },
      'Secret/ns/root-auth': secret({ password: 'pw' }),
    });
    await expect(authConnection(kube)(cluster)).resolves.toEqual({
      auth: { username: 'root', password: 'pw' },
    });
  });

  test.each<[string, Record<string, object>]>([
    ['a cluster without spec.auth', { 'EtcdCluster/ns/main': { spec: {} } }],
    ['a cluster that is gone', {}],
    [
      'a cluster whose Secret is missing',
      { 'EtcdCluster/ns/main': { spec: { auth: { rootSecretRef: { name: 'x' } } } } },
    ],
  ])('%s adds no credentials', async (_name, objects) => {
    await expect(authConnection(fakeKube(objects))(cluster)).resolves.toEqual({});
  });
  test('the applied copy (what etcd has) comes before a Secret whose password was just changed', async () => {
    const kube = fakeKube({
      'EtcdCluster/ns/main': { spec: { auth: { rootSecretRef: { name: 'root-auth' } } } },
      'Secret/ns/root-auth': secret({ password: 'new' }),
      'Secret/ns/main-auth-applied': secret({ password: 'old' }),
    });
    await expect(authConnection(kube)(cluster)).resolves.toEqual({
      auth: { username: 'root', password: 'old' },
    });
  });

  test('the applied copy keeps the operator working while the user’s Secret is unusable', async () => {
    const kube = fakeKube({
      'EtcdCluster/ns/main': { spec: { auth: { rootSecretRef: { name: 'gone' } } } },
      'Secret/ns/main-auth-applied': secret({ password: 'old' }),
    });
    await expect(authConnection(kube)(cluster)).resolves.toEqual({
      auth: { username: 'root', password: 'old' },
    });
  });

  test('a cluster without spec.auth ignores a leftover applied copy', async () => {
    const kube = fakeKube({
      'EtcdCluster/ns/main': { spec: {} },
      'Secret/ns/main-auth-applied': secret({ password: 'old' }),
    });
    await expect(authConnection(kube)(cluster)).resolves.toEqual({});
  });
});

// A real single-member etcd: the fallback's whole point is what etcd answers before and after auth enable.
describe('withEtcdClient against etcd with and without auth', () => {
  let url = '';
  let etcd: LocalEtcd | undefined;
  const root = { username: 'root', password: 'test-pw' };
  const withRoot = { connectionFor: async () => ({ auth: root }), callTimeoutMs: 5000 };
  const anonymous = { callTimeoutMs: 5000 };

  beforeAll(async () => {
    etcd = await startLocalEtcd('etcd-auth-');
    url = etcd.url;
  }, 90_000);

  afterAll(() => etcd?.stop());

  test('before auth is enabled, credentials etcd refuses are dropped and the call is made without', async () => {
    await expect(withEtcdClient(withRoot, [url], (c) => c.auth.authStatus())).resolves.toMatchObject({
      enabled: false,
    });
    // Without the fallback the same credentials fail.
    const bare = new Etcd3({ hosts: [url], auth: root });
    try {
      await expect(bare.auth.authStatus()).rejects.toThrow(/authentication is not enabled/);
    } finally {
      bare.close();
    }
  });

  test('after auth is enabled, calls without credentials are refused and calls with them work', async () => {
    await withEtcdClient(anonymous, [url], async (c) => {
      await c.auth.userAdd({ name: 'root', password: root.password });
      await c.auth.userGrantRole({ user: 'root', role: 'root' });
      await c.auth.authEnable();
    });
    await expect(withEtcdClient(anonymous, [url], (c) => c.cluster.memberList({}))).rejects.toThrow(
      /user name is empty/,
    );
    await expect(withEtcdClient(withRoot, [url], (c) => c.auth.authStatus())).resolves.toMatchObject({
      enabled: true,
    });
    const wrong = { connectionFor: async () => ({ auth: { username: 'root', password: 'nope' } }) };
    await expect(withEtcdClient(wrong, [url], (c) => c.cluster.memberList({}))).rejects.toThrow(
      /authentication failed/,
    );
  });
});

describe('the snapshot Job of a cluster with spec.auth', () => {
  const job = (authSecretName?: string) =>
    snapshotJob({
      snapshot: { namespace: 'ns', name: 'snap', uid: 'u' },
      attempt: 1,
      image: 'img:1',
      endpoint: 'http://main-0.main-peer.ns.svc:2379',
      destination: { pvc: { claimName: 'backup', subPath: '' } },
      cluster: 'main',
      ...(authSecretName ? { authSecretName } : {}),
    });

  test('gets the root user and password as secretKeyRefs to the Secret, the username optional', () => {
    expect(job('root-auth').spec.template.spec.containers[0]?.env).toEqual([
      {
        name: 'ETCD_USERNAME',
        valueFrom: { secretKeyRef: { name: 'root-auth', key: 'username', optional: true } },
      },
      { name: 'ETCD_PASSWORD', valueFrom: { secretKeyRef: { name: 'root-auth', key: 'password' } } },
    ]);
    expect(JSON.stringify(job('root-auth'))).not.toMatch(/"value"/);
  });

  test('a cluster without auth gives the agent no etcd credentials', () => {
    expect(job().spec.template.spec.containers[0]?.env).toEqual([]);
  });
});
