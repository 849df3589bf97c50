// Applying a changed root password against a real single-member etcd: the change, the idempotent retry, and the refusal when neither password works.
import type { LocalEtcd } from '../test/support/local-etcd';
import { startLocalEtcd } from '../test/support/local-etcd';
import { applyRootPassword, checkPassword } from './auth-rotation';
import type { RotationIO } from './auth-rotation';
import { withEtcdClient } from './etcd-admin';

describe('applyRootPassword against etcd with auth on', () => {
  let url = '';
  let etcd: LocalEtcd | undefined;
  const anonymous = { callTimeoutMs: 5000 };
  let recorded: string[] = [];
  const io: RotationIO = {
    withPassword: (password, fn) =>
      withEtcdClient(
        { callTimeoutMs: 5000, connectionFor: async () => ({ auth: { username: 'root', password } }) },
        [url],
        fn,
      ),
    record: async (password) => {
      recorded.push(password);
    },
  };

  beforeAll(async () => {
    etcd = await startLocalEtcd('etcd-rotate-');
    url = etcd.url;
    await withEtcdClient(anonymous, [url], async (c) => {
      await c.auth.userAdd({ name: 'root', password: 'old-pw' });
      await c.auth.userGrantRole({ user: 'root', role: 'root' });
      await c.auth.authEnable();
    });
  }, 90_000);

  beforeEach(() => {
    recorded = [];
  });

  afterAll(() => etcd?.stop());

  test('a new password is applied with the old one: afterwards etcd refuses the old and accepts the new', async () => {
    await expect(applyRootPassword(io, 'new-pw', 'old-pw')).resolves.toBe('changed');
    expect(recorded).toEqual(['new-pw']);
    await expect(checkPassword(io, 'old-pw')).resolves.toBe('refused');
    await expect(checkPassword(io, 'new-pw')).resolves.toBe('accepted');
  });

  test('a retry after the change (the record was lost) finds the new password working and only records it', async () => {
    await expect(applyRootPassword(io, 'new-pw', 'old-pw')).resolves.toBe('recorded');
    expect(recorded).toEqual(['new-pw']);
  });

  test('neither password accepted: rejected, nothing recorded, etcd unchanged', async () => {
    await expect(applyRootPassword(io, 'third-pw', 'old-pw')).resolves.toBe('rejected');
    await expect(applyRootPassword(io, 'third-pw', undefined)).resolves.toBe('rejected');
    expect(recorded).toEqual([]);
    await expect(checkPassword(io, 'new-pw')).resolves.toBe('accepted');
  });
});
