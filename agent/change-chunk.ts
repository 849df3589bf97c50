// One chunk of the continuous backup as bytes: a header line (who, which revisions, how many changes, the body's sha256)
// then one JSON line per change. Decoding refuses anything that does not prove itself (a wrong checksum, a count or
// revision range that disagrees with the header or with the object's name, a revision skipped), naming the chunk, so a
// restore never replays a damaged piece. Chunks are written in CHUNK_FORMAT; older formats are still read.
import { createHash } from 'node:crypto';
import {
  CHUNK_FORMAT,
  CHUNK_FORMATS_READ,
  LEASE_GONE,
  type ArchivedChange,
} from '../contracts/continuous-backup';

export interface ChunkHeader {
  /** CHUNK_FORMAT when written; any of CHUNK_FORMATS_READ when read. */
  format: number;
  clusterUid: string;
  chain: string;
  first: number;
  last: number;
  changes: number;
  /** Lowercase hex sha256 of everything after the header line. */
  sha256: string;
  /** RFC 3339: when the archiver cut the chunk; it then held every change etcd had sent. */
  closedAt: string;
}

export interface Chunk {
  header: ChunkHeader;
  changes: ArchivedChange[];
}

export class ChunkError extends Error {
  constructor(
    readonly chunk: string,
    message: string,
  ) {
    super(`chunk ${chunk}: ${message}`);
    this.name = 'ChunkError';
  }
}

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

/** Whole revisions only, in order, contiguous: what one watch delivers between two cuts. */
function checkRevisions(name: string, changes: ArchivedChange[], first: number, last: number): void {
  if (changes.length === 0) throw new ChunkError(name, 'holds no change');
  let previous = first - 1;
  for (const c of changes) {
    if (c.revision !== previous && c.revision !== previous + 1)
      throw new ChunkError(
        name,
        c.revision <= previous
          ? `revision ${c.revision} comes after ${previous} (out of order)`
          : `revisions ${previous + 1}..${c.revision - 1} are missing`,
      );
    previous = c.revision;
  }
  if (changes[0]!.revision !== first || previous !== last)
    throw new ChunkError(
      name,
      `holds revisions ${changes[0]!.revision}..${previous}, its header says ${first}..${last}`,
    );
}

export function encodeChunk(
  meta: { clusterUid: string; chain: string; closedAt: string },
  changes: ArchivedChange[],
): { bytes: Buffer; header: ChunkHeader } {
  const first = changes[0]?.revision ?? 0;
  const last = changes[changes.length - 1]?.revision ?? 0;
  checkRevisions(`${meta.chain}/${first}-${last}`, changes, first, last);
  const body = changes.map((c) => `${JSON.stringify(c)}\n`).join('');
  const header: ChunkHeader = {
    format: CHUNK_FORMAT,
    clusterUid: meta.clusterUid,
    chain: meta.chain,
    first,
    last,
    changes: changes.length,
    sha256: sha256(body),
    closedAt: meta.closedAt,
  };
  return { bytes: Buffer.from(`${JSON.stringify(header)}\n${body}`, 'utf8'), header };
}

/** Format 1 knows no lease TTL; from 2 on a put may carry one: a granted TTL (at least 1 s) or LEASE_GONE. */
const leaseTtlFits = (format: number, c: Partial<ArchivedChange>) =>
  c.leaseTtl === undefined ||
  (format >= 2 &&
    c.type === 'put' &&
    c.lease !== '0' &&
    Number.isSafeInteger(c.leaseTtl) &&
    (c.leaseTtl >= 1 || c.leaseTtl === LEASE_GONE));

const isChange = (format: number, v: unknown): v is ArchivedChange => {
  const c = v as Partial<ArchivedChange> | null;
  return (
    typeof c === 'object' &&
    c !== null &&
    (c.type === 'put' || c.type === 'delete') &&
    typeof c.key === 'string' &&
    (c.type === 'delete' || typeof c.value === 'string') &&
    Number.isSafeInteger(c.revision) &&
    Number.isSafeInteger(c.createRevision) &&
    Number.isSafeInteger(c.version) &&
    typeof c.lease === 'string' &&
    typeof c.receivedAt === 'string' &&
    leaseTtlFits(format, c)
  );
};

/**
 * Reads a chunk and proves it: `name` (its object key) is used in every error; `expect` is what the object's name
 * says (cluster, chain, first and last revision), and the header and content must agree with it.
 */
export function decodeChunk(
  name: string,
  bytes: Buffer,
  expect: { clusterUid: string; chain: string; first: number; last: number },
): Chunk {
  const text = bytes.toString('utf8');
  const newline = text.indexOf('\n');
  if (newline < 0) throw new ChunkError(name, 'has no header line (truncated?)');
  let header: ChunkHeader;
  try {
    header = JSON.parse(text.slice(0, newline)) as ChunkHeader;
  } catch {
    throw new ChunkError(name, 'its header is not JSON (corrupt)');
  }
  if (!CHUNK_FORMATS_READ.includes(header.format))
    throw new ChunkError(
      name,
      `format ${String(header.format)} is not one this agent reads (${CHUNK_FORMATS_READ.join(', ')})`,
    );
  for (const field of ['clusterUid', 'chain', 'first', 'last'] as const)
    if (header[field] !== expect[field])
      throw new ChunkError(
        name,
        `its header says ${field} ${JSON.stringify(header[field])}, its name says ${JSON.stringify(expect[field])}`,
      );
  const body = text.slice(newline + 1);
  const actual = sha256(body);
  if (actual !== header.sha256)
    throw new ChunkError(
      name,
      `has sha256 ${actual}, its header says ${header.sha256} (corrupt or truncated)`,
    );
  const lines = body.split('\n');
  if (lines.pop() !== '') throw new ChunkError(name, 'does not end with a newline (truncated)');
  const changes = lines.map((line, i) => {
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      throw new ChunkError(name, `line ${i + 2} is not JSON`);
    }
    if (!isChange(header.format, v)) throw new ChunkError(name, `line ${i + 2} is not a change`);
    return v;
  });
  if (changes.length !== header.changes)
    throw new ChunkError(name, `holds ${changes.length} changes, its header says ${header.changes}`);
  checkRevisions(name, changes, header.first, header.last);
  return { header, changes };
}
