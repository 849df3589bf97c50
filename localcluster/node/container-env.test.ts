import type { V1Container, V1Pod } from '@kubernetes/client-node';
import {
  baseContainerEnv,
  ContainerConfigError,
  effectiveRunAsUser,
  expandCommand,
  parseQuantity,
  podFieldValue,
  resolveContainerEnv,
} from './container-env';
import type { EnvSources } from './container-env';

const pod: V1Pod = {
  metadata: { name: 'etcd-0', namespace: 'db', uid: 'u-1', labels: { app: 'etcd', tier: 'data' } },
  spec: { nodeName: 'node-a', serviceAccountName: 'etcd', containers: [] },
};
const facts = { podIp: '127.1.0.5', hostIp: '127.1.0.1', nodeCpuCores: 2, nodeMemoryBytes: 8 * 2 ** 30 };
const sources: EnvSources = {
  secrets: new Map([['creds', { user: 'root', pass: 's3cret' }]]),
  configMaps: new Map([['conf', { LEVEL: 'debug', MODE: 'fast' }]]),
};

describe('podFieldValue', () => {
  const cases: Array<[string, string, string]> = [
    ['metadata.name gives the pod name', 'metadata.name', 'etcd-0'],
    ['metadata.namespace gives the namespace', 'metadata.namespace', 'db'],
    ['metadata.uid gives the uid', 'metadata.uid', 'u-1'],
    ['a single label is addressed by key', "metadata.labels['app']", 'etcd'],
    ['a missing label is empty', "metadata.labels['nope']", ''],
    ['all labels render as sorted key="value" lines', 'metadata.labels', 'app="etcd"\ntier="data"'],
    ['status.podIP gives the pod address', 'status.podIP', '127.1.0.5'],
    ['status.hostIP gives the node address', 'status.hostIP', '127.1.0.1'],
    ['spec.nodeName gives the node', 'spec.nodeName', 'node-a'],
    ['spec.serviceAccountName gives the account', 'spec.serviceAccountName', 'etcd'],
  ];
  it.each(cases)('%s', (_n, path, expected) => {
    expect(podFieldValue(pod, path, facts)).toBe(expected);
  });
});

describe('resolveContainerEnv', () => {
  function env(container: Partial<V1Container>): Record<string, string> {
    return resolveContainerEnv(pod, { name: 'c', ...container }, sources, facts, { PATH: '/bin' });
  }

  it('expands a value against variables defined before it', () => {
    const e = env({
      env: [
        { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'URL', value: 'http://$(POD):2379' },
      ],
    });
    expect(e['URL']).toBe('http://etcd-0:2379');
  });

  it('leaves a reference to a later variable unexpanded', () => {
    expect(
      env({
        env: [
          { name: 'A', value: '$(B)' },
          { name: 'B', value: 'b' },
        ],
      })['A'],
    ).toBe('$(B)');
  });

  it('reads secret and config map keys', () => {
    const e = env({
      env: [
        { name: 'U', valueFrom: { secretKeyRef: { name: 'creds', key: 'user' } } },
        { name: 'L', valueFrom: { configMapKeyRef: { name: 'conf', key: 'LEVEL' } } },
      ],
    });
    expect([e['U'], e['L']]).toEqual(['root', 'debug']);
  });

  it('imports every key of envFrom sources with their prefix, env entries winning', () => {
    const e = env({
      envFrom: [{ configMapRef: { name: 'conf' }, prefix: 'X_' }],
      env: [{ name: 'X_MODE', value: 'slow' }],
    });
    expect([e['X_LEVEL'], e['X_MODE']]).toEqual(['debug', 'slow']);
  });

  it('fails with a config error when a required secret is missing', () => {
    expect(() =>
      env({ env: [{ name: 'U', valueFrom: { secretKeyRef: { name: 'absent', key: 'user' } } }] }),
    ).toThrow(new ContainerConfigError('secret "absent" not found'));
  });

  it('fails with a config error when a required key is missing', () => {
    expect(() =>
      env({ env: [{ name: 'U', valueFrom: { secretKeyRef: { name: 'creds', key: 'x' } } }] }),
    ).toThrow("couldn't find key x in Secret db/creds");
  });

  it('skips an optional reference to a missing object', () => {
    expect(
      env({
        env: [{ name: 'U', valueFrom: { secretKeyRef: { name: 'absent', key: 'u', optional: true } } }],
      })['U'],
    ).toBeUndefined();
  });

  it('gives a cpu limit in millicores when the divisor is 1m', () => {
    const e = env({
      resources: { limits: { cpu: '500m' } },
      env: [{ name: 'CPU', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '1m' } } }],
    });
    expect(e['CPU']).toBe('500');
  });

  it('falls back to node allocatable memory for an unset limit', () => {
    const e = env({
      env: [{ name: 'MEM', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } }],
    });
    expect(e['MEM']).toBe('8192');
  });
});

describe('expandCommand and parseQuantity', () => {
  it('expands command arguments against the environment', () => {
    expect(expandCommand(['--name=$(POD)', '$$(POD)'], { POD: 'p' })).toEqual(['--name=p', '$(POD)']);
  });
  const q: Array<[string, string, number]> = [
    ['millicores are thousandths', '250m', 0.25],
    ['binary suffixes are powers of two', '2Gi', 2 * 2 ** 30],
    ['decimal suffixes are powers of ten', '3M', 3e6],
  ];
  it.each(q)('%s', (_n, s, v) => expect(parseQuantity(s)).toBe(v));
});

describe('baseContainerEnv', () => {
  const api = { host: '127.4.0.1', port: '6443' };
  const base = (runAsUser: number | undefined, apiServer: typeof api | null = api) =>
    baseContainerEnv({
      imagePath: ['/img/bin'],
      systemPath: ['/usr/bin', '/bin'],
      hostname: 'operator-0',
      runAsUser,
      apiServer: apiServer ?? undefined,
    });

  it('points in-cluster clients at the apiserver the node itself dials, as the kubernetes Service variables', () => {
    expect(base(undefined)).toEqual({
      PATH: '/img/bin:/usr/bin:/bin',
      HOSTNAME: 'operator-0',
      HOME: '/root',
      KUBERNETES_SERVICE_HOST: '127.4.0.1',
      KUBERNETES_SERVICE_PORT: '6443',
      KUBERNETES_SERVICE_PORT_HTTPS: '6443',
      KUBERNETES_PORT: 'tcp://127.4.0.1:6443',
      KUBERNETES_PORT_6443_TCP: 'tcp://127.4.0.1:6443',
      KUBERNETES_PORT_6443_TCP_PROTO: 'tcp',
      KUBERNETES_PORT_6443_TCP_PORT: '6443',
      KUBERNETES_PORT_6443_TCP_ADDR: '127.4.0.1',
    });
  });

  const homes: Array<[string, number | undefined, string]> = [
    ['no runAsUser runs as the image user, root here, with HOME /root', undefined, '/root'],
    ['runAsUser 0 has HOME /root', 0, '/root'],
    ['a non-root uid has no passwd entry, so HOME is /', 65532, '/'],
  ];
  it.each(homes)('%s', (_n, uid, home) => expect(base(uid)['HOME']).toBe(home));

  it('without a known apiserver there are no kubernetes variables', () => {
    expect(Object.keys(base(undefined, null)).sort()).toEqual(['HOME', 'HOSTNAME', 'PATH']);
  });

  it('brackets an IPv6 apiserver address in the URL forms only', () => {
    const env = base(undefined, { host: '::1', port: '6443' });
    expect([env['KUBERNETES_SERVICE_HOST'], env['KUBERNETES_PORT']]).toEqual(['::1', 'tcp://[::1]:6443']);
  });
});

describe('effectiveRunAsUser', () => {
  const cases: Array<[string, number | undefined, number | undefined, number | undefined]> = [
    ['the container setting wins over the Pod', 1000, 65532, 65532],
    ['the Pod setting applies when the container has none', 1000, undefined, 1000],
    ['neither set: the image decides', undefined, undefined, undefined],
  ];
  it.each(cases)('%s', (_n, podUid, containerUid, expected) =>
    expect(
      effectiveRunAsUser(
        { spec: { containers: [], securityContext: { runAsUser: podUid } } },
        { name: 'c', securityContext: { runAsUser: containerUid } },
      ),
    ).toBe(expected),
  );
});
