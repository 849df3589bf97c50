import { cacheRoot, toolDirs, KUBERNETES_TOOL, MINIO_TOOL, ALL_TOOLS, HOST_TOOLS } from './tool-cache';

describe('cacheRoot', () => {
  const cases: Array<[string, NodeJS.ProcessEnv, string]> = [
    [
      'an explicit ETCD_CONDUCTOR_CACHE wins over everything',
      { ETCD_CONDUCTOR_CACHE: '/c', XDG_CACHE_HOME: '/x' },
      '/c',
    ],
    ['XDG_CACHE_HOME is used when no explicit cache is set', { XDG_CACHE_HOME: '/x' }, '/x/etcd-conductor'],
    ['the home cache folder is the fallback', {}, '/home/u/.cache/etcd-conductor'],
  ];
  it.each(cases)('%s', (_name, env, expected) => {
    expect(cacheRoot(env, '/home/u')).toBe(expected);
  });
});

describe('toolDirs', () => {
  it('keys the build and the binaries by tool and version', () => {
    expect(toolDirs('/c', KUBERNETES_TOOL)).toEqual({
      buildDir: '/c/build/kubernetes-1.35.4',
      binDir: '/c/tools/kubernetes-1.35.4/bin',
      marker: '/c/tools/kubernetes-1.35.4/.complete',
      lockFile: '/c/locks/kubernetes-1.35.4.lock',
    });
  });
  it('keys MinIO by the timestamp of its pseudo-version', () => {
    expect(toolDirs('/c', MINIO_TOOL).binDir).toBe('/c/tools/minio-20260212201848/bin');
  });
  it('builds the host tools (what the unit tests run) before Kubernetes, so `tools host` is a prefix of every tool', () => {
    expect(HOST_TOOLS.map((t) => t.name)).toEqual([
      'etcd',
      'etcd',
      'temporal',
      'minio',
      'helm',
      'cert-manager',
      'lincheck',
    ]);
    expect(ALL_TOOLS.slice(0, HOST_TOOLS.length)).toEqual(HOST_TOOLS);
  });
  it("builds the cheapest tools first, the control plane after them and the real nodes' tools last", () => {
    expect(ALL_TOOLS.map((t) => `${t.name}-${t.version}`)).toEqual([
      'etcd-3.5.35',
      'etcd-3.6.16',
      'temporal-1.5.1',
      'minio-20260212201848',
      'helm-4.3.1',
      'cert-manager-1.20.3',
      'lincheck-1',
      'kubernetes-1.35.4',
      'pause-1',
      'cni-plugins-1.10.0',
      'runc-1.5.2',
      'crictl-1.37.0',
      'containerd-2.4.2',
      'coredns-1.15.0',
      'kubernetes-node-1.35.4',
    ]);
  });
});
