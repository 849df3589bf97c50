// The continuous backup's names and decisions as tables: names round-trip, a chain reaches what its contiguous chunks
// reach, a point is planned through the chain with the least to replay or refused with the nearest points, gaps are
// found, and retention never deletes a chain a kept point needs.
import {
  archiveRoot,
  chainId,
  chainReach,
  chainsOfListing,
  chainsToDelete,
  chunkKey,
  compactTime,
  findGaps,
  manifestKey,
  newestPoint,
  padRevision,
  parseArchiveKey,
  parseChainId,
  planRevision,
  revisionAtTime,
  snapshotKey,
  stateKey,
  type ChainView,
} from './continuous-backup';

const UID = '6f1c2a9e-0b1d-4c55-9a3e-2f0d8e7b1c44';
const root = archiveRoot('etcd/main/', UID);

describe('names', () => {
  it.each([
    ['a prefix with a trailing slash', 'etcd/main/', `etcd/main/continuous/${UID}/`],
    ['a prefix without one', 'etcd/main', `etcd/main/continuous/${UID}/`],
    ['an empty prefix', '', `continuous/${UID}/`],
  ])('the root under %s', (_name, prefix, expected) => {
    expect(archiveRoot(prefix, UID)).toBe(expected);
  });

  it('a uid with a slash is refused (it would escape the root)', () => {
    expect(() => archiveRoot('p', 'a/b')).toThrow(/not a uid/);
  });

  it('a chain id sorts by revision, then by time, and parses back', () => {
    const id = chainId(1200, '2026-11-25T10:32:00.123Z');
    expect(id).toBe('0000000000001200-20261125T103200123Z');
    expect(parseChainId(id)).toEqual({ snapshotRevision: 1200, snapshotTime: '2026-11-25T10:32:00.123Z' });
    expect(chainId(999, '2027-01-01T00:00:00Z') < id).toBe(true);
    expect(chainId(1200, '2026-11-25T10:32:00.124Z') > id).toBe(true);
  });

  it('compactTime refuses what is not a time, padRevision what is not a revision', () => {
    expect(() => compactTime('yesterday')).toThrow(/not a time/);
    expect(() => padRevision(-1)).toThrow();
    expect(() => padRevision(1.5)).toThrow();
    expect(() => chunkKey(root, 'c', 5, 4)).toThrow(/empty/);
  });

  const chain = chainId(100, '2026-11-25T10:00:00.000Z');
  it.each([
    [
      'the snapshot',
      snapshotKey(root, chain),
      { kind: 'snapshot', chain, snapshotRevision: 100, snapshotTime: '2026-11-25T10:00:00.000Z' },
    ],
    [
      'the manifest',
      manifestKey(root, chain),
      { kind: 'manifest', chain, snapshotRevision: 100, snapshotTime: '2026-11-25T10:00:00.000Z' },
    ],
    ['a chunk', chunkKey(root, chain, 101, 150), { kind: 'chunk', chain, first: 101, last: 150 }],
    ['the state', stateKey(root), { kind: 'state' }],
    [
      'a chunk at or before its snapshot (impossible) is a stranger',
      `${root}${chain}/chunks/${padRevision(100)}-${padRevision(120)}.chunk`,
      undefined,
    ],
    [
      'a chunk whose last precedes its first is a stranger',
      `${root}${chain}/chunks/${padRevision(130)}-${padRevision(120)}.chunk`,
      undefined,
    ],
    ['another cluster is a stranger', `${archiveRoot('etcd/main', 'other')}${chain}/chain.json`, undefined],
    ['a file of its own in a chain is a stranger', `${root}${chain}/notes.txt`, undefined],
    ['a malformed chain id is a stranger', `${root}123-x/chain.json`, undefined],
  ])('%s', (_name, key, expected) => {
    expect(parseArchiveKey(root, key)).toEqual(expected);
  });
});

/** A chain with a manifest and the given chunks ([first, last] pairs). */
function view(
  snapshotRevision: number,
  time: string,
  chunks: Array<[number, number]>,
  complete = true,
): ChainView {
  const chain = chainId(snapshotRevision, time);
  return {
    chain,
    snapshotRevision,
    snapshotTime: time,
    complete,
    chunks: chunks.map(([first, last]) => ({ first, last, key: chunkKey(root, chain, first, last) })),
  };
}

describe('chainsOfListing', () => {
  it('groups by chain, sorts chunks by revision, marks chains with a manifest complete, ignores strangers', () => {
    const a = chainId(10, '2026-11-25T10:00:00Z');
    const b = chainId(40, '2026-11-25T11:00:00Z');
    const keys = [
      chunkKey(root, a, 21, 30),
      stateKey(root),
      snapshotKey(root, b),
      manifestKey(root, a),
      snapshotKey(root, a),
      chunkKey(root, a, 11, 20),
      `${root}stray`,
    ];
    const chains = chainsOfListing(root, keys);
    expect(chains.map((c) => [c.chain, c.complete, c.chunks.map((x) => x.first)])).toEqual([
      [a, true, [11, 21]],
      [b, false, []],
    ]);
  });
});

describe('chainReach and planRevision', () => {
  const T0 = '2026-11-25T10:00:00.000Z';
  const T1 = '2026-11-25T11:00:00.000Z';
  const T2 = '2026-11-25T12:00:00.000Z';
  const T3 = '2026-11-25T13:00:00.000Z';

  it.each<[string, ChainView, { from: number; to: number; holeAfter?: number }]>([
    ['a snapshot alone reaches its own revision', view(100, T0, []), { from: 100, to: 100 }],
    [
      'contiguous chunks reach their end',
      view(100, T0, [
        [101, 110],
        [111, 111],
        [112, 140],
      ]),
      { from: 100, to: 140 },
    ],
    [
      'a missing chunk ends the reach before it',
      view(100, T0, [
        [101, 110],
        [121, 130],
      ]),
      { from: 100, to: 110, holeAfter: 110 },
    ],
    [
      'an overlapping retry continues the reach',
      view(100, T0, [
        [101, 110],
        [105, 120],
        [121, 125],
      ]),
      { from: 100, to: 125 },
    ],
    [
      'a chunk inside what is reached already changes nothing',
      view(100, T0, [
        [101, 130],
        [105, 110],
      ]),
      { from: 100, to: 130 },
    ],
  ])('%s', (_name, v, expected) => {
    expect(chainReach(v)).toEqual(expected);
  });

  // Chain A 100..160 (rolled over to B at 150, A's tail overlaps B), B 150..300, a gap, C 400..450 (after a compaction).
  const A = view(100, T0, [
    [101, 150],
    [151, 160],
  ]);
  const B = view(150, T1, [
    [151, 200],
    [201, 300],
  ]);
  const C = view(400, T3, [[401, 450]]);
  const half = view(460, T3, [], false);
  const chains = [A, B, C, half];

  it.each<[string, number, { chain: string; chunks: number[] } | { nearest: number[]; says: RegExp }]>([
    ['the first snapshot itself needs no chunk', 100, { chain: A.chain, chunks: [] }],
    [
      'a point inside the first chain replays its chunks up to the one holding it',
      120,
      { chain: A.chain, chunks: [101] },
    ],
    [
      'a point both chains reach comes from the newer snapshot (less to replay)',
      155,
      { chain: B.chain, chunks: [151] },
    ],
    ['the second snapshot itself needs no chunk', 150, { chain: B.chain, chunks: [] }],
    ['the end of the second chain', 300, { chain: B.chain, chunks: [151, 201] }],
    [
      'a point in the gap is refused with the reachable points around it',
      350,
      { nearest: [300, 400], says: /in a gap/ },
    ],
    [
      'a point before the oldest chain is refused with the oldest point',
      50,
      { nearest: [100], says: /before the oldest/ },
    ],
    [
      'a point past the newest change is refused with the newest point',
      451,
      { nearest: [450], says: /after the newest/ },
    ],
    ['an incomplete chain (no manifest) is never used', 460, { nearest: [450], says: /after the newest/ }],
  ])('%s (revision %d)', (_name, revision, expected) => {
    const plan = planRevision(chains, revision);
    if ('chain' in expected) {
      expect(plan).toEqual({
        ok: true,
        revision,
        chain: expected.chain,
        chunks: expect.any(Array),
      });
      if (plan.ok) expect(plan.chunks.map((c) => c.first)).toEqual(expected.chunks);
    } else {
      expect(plan).toMatchObject({ ok: false, nearest: expected.nearest });
      if (!plan.ok) expect(plan.message).toMatch(expected.says);
    }
  });

  it('an empty archive refuses every point', () => {
    expect(planRevision([], 5)).toEqual({
      ok: false,
      message: 'the archive holds no complete chain',
      nearest: [],
    });
    expect(newestPoint([])).toBeUndefined();
  });

  it('the newest point is the furthest reach of a complete chain', () => {
    expect(newestPoint(chains)).toEqual({ chain: C.chain, revision: 450 });
  });

  it('a missing chunk makes the points after it unreachable in that chain', () => {
    const holed = view(100, T0, [
      [101, 110],
      [121, 130],
    ]);
    expect(planRevision([holed], 110)).toMatchObject({ ok: true });
    const refused = planRevision([holed], 125);
    expect(refused).toMatchObject({ ok: false, nearest: [110] });
    if (!refused.ok) expect(refused.message).toMatch(/has no chunk starting at revision 111 \(missing\)$/);
  });

  it.each<[string, ChainView[], Array<{ afterRevision: number; beforeRevision: number }>]>([
    ['overlapping chains leave no gap', [A, B], []],
    ['a chain starting right after the last reach leaves none', [B, view(301, T2, [])], []],
    ['a chain starting later leaves one', [A, B, C], [{ afterRevision: 300, beforeRevision: 400 }]],
    [
      'incomplete chains are not counted as reach',
      [A, view(160, T1, [[161, 500]], false), C],
      [{ afterRevision: 160, beforeRevision: 400 }],
    ],
  ])('findGaps: %s', (_name, cs, expected) => {
    expect(findGaps(cs)).toEqual(expected);
  });
});

describe('revisionAtTime', () => {
  const snap = { revision: 100, time: '2026-11-25T10:00:00.000Z' };
  const changes = [
    { revision: 101, receivedAt: '2026-11-25T10:00:01.000Z' },
    { revision: 102, receivedAt: '2026-11-25T10:00:05.000Z' },
    { revision: 102, receivedAt: '2026-11-25T10:00:05.000Z' }, // two keys in one transaction
    { revision: 103, receivedAt: '2026-11-25T10:00:09.000Z' },
  ];
  const known = '2026-11-25T10:00:30.000Z';
  it.each([
    ['the snapshot time reaches the snapshot', '2026-11-25T10:00:00.000Z', 100],
    ['before the first change, still the snapshot', '2026-11-25T10:00:00.500Z', 100],
    ['at a change, that change', '2026-11-25T10:00:05.000Z', 102],
    ['between changes, the earlier', '2026-11-25T10:00:07.000Z', 102],
    ['after the last change while the archive knew it had everything', '2026-11-25T10:00:20.000Z', 103],
    ['before the snapshot: not in this chain', '2026-11-25T09:59:59.000Z', undefined],
    ['after the archive last knew: not reachable', '2026-11-25T10:00:31.000Z', undefined],
  ])('%s', (_name, time, expected) => {
    expect(revisionAtTime(snap, changes, time, known)).toBe(expected);
  });
});

describe('chainsToDelete', () => {
  const at = (h: number) => `2026-11-25T${String(h).padStart(2, '0')}:00:00.000Z`;
  const c1 = view(100, at(1), [[101, 200]]);
  const c2 = view(200, at(2), [[201, 300]]);
  const c3 = view(300, at(3), [[301, 400]]);
  const c4 = view(400, at(4), [[401, 410]]);
  const leftover = view(150, at(1).replace('01:00', '01:30'), [], false);
  const newestIncomplete = view(410, at(5), [], false);

  it.each<[string, ChainView[], string, string[]]>([
    ['nothing is older than the window: nothing goes', [c1, c2, c3], at(0), []],
    [
      'the window starts inside the first chain: it is needed, nothing goes',
      [c1, c2, c3],
      '2026-11-25T01:30:00.000Z',
      [],
    ],
    [
      'the window starts inside the second chain: only the first goes',
      [c1, c2, c3],
      '2026-11-25T02:30:00.000Z',
      [c1.chain],
    ],
    [
      'the window starts exactly at the third snapshot: the two before it go',
      [c1, c2, c3, c4],
      at(3),
      [c1.chain, c2.chain],
    ],
    [
      'every chain is older than the window: the newest complete one stays',
      [c1, c2, c3, c4],
      at(9),
      [c1.chain, c2.chain, c3.chain],
    ],
    [
      'a leftover without a manifest goes with the chains before the anchor',
      [c1, leftover, c2, c3],
      '2026-11-25T02:30:00.000Z',
      [c1.chain, leftover.chain],
    ],
    [
      'the newest chain still being written is never the anchor and never goes',
      [c1, c2, newestIncomplete],
      at(9),
      [c1.chain],
    ],
    ['only incomplete chains: nothing goes', [leftover, newestIncomplete], at(9), []],
  ])('%s', (_name, chains, keepFrom, expected) => {
    expect(chainsToDelete(chains, keepFrom)).toEqual(expected);
  });

  it('whatever goes, every point from the window on is still planned from what stays', () => {
    const chains = [c1, c2, c3, c4];
    const doomed = new Set(chainsToDelete(chains, '2026-11-25T02:30:00.000Z'));
    const kept = chains.filter((c) => !doomed.has(c.chain));
    for (let rev = 200; rev <= 410; rev++) expect(planRevision(kept, rev).ok).toBe(true);
  });
});
