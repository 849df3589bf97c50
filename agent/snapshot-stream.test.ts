// The snapshot stream's framing: data chunks then a sha256 trailer; the output keeps the trailer, and a cut or damaged stream errors instead of ending.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { AgentError } from './agent-error';
import { DigestStream } from './digest-stream';
import { AgentFailureReasons } from '../contracts/agent-result';
import { SnapshotStream, type SnapshotMessage } from './snapshot-stream';

const db = Buffer.from('bolt database bytes '.repeat(100));
const sha = (b: Buffer) => createHash('sha256').update(b).digest();

/** What etcd sends for `data`: chunks with decreasing remaining_bytes, then the trailer. */
function messages(data: Buffer, chunk = 512, trailer: Buffer = sha(data)): SnapshotMessage[] {
  const out: SnapshotMessage[] = [];
  for (let sent = 0; sent < data.length;) {
    const blob = data.subarray(sent, sent + chunk);
    sent += blob.length;
    out.push({ header: null, remaining_bytes: String(data.length - sent), blob });
  }
  out.push({ header: null, remaining_bytes: '0', blob: trailer });
  return out;
}

async function run(input: SnapshotMessage[]): Promise<{ bytes: Buffer; stream: SnapshotStream }> {
  const stream = new SnapshotStream();
  const parts: Buffer[] = [];
  Readable.from(input).pipe(stream);
  for await (const part of stream) parts.push(part as Buffer);
  return { bytes: Buffer.concat(parts), stream };
}

async function failure(input: SnapshotMessage[]): Promise<AgentError> {
  try {
    await run(input);
  } catch (e) {
    return e as AgentError;
  }
  throw new Error('the stream ended without an error');
}

describe('SnapshotStream', () => {
  it('passes the database through followed by its sha256 trailer (the file etcdctl snapshot save writes)', async () => {
    const { bytes, stream } = await run(messages(db));
    expect(bytes.equals(Buffer.concat([db, sha(db)]))).toBe(true);
    expect(stream.headerRevision).toBeUndefined();
    expect(stream.byteCount).toBe(db.length + 32);
    expect(stream.sha256).toBe(sha(bytes).toString('hex'));
  });

  it('a database that fits one message still needs and keeps the trailer', async () => {
    const { bytes } = await run(messages(db, db.length));
    expect(bytes.length).toBe(db.length + 32);
  });

  it('takes the revision from the first header when the server sends one', async () => {
    const input = messages(db);
    input[0] = { ...input[0]!, header: { revision: '4242' } };
    expect((await run(input)).stream.headerRevision).toBe(4242);
  });

  it.each<[string, SnapshotMessage[], RegExp]>([
    ['a stream cut before the last data chunk', messages(db).slice(0, 2), /ended before its sha256 trailer/],
    ['a stream cut before the trailer', messages(db).slice(0, -1), /ended before its sha256 trailer/],
    [
      'a trailer that does not match the data',
      messages(db, 512, sha(Buffer.from('other'))),
      /does not match/,
    ],
    ['a trailer of the wrong length', messages(db, 512, Buffer.alloc(16)), /does not match/],
    [
      'data after the trailer',
      [...messages(db), { header: null, remaining_bytes: '0', blob: Buffer.from('x') }],
      /after its sha256 trailer/,
    ],
  ])('%s is EtcdUnavailable', async (_name, input, message) => {
    const e = await failure(input);
    expect(e).toBeInstanceOf(AgentError);
    expect(e.reason).toBe(AgentFailureReasons.EtcdUnavailable);
    expect(e.message).toMatch(message);
  });

  it('a flipped byte in the data is caught by the trailer', async () => {
    const input = messages(db);
    const damaged = Buffer.from(input[1]!.blob);
    damaged[0] = damaged[0]! ^ 0xff;
    input[1] = { ...input[1]!, blob: damaged };
    expect((await failure(input)).message).toMatch(/does not match/);
  });
});

describe('DigestStream', () => {
  it('counts and hashes exactly what passes through', async () => {
    const digest = new DigestStream();
    const parts: Buffer[] = [];
    Readable.from([db.subarray(0, 10), db.subarray(10)]).pipe(digest);
    for await (const part of digest) parts.push(part as Buffer);
    expect(Buffer.concat(parts).equals(db)).toBe(true);
    expect(digest.byteCount).toBe(db.length);
    expect(digest.sha256).toBe(sha(db).toString('hex'));
  });

  it('refuses to report a sha256 before the stream finished', () => {
    expect(() => new DigestStream().sha256).toThrow(/before the stream finished/);
  });
});
