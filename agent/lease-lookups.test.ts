// The archiver's lease lookups: the first put naming a lease carries its TTL, once settled; nothing else does; a failed
// lookup holds the chunk back and is asked again.
import { grantedTtlOf, LeaseLookups } from './lease-lookups';
import { LEASE_GONE, type ArchivedChange } from '../contracts/continuous-backup';

let revision = 0;
const change = (type: 'put' | 'delete', lease: string): ArchivedChange => ({
  type,
  key: 'aw==',
  ...(type === 'put' ? { value: 'dg==' } : {}),
  revision: ++revision,
  createRevision: 1,
  version: 1,
  lease,
  receivedAt: '2026-11-27T03:00:00.000Z',
});

test.each<[string, Array<['put' | 'delete', string]>, Record<string, number>, Array<number | undefined>]>([
  [
    'the first put naming each lease carries its granted TTL, later ones none',
    [
      ['put', '7'],
      ['put', '7'],
      ['put', '9'],
    ],
    { '7': 30, '9': 5 },
    [30, undefined, 5],
  ],
  ['a put without a lease carries nothing', [['put', '0']], {}, [undefined]],
  ['a delete carries nothing', [['delete', '7']], { '7': 30 }, [undefined]],
  ['a lease etcd no longer had is recorded as gone', [['put', '8']], { '8': LEASE_GONE }, [LEASE_GONE]],
])('%s', async (_name, given, ttls, want) => {
  const asked: string[] = [];
  const lookups = new LeaseLookups((lease) => {
    asked.push(lease);
    return Promise.resolve(ttls[lease]!);
  });
  const changes = given.map(([type, lease]) => change(type, lease));
  changes.forEach((c) => lookups.note(c));
  await lookups.settle(changes);
  expect(changes.map((c) => c.leaseTtl)).toEqual(want);
  expect(asked).toEqual([...new Set(given.filter(([t, l]) => t === 'put' && l !== '0').map(([, l]) => l))]);
});

test('a failed lookup fails settle, is asked again, and the retry writes the TTL', async () => {
  let calls = 0;
  const lookups = new LeaseLookups(() =>
    ++calls === 1 ? Promise.reject(new Error('etcd unavailable')) : Promise.resolve(12),
  );
  const c = change('put', '5');
  lookups.note(c);
  await expect(lookups.settle([c])).rejects.toThrow('etcd unavailable');
  expect(c.leaseTtl).toBeUndefined();
  await lookups.settle([c]);
  expect(c.leaseTtl).toBe(12);
  expect(calls).toBe(2);
});

test('after clear (a gap dropped the buffer) a lease is asked about again', async () => {
  const lookups = new LeaseLookups(() => Promise.resolve(20));
  const first = change('put', '3');
  lookups.note(first);
  await lookups.settle([first]);
  lookups.clear();
  const again = change('put', '3');
  lookups.note(again);
  await lookups.settle([again]);
  expect(again.leaseTtl).toBe(20);
});

test.each<[string, { TTL: string; grantedTTL: string }, number]>([
  ['a live lease answers its granted TTL, not what remains', { TTL: '17', grantedTTL: '60' }, 60],
  ['an expired or revoked lease (TTL -1) is gone', { TTL: '-1', grantedTTL: '0' }, LEASE_GONE],
])('%s', (_name, res, want) => {
  expect(grantedTtlOf(res)).toBe(want);
});
