// Table tests for endpoint -> cluster parsing and the per-cluster connection resolver's merging and caching.
import { clusterOfEndpoint, createConnectionResolver } from './etcd-connection';

describe('clusterOfEndpoint', () => {
  test.each([
    ['http://main-0.main-peer.prod.svc:2379', { namespace: 'prod', name: 'main' }],
    ['https://main-0.main-peer.prod.svc:2379', { namespace: 'prod', name: 'main' }],
    ['a-b-12.a-b-peer.ns-1.svc:2379', { namespace: 'ns-1', name: 'a-b' }],
    ['http://main-client.prod.svc:2379', { namespace: 'prod', name: 'main' }],
    ['http://main-0.main-peer.prod.svc:2380', undefined],
    ['http://127.0.0.1:2379', undefined],
    ['http://main-0.main-other.prod.svc:2379', undefined],
    ['http://main-0.main-peer.prod.svc.cluster.local:2379', undefined],
    ['', undefined],
  ])('%s', (url, expected) => {
    expect(clusterOfEndpoint(url)).toEqual(expected);
  });
});

describe('createConnectionResolver', () => {
  const url = (ns: string, name: string) => `http://${name}-0.${name}-peer.${ns}.svc:2379`;

  test('merges what every contributor adds for the endpoints cluster', async () => {
    const seen: string[] = [];
    const resolve = createConnectionResolver([
      async (c) => {
        seen.push(`${c.namespace}/${c.name}`);
        return { credentials: { rootCertificate: Buffer.from('ca') } };
      },
      async () => ({ auth: { username: 'root', password: 'pw' } }),
    ]);
    await expect(resolve([url('prod', 'main')])).resolves.toEqual({
      credentials: { rootCertificate: Buffer.from('ca') },
      auth: { username: 'root', password: 'pw' },
    });
    expect(seen).toEqual(['prod/main']);
  });

  test('endpoints it cannot place and resolvers without contributors add nothing', async () => {
    const calls = jest.fn(async () => ({ auth: { username: 'u', password: 'p' } }));
    await expect(createConnectionResolver([calls])(['http://127.0.0.1:2379'])).resolves.toEqual({});
    await expect(createConnectionResolver([])([url('a', 'b')])).resolves.toEqual({});
    expect(calls).not.toHaveBeenCalled();
  });

  test('refuses one call across two clusters', async () => {
    const resolve = createConnectionResolver([async () => ({})]);
    await expect(resolve([url('a', 'x'), url('a', 'y')])).rejects.toThrow(/spans endpoints of a\/x and a\/y/);
  });

  test('answers are cached per cluster for the ttl; a failure is not cached', async () => {
    let t = 0;
    let n = 0;
    let fail = true;
    const resolve = createConnectionResolver(
      [
        async () => {
          n += 1;
          if (fail) throw new Error('secret not found');
          return { auth: { username: 'root', password: `pw${n}` } };
        },
      ],
      { ttlMs: 1000, now: () => t },
    );
    await expect(resolve([url('a', 'x')])).rejects.toThrow('secret not found');
    fail = false;
    await expect(resolve([url('a', 'x')])).resolves.toEqual({ auth: { username: 'root', password: 'pw2' } });
    t = 999;
    await expect(resolve([url('a', 'x')])).resolves.toEqual({ auth: { username: 'root', password: 'pw2' } });
    await expect(resolve([url('b', 'x')])).resolves.toEqual({ auth: { username: 'root', password: 'pw3' } });
    t = 1000;
    await expect(resolve([url('a', 'x')])).resolves.toEqual({ auth: { username: 'root', password: 'pw4' } });
  });
});
