// A chunk round-trips, and every kind of damage is refused with the chunk's name and what is wrong.
import { ChunkError, decodeChunk, encodeChunk } from './change-chunk';
import type { ArchivedChange } from '../contracts/continuous-backup';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const put = (revision: number, key: string, value: string): ArchivedChange => ({
  type: 'put',
  key: b64(key),
  value: b64(value),
  revision,
  createRevision: revision,
  version: 1,
  lease: '0',
  receivedAt: `2026-11-25T10:00:${String(revision % 60).padStart(2, '0')}.000Z`,
});
const del = (revision: number, key: string): ArchivedChange => ({
  type: 'delete',
  key: b64(key),
  revision,
  createRevision: 0,
  version: 0,
  lease: '0',
  receivedAt: '2026-11-25T10:00:30.000Z',
});

const meta = { clusterUid: 'uid-1', chain: 'chain-a', closedAt: '2026-11-25T10:01:00.000Z' };
const expectOf = (first: number, last: number) => ({ clusterUid: 'uid-1', chain: 'chain-a', first, last });
// Revision 12 is a transaction of two puts; a lease id past 2^53 stays exact as a string, with its granted TTL.
const changes = [
  put(11, 'a', 'x'),
  { ...put(12, 'b', 'y'), lease: '7587883155384143876', leaseTtl: 30 },
  put(12, 'c', '\u0000bytes\u00ff'),
  del(13, 'a'),
];

test('a chunk decodes to what was encoded, its header naming the revisions and the sha256', () => {
  const { bytes, header } = encodeChunk(meta, changes);
  expect(header).toMatchObject({ first: 11, last: 13, changes: 4, format: 2 });
  expect(header.sha256).toMatch(/^[0-9a-f]{64}$/);
  expect(decodeChunk('k', bytes, expectOf(11, 13))).toEqual({ header, changes });
});

test.each<[string, ArchivedChange[], RegExp]>([
  ['an empty chunk', [], /holds no change/],
  ['a skipped revision', [put(11, 'a', 'x'), put(13, 'b', 'y')], /revisions 12\.\.12 are missing/],
  ['revisions out of order', [put(12, 'a', 'x'), put(11, 'b', 'y')], /out of order/],
])('encoding refuses %s', (_name, cs, message) => {
  expect(() => encodeChunk(meta, cs)).toThrow(message);
});

const damage = (f: (text: string) => string): Buffer =>
  Buffer.from(f(encodeChunk(meta, changes).bytes.toString('utf8')), 'utf8');

test.each<[string, Buffer, { first: number; last: number }, RegExp]>([
  [
    'a flipped byte in a value',
    damage((t) => t.replace('"eA=="', '"eB=="')),
    { first: 11, last: 13 },
    /has sha256 [0-9a-f]{64}, its header says/,
  ],
  [
    'a truncated body',
    damage((t) => t.slice(0, t.length - 20)),
    { first: 11, last: 13 },
    /corrupt or truncated/,
  ],
  ['no header line at all', Buffer.from('{"format":1'), { first: 11, last: 13 }, /no header line/],
  ['a header that is not JSON', damage((t) => `#${t}`), { first: 11, last: 13 }, /header is not JSON/],
  [
    'a name that says other revisions',
    encodeChunk(meta, changes).bytes,
    { first: 11, last: 14 },
    /header says last 13, its name says 14/,
  ],
  [
    'a header that lies about the count',
    damage((t) => t.replace('"changes":4', '"changes":5')),
    { first: 11, last: 13 },
    /holds 4 changes, its header says 5/,
  ],
  [
    'an unknown format',
    damage((t) => t.replace('"format":2', '"format":3')),
    { first: 11, last: 13 },
    /format 3 is not one this agent reads \(1, 2\)/,
  ],
  [
    'a lease TTL in a format 1 chunk (which has none)',
    damage((t) => t.replace('"format":2', '"format":1')),
    { first: 11, last: 13 },
    /line 3 is not a change/,
  ],
])('decoding refuses %s, naming the chunk', (_name, bytes, range, message) => {
  let caught: unknown;
  try {
    decodeChunk('archive/chain-a/chunks/11-13.chunk', bytes, {
      clusterUid: 'uid-1',
      chain: 'chain-a',
      ...range,
    });
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(ChunkError);
  expect((caught as ChunkError).message).toMatch(/^chunk archive\/chain-a\/chunks\/11-13\.chunk: /);
  expect((caught as ChunkError).message).toMatch(message);
});

test('a chunk of another cluster is refused even when its bytes are intact', () => {
  const { bytes } = encodeChunk({ ...meta, clusterUid: 'uid-2' }, changes);
  expect(() => decodeChunk('k', bytes, expectOf(11, 13))).toThrow(
    /clusterUid "uid-2", its name says "uid-1"/,
  );
});

/** A chunk of the given changes with the header's format set to `format` (the header is outside the checksum). */
const withFormat = (format: number, cs: ArchivedChange[]) =>
  Buffer.from(
    encodeChunk(meta, cs).bytes.toString('utf8').replace('"format":2', `"format":${format}`),
    'utf8',
  );

test('a format 1 chunk (written before lease TTLs were recorded) still decodes', () => {
  const old = changes.map(({ leaseTtl: _ttl, ...c }) => c);
  expect(decodeChunk('k', withFormat(1, old), expectOf(11, 13)).changes).toEqual(old);
});

const leased = (leaseTtl: number, over: Partial<ArchivedChange> = {}): ArchivedChange => ({
  ...put(11, 'a', 'x'),
  lease: '42',
  leaseTtl,
  ...over,
});

test.each<[string, boolean, ArchivedChange]>([
  ['a granted TTL of 60 s', true, leased(60)],
  ['a lease that was gone when first seen (-1)', true, leased(-1)],
  ['a TTL of 0, which etcd never grants', false, leased(0)],
  ['a fractional TTL', false, leased(1.5)],
  ['a TTL on a put without a lease', false, leased(60, { lease: '0' })],
  ['a TTL on a delete', false, { ...del(11, 'a'), lease: '42', leaseTtl: 60 }],
])('a format 2 change with %s is read: %s', (_name, ok, change) => {
  const read = () => decodeChunk('k', withFormat(2, [change]), expectOf(11, 11));
  if (ok) expect(read().changes).toEqual([change]);
  else expect(read).toThrow(/line 2 is not a change/);
});
