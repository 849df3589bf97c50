// The snapshot agent's etcd credentials from its Job's env: root by default, none without a password.
import { etcdAuthFromEnv } from './etcd-source';

describe('etcdAuthFromEnv', () => {
  test.each<[string, NodeJS.ProcessEnv, ReturnType<typeof etcdAuthFromEnv>]>([
    ['no password: no credentials (a cluster without auth)', {}, undefined],
    ['an empty password counts as none', { ETCD_PASSWORD: '' }, undefined],
    ['a password alone is root’s', { ETCD_PASSWORD: 'pw' }, { username: 'root', password: 'pw' }],
    [
      'an empty username (optional key absent) is root',
      { ETCD_USERNAME: '', ETCD_PASSWORD: 'pw' },
      { username: 'root', password: 'pw' },
    ],
    [
      'a username given is kept',
      { ETCD_USERNAME: 'root', ETCD_PASSWORD: 'pw' },
      { username: 'root', password: 'pw' },
    ],
  ])('%s', (_name, env, expected) => {
    expect(etcdAuthFromEnv(env)).toEqual(expected);
  });
});
