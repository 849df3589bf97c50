// Defragmentation and NOSPACE on the real stack: a small quota filled until etcd refuses writes and the operator clears it; a threshold defrag that shrinks every member's database.
import { randomBytes } from 'node:crypto';
import { setHeaderOptions, PatchStrategy } from '@kubernetes/client-node';
import type { Etcd3 } from 'etcd3';
import { API_GROUP, API_VERSION_NAME, ETCD_CLUSTER } from '../../crds/etcd-cluster';
import type { EtcdCluster } from '../../crds/etcd-cluster';
import { Annotations } from '../../crds/labels';
import { memberClientURL } from '../../crds/names';
import { expectAvailability, PLANNED_GAP_BOUND_MS } from '../support/availability';
import type { Harness } from '../support/cluster-harness';
import {
  clientEndpoint,
  connect,
  createCluster,
  etcdClient,
  eventually,
  freshNamespace,
  getCluster,
  patchSpec,
  waitConverged,
} from '../support/cluster-harness';
import { startWriterRunning } from '../support/writer';

jest.setTimeout(900_000);

let h: Harness;
beforeAll(() => {
  h = connect();
});

const MIB = 1024 * 1024;
const degraded = (c: EtcdCluster) => c.status?.conditions?.find((x) => x.type === 'Degraded');

async function eventsOf(ns: string): Promise<{ reason: string; message: string }[]> {
  const list = await h.core.listNamespacedEvent({ namespace: ns });
  return list.items.map((e) => ({ reason: e.reason ?? '', message: e.message ?? '' }));
}

/** What the watcher hears as a change: the operator observes at once instead of at its next 10-minute drift check. */
async function nudge(ns: string, name: string): Promise<void> {
  await h.custom.patchNamespacedCustomObject(
    {
      group: API_GROUP,
      version: API_VERSION_NAME,
      plural: ETCD_CLUSTER.plural,
      namespace: ns,
      name,
      body: { metadata: { annotations: { [Annotations.retry]: `nudge-${Date.now()}` } } },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

async function withClient<T>(ns: string, name: string, fn: (c: Etcd3) => Promise<T>): Promise<T> {
  const client = etcdClient([clientEndpoint(ns, name)]);
  try {
    return await fn(client);
  } finally {
    client.close();
  }
}

describe('NOSPACE', () => {
  test('a client fills a 16 MiB quota until etcd refuses writes; the operator shows NoSpace, compacts, defragments every member, disarms; writes work again and every key keeps its latest value', async () => {
    const ns = await freshNamespace(h, 'nospace');
    const name = 'full';
    // etcd has no lower bound on the quota; 16 MiB fills in a few hundred 100 KiB writes.
    await createCluster(h, ns, name, { replicas: 3, options: { 'quota-backend-bytes': String(16 * MIB) } });
    await waitConverged(h, ns, name, 3, 300_000);

    // Overwrite 10 keys until the quota is hit. A write refused with NOSPACE may still have committed
    // (etcd maintenance guide), so the refused value of that key is also an acceptable latest value.
    const latest = new Map<string, string>();
    let refused: { key: string; value: string; error: string } | undefined;
    await withClient(ns, name, async (client) => {
      for (let i = 0; i < 2000 && !refused; i++) {
        const key = `/nospace/k${i % 10}`;
        const value = `${i}:${randomBytes(50 * 1024).toString('hex')}`;
        try {
          await client.put(key).value(value);
          latest.set(key, value);
        } catch (err) {
          refused = { key, value, error: String((err as Error).message) };
        }
      }
    });
    expect(refused?.error).toMatch(/database space exceeded/);

    // Nothing prompts the operator: no Kubernetes object changes under NOSPACE (member Pods stay Ready, as
    // /readyz ignores it), so this is the operator's own alarm poller (watcher/alarm-poller.ts) noticing.
    const shown = await eventually(
      'the operator to notice NOSPACE by itself: Degraded=True NoSpace',
      async () => {
        const c = await getCluster(h, ns, name);
        return degraded(c)?.reason === 'NoSpace' ? c : undefined;
      },
      300_000,
    );
    expect(degraded(shown)?.status).toBe('True');
    expect(degraded(shown)?.message).toContain(String(16 * MIB));
    // The same observation names the member that raised it, in status.members[].lastError.
    expect(shown.status?.members?.some((m) => m.lastError?.includes('NOSPACE'))).toBe(true);

    const cleared = await eventually(
      'the Defrag operation to succeed and NoSpace to go',
      async () => {
        const c = await getCluster(h, ns, name);
        const last = c.status?.lastOperation;
        return last?.type === 'Defrag' && !c.status?.currentOperation && degraded(c)?.reason !== 'NoSpace'
          ? c
          : undefined;
      },
      600_000,
    );
    expect(cleared.status?.lastOperation?.result).toBe('Succeeded');
    expect(cleared.status?.lastOperation?.message).toContain('NOSPACE disarmed');
    expect(degraded(cleared)?.status).toBe('False');
    expect(cleared.status?.members?.map((m) => m.lastError)).toEqual(
      cleared.status?.members?.map(() => undefined),
    );

    // Writes are accepted again, and the live keys hold their latest values: compaction dropped only history.
    await withClient(ns, name, async (client) => {
      await client.put('/nospace/after').value('accepted');
      expect(await client.get('/nospace/after').string()).toBe('accepted');
      for (const [key, value] of latest) {
        const read = await client.get(key).string();
        if (key === refused?.key) expect([value, refused.value]).toContain(read);
        else expect(read).toBe(value);
      }
    });

    const events = await eventsOf(ns);
    const reasons = events.map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['DefragStarted', 'Compacted', 'NoSpaceCleared']));
    const defragmented = events
      .filter((e) => e.reason === 'MemberDefragmented')
      .map((e) => e.message.split(' ')[0]);
    expect(new Set(defragmented)).toEqual(new Set([`${name}-0`, `${name}-1`, `${name}-2`]));
  });
});

describe('threshold defragmentation', () => {
  test('after deletes and a compaction leave most of each database free, setting thresholdPercent defragments every member and status shows the smaller dbSize', async () => {
    const ns = await freshNamespace(h, 'defrag');
    const name = 'frag';
    await createCluster(h, ns, name, { replicas: 3 });
    await waitConverged(h, ns, name, 3, 300_000);

    // About 12 MiB written, then deleted and compacted: the file keeps its size, its pages are free.
    await withClient(ns, name, async (client) => {
      for (let i = 0; i < 120; i++) {
        await client.put(`/frag/${i}`).value(randomBytes(50 * 1024).toString('hex'));
      }
      await client.put('/frag-keep').value('kept');
      await client.delete().prefix('/frag/');
      const { header } = await client.kv.range({ key: Buffer.from('/frag-keep') });
      await client.kv.compact({ revision: header.revision, physical: true });
    });
    // Each member applies the compaction on its own; its in-use size drops once its backend commits again,
    // which a follower does only when a later write reaches it: hence a small write per look.
    await eventually('every member to have applied the compaction', async () => {
      await withClient(ns, name, async (client) => client.put('/frag-tick').value(String(Date.now())).exec());
      const sizes = await Promise.all(
        [0, 1, 2].map((i) => {
          const member = etcdClient([memberClientURL({ namespace: ns, name }, `${name}-${i}`)]);
          return member.maintenance.status().finally(() => member.close());
        }),
      );
      return sizes.every((st) => Number(st.dbSizeInUse) < Number(st.dbSize) / 2) ? true : undefined;
    });
    await nudge(ns, name);
    const fragmented = await eventually(
      'status to show every member over 8 MiB with most of it free',
      async () => {
        const c = await getCluster(h, ns, name);
        const ms = c.status?.members ?? [];
        const ok =
          ms.length === 3 &&
          ms.every((m) => (m.dbSize ?? 0) > 8 * MIB && (m.dbSizeInUse ?? Infinity) < (m.dbSize ?? 0) / 2);
        return ok ? ms : undefined;
      },
    );

    // Defragmenting blocks a member's reads and writes while it runs: one member at a time, under writes.
    const writer = await startWriterRunning({ namespace: ns, name, prefix: '/defrag-writes' });
    await patchSpec(h, ns, name, { maintenance: { defrag: { thresholdPercent: 50, minDbSize: '4Mi' } } });
    const after = await eventually(
      'a Threshold Defrag to succeed and every member to be smaller',
      async () => {
        const c = await getCluster(h, ns, name);
        const last = c.status?.lastOperation;
        if (last?.type !== 'Defrag' || c.status?.currentOperation) return undefined;
        const ms = c.status?.members ?? [];
        return ms.length === 3 && ms.every((m) => (m.dbSize ?? Infinity) < 4 * MIB) ? c : undefined;
      },
      600_000,
    );
    await expectAvailability(h, await writer.stop(), {
      what: 'threshold defrag of 3 members',
      boundMs: PLANNED_GAP_BOUND_MS,
    });
    expect(after.status?.lastOperation?.result).toBe('Succeeded');
    expect(after.status?.lastOperation?.message).toMatch(/^Threshold: /);
    for (const m of after.status?.members ?? []) {
      const before = fragmented.find((b) => b.id === m.id);
      expect(m.dbSize).toBeLessThan((before?.dbSize ?? 0) / 2);
    }
    await withClient(ns, name, async (client) => {
      expect(await client.get('/frag-keep').string()).toBe('kept');
    });
    const defragmented = (await eventsOf(ns))
      .filter((e) => e.reason === 'MemberDefragmented')
      .map((e) => e.message.split(' ')[0]);
    expect(new Set(defragmented)).toEqual(new Set([`${name}-0`, `${name}-1`, `${name}-2`]));
  });
});

describe('spec.maintenance.defrag validation by the apiserver', () => {
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (err: unknown) => String((err as { body?: unknown }).body ?? (err as Error).message),
    );

  test.each([
    ['neither a schedule nor a threshold', {}, 'needs a schedule'],
    ['a minute out of range', { schedule: '61 * * * *' }, 'five-field cron expression in UTC'],
    ['four fields', { schedule: '0 3 * *' }, 'five-field cron expression in UTC'],
    ['a threshold of 100', { thresholdPercent: 100 }, 'thresholdPercent'],
    [
      'a minDbSize that is no quantity',
      { thresholdPercent: 50, minDbSize: 'big' },
      'minDbSize must be a quantity',
    ],
  ])('refuses %s with a message saying what to write', async (_name, defrag, message) => {
    const ns = await freshNamespace(h, 'defrag-cel');
    const refused = await refusal(
      createCluster(h, ns, 'bad', { replicas: 1, maintenance: { defrag } as never }),
    );
    expect(refused).toContain(message);
  });

  test('accepts a schedule with a threshold, and defaults minDbSize to 100Mi', async () => {
    const ns = await freshNamespace(h, 'defrag-cel');
    const created = await createCluster(h, ns, 'good', {
      replicas: 0,
      maintenance: { defrag: { schedule: '*/30 2-4 * * 1-5', thresholdPercent: 40 } as never },
    });
    expect(created.spec.maintenance?.defrag).toEqual({
      schedule: '*/30 2-4 * * 1-5',
      thresholdPercent: 40,
      minDbSize: '100Mi',
    });
  });
});
