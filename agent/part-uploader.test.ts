// The part uploader against a recording fake S3: parts carry exactly the body's bytes even though buffers are reused, at most queueSize parts are in flight, small bodies are one PutObject, and every failure aborts the multipart upload.
import type { S3Client } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { uploadParts } from './part-uploader';

const PART = 5 * 1024 * 1024;

interface Call {
  command: string;
  input: Record<string, unknown>;
  /** The part's bytes as they were when S3 finished reading them (a buffer reused too early would show here). */
  bytes?: Buffer;
}

/** A fake S3 whose UploadPart answers after a tick, so parts really overlap and buffers could be reused too early. */
function fakeS3(opts: { failPart?: number } = {}) {
  const calls: Call[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const client = {
    async send(command: { constructor: { name: string }; input: Record<string, unknown> }) {
      const name = command.constructor.name.replace(/Command$/, '');
      const call: Call = { command: name, input: command.input };
      calls.push(call);
      switch (name) {
        case 'CreateMultipartUpload':
          return { UploadId: 'u-1' };
        case 'UploadPart': {
          inFlight += 1;
          maxInFlight = Math.max(maxInFlight, inFlight);
          await new Promise((r) => setTimeout(r, 5));
          call.bytes = Buffer.from(command.input.Body as Buffer);
          inFlight -= 1;
          if (command.input.PartNumber === opts.failPart)
            throw Object.assign(new Error('part refused'), { name: 'InternalError' });
          return { ETag: `"etag-${String(command.input.PartNumber)}"`, ChecksumCRC32: 'crc' };
        }
        case 'PutObject':
          call.bytes = Buffer.from(command.input.Body as Buffer);
          return {};
        default:
          return {};
      }
    },
  };
  return { client: client as unknown as S3Client, calls, maxInFlight: () => maxInFlight };
}

/** A random body of `size` bytes, yielded in chunks of odd sizes so part edges fall inside chunks. */
function body(size: number): { bytes: Buffer; chunks: () => AsyncGenerator<Buffer> } {
  const bytes = randomBytes(size);
  return {
    bytes,
    async *chunks() {
      for (let at = 0; at < size;) {
        const n = Math.min(size - at, 77_777);
        yield bytes.subarray(at, at + n);
        at += n;
      }
    },
  };
}

const opts = (client: S3Client, queueSize = 2) => ({
  client,
  bucket: 'b',
  key: 'k',
  partBytes: PART,
  queueSize,
});

it('a body larger than a part: one multipart upload whose parts, in order, are exactly the body', async () => {
  const s3 = fakeS3();
  const data = body(3 * PART + 12_345);
  await uploadParts(data.chunks(), opts(s3.client));

  const parts = s3.calls.filter((c) => c.command === 'UploadPart');
  expect(s3.calls[0]).toMatchObject({
    command: 'CreateMultipartUpload',
    input: { ChecksumAlgorithm: 'CRC32' },
  });
  expect(parts.map((p) => p.input.PartNumber)).toEqual([1, 2, 3, 4]);
  expect(parts.map((p) => p.bytes?.length)).toEqual([PART, PART, PART, 12_345]);
  expect(Buffer.concat(parts.map((p) => p.bytes!)).equals(data.bytes)).toBe(true);
  const complete = s3.calls.at(-1)!;
  expect(complete.command).toBe('CompleteMultipartUpload');
  expect(complete.input.MultipartUpload).toEqual({
    Parts: [1, 2, 3, 4].map((n) => ({ PartNumber: n, ETag: `"etag-${n}"`, ChecksumCRC32: 'crc' })),
  });
});

it.each([1, 2, 3])('never more than queueSize=%i parts in flight', async (queueSize) => {
  const s3 = fakeS3();
  const data = body(6 * PART);
  await uploadParts(data.chunks(), opts(s3.client, queueSize));
  expect(s3.maxInFlight()).toBe(queueSize);
  const parts = s3.calls.filter((c) => c.command === 'UploadPart');
  expect(Buffer.concat(parts.map((p) => p.bytes!)).equals(data.bytes)).toBe(true);
});

it('a body of exactly one part ends with a one-part multipart upload (the part filled before the end was seen)', async () => {
  const s3 = fakeS3();
  await uploadParts(body(PART).chunks(), opts(s3.client));
  expect(s3.calls.map((c) => c.command)).toEqual([
    'CreateMultipartUpload',
    'UploadPart',
    'CompleteMultipartUpload',
  ]);
});

it('a body smaller than a part: a single PutObject and no multipart upload', async () => {
  const s3 = fakeS3();
  const data = body(20_512);
  await uploadParts(data.chunks(), opts(s3.client));
  expect(s3.calls.map((c) => c.command)).toEqual(['PutObject']);
  expect(s3.calls[0]!.bytes!.equals(data.bytes)).toBe(true);
});

it('a refused part: the upload is aborted and the S3 error surfaces', async () => {
  const s3 = fakeS3({ failPart: 2 });
  await expect(uploadParts(body(5 * PART).chunks(), opts(s3.client))).rejects.toThrow('part refused');
  expect(s3.calls.at(-1)).toMatchObject({ command: 'AbortMultipartUpload', input: { UploadId: 'u-1' } });
  expect(s3.calls.some((c) => c.command === 'CompleteMultipartUpload')).toBe(false);
});

it('a body that fails midway: the upload is aborted and the body error surfaces', async () => {
  const s3 = fakeS3();
  const data = body(2 * PART);
  async function* broken() {
    yield* data.chunks();
    throw new Error('etcd went away');
  }
  await expect(uploadParts(broken(), opts(s3.client))).rejects.toThrow('etcd went away');
  expect(s3.calls.at(-1)).toMatchObject({ command: 'AbortMultipartUpload' });
  expect(s3.calls.some((c) => c.command === 'CompleteMultipartUpload')).toBe(false);
});

it('a body that fails before a part filled: nothing is written at all', async () => {
  const s3 = fakeS3();
  async function* broken(): AsyncGenerator<Buffer> {
    yield Buffer.alloc(1000);
    throw new Error('etcd went away');
  }
  await expect(uploadParts(broken(), opts(s3.client))).rejects.toThrow('etcd went away');
  expect(s3.calls).toEqual([]);
});

it('refuses parts under S3 minimum', async () => {
  const s3 = fakeS3();
  await expect(uploadParts(body(10).chunks(), { ...opts(s3.client), partBytes: 1024 })).rejects.toThrow(
    /under S3's 5 MiB minimum/,
  );
});
