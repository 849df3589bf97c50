// EtcdAdmin.hashKV against a real etcd 3.6: what etcdctl's `endpoint hashkv --rev` answers, at the revision asked.
import { execFileSync } from 'node:child_process';
import { binaryPath, cacheRoot, ETCD_TOOLS } from '../localcluster/tool-cache';
import { startLocalEtcd, type LocalEtcd } from '../test/support/local-etcd';
import { createEtcdAdmin, withEtcdClient } from './etcd-admin';

jest.setTimeout(60_000);

let etcd: LocalEtcd;
beforeAll(async () => {
  etcd = await startLocalEtcd('hashkv-');
  await withEtcdClient({ callTimeoutMs: 5000 }, [etcd.url], async (c) => {
    for (let i = 0; i < 10; i++) await c.put(`k${i}`).value(`v${i}`);
  });
});
afterAll(() => etcd?.stop());

function etcdctlHash(revision: number): { hash: number; compact_revision: number } {
  const etcdctl = binaryPath(cacheRoot(), ETCD_TOOLS['3.6.16'], 'etcdctl');
  const out = execFileSync(
    etcdctl,
    ['--endpoints', etcd.url, 'endpoint', 'hashkv', `--rev=${revision}`, '-w', 'json'],
    { encoding: 'utf8' },
  );
  const [row] = JSON.parse(out) as { HashKV: { hash: number; compact_revision?: number } }[];
  return { hash: row?.HashKV.hash ?? -1, compact_revision: row?.HashKV.compact_revision ?? 0 };
}

test('hashKV answers what etcdctl does, at the revision asked', async () => {
  const admin = createEtcdAdmin();
  const at5 = await admin.hashKV(etcd.url, 5);
  const at8 = await admin.hashKV(etcd.url, 8);
  // Never compacted: etcd says -1.
  expect(at5).toEqual({ hash: etcdctlHash(5).hash, compactRevision: -1 });
  expect(at8.hash).toBe(etcdctlHash(8).hash);
  expect(at5.hash).not.toBe(at8.hash);
});
