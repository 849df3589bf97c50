import type { ArchivedChange } from '../contracts/continuous-backup';
import { ChangeBuffer, sizeOf } from './change-buffer';

const change = (revision: number, value = 'v'): ArchivedChange => ({
  type: 'put',
  key: Buffer.from(`k${revision}`).toString('base64'),
  value: Buffer.from(value).toString('base64'),
  revision,
  createRevision: revision,
  version: 1,
  lease: '0',
  receivedAt: '2026-11-26T00:00:00.000Z',
});

const one = sizeOf(change(1));

test.each([
  { name: 'all fit', revisions: [1, 2, 3], chunkBytes: 10 * one, head: [1, 2, 3] },
  { name: 'cut at the limit', revisions: [1, 2, 3], chunkBytes: 2 * one, head: [1, 2] },
  { name: 'one change larger than the limit still goes alone', revisions: [1, 2], chunkBytes: 1, head: [1] },
  { name: 'a revision is never split', revisions: [1, 2, 2, 2, 3], chunkBytes: 2 * one, head: [1, 2, 2, 2] },
  { name: 'empty', revisions: [], chunkBytes: one, head: [] },
])('head: $name', ({ revisions, chunkBytes, head }) => {
  const b = new ChangeBuffer();
  for (const r of revisions) b.push(change(r));
  expect(b.head(chunkBytes).map((c) => c.revision)).toEqual(head);
  expect(b.length).toBe(revisions.length);
});

test('bytes follow push, shift, replace and clear', () => {
  const b = new ChangeBuffer();
  b.push(change(1));
  b.push(change(2, 'longer value'));
  expect(b.bytes).toBe(sizeOf(change(1)) + sizeOf(change(2, 'longer value')));
  b.shift(1);
  expect(b.bytes).toBe(sizeOf(change(2, 'longer value')));
  expect(b.oldest?.revision).toBe(2);
  b.replace([change(7), change(8)]);
  expect([b.oldest?.revision, b.newest?.revision, b.bytes]).toEqual([7, 8, 2 * one]);
  b.clear();
  expect([b.length, b.bytes, b.newest]).toEqual([0, 0, undefined]);
});
