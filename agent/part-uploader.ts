// Streams a body to one S3 object with a multipart upload through a fixed pool of part buffers (filled in turn, reused once their part is stored), so memory is (queue + 1) x part size with no garbage; a failure aborts the upload, so no object or parts are left.
import {
  AbortMultipartUploadCommand,
  ChecksumAlgorithm,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  UploadPartCommand,
  type CompletedPart,
  type S3Client,
} from '@aws-sdk/client-s3';

export interface PartUploadOptions {
  client: S3Client;
  bucket: string;
  key: string;
  /** At least 5 MiB (S3's minimum for every part but the last). */
  partBytes: number;
  /** Parts uploading at once while the next one fills. */
  queueSize: number;
}

const MIN_PART_BYTES = 5 * 1024 * 1024;
const MAX_PARTS = 10_000;

/**
 * Uploads everything `body` yields. A body that fits one part becomes a single PutObject; anything larger a
 * multipart upload whose parts carry CRC32 checksums (as lib-storage's Upload does). Rejects with the first
 * error from the body or from S3, after aborting the multipart upload.
 */
export async function uploadParts(body: AsyncIterable<Buffer>, opts: PartUploadOptions): Promise<void> {
  if (opts.partBytes < MIN_PART_BYTES)
    throw new Error(`part size ${opts.partBytes} is under S3's 5 MiB minimum`);
  const { client, bucket: Bucket, key: Key } = opts;
  const free: Buffer[] = [];
  const inFlight: Array<Promise<Buffer>> = [];
  const parts: CompletedPart[] = [];
  let failure: unknown;
  let uploadId: string | undefined;
  let buffer: Buffer = Buffer.allocUnsafe(opts.partBytes);
  let filled = 0;
  let partNumber = 0;

  const startPart = async (part: Buffer, length: number): Promise<void> => {
    uploadId ??= (
      await client.send(
        new CreateMultipartUploadCommand({ Bucket, Key, ChecksumAlgorithm: ChecksumAlgorithm.CRC32 }),
      )
    ).UploadId;
    if (!uploadId) throw new Error('S3 returned no UploadId');
    if (++partNumber > MAX_PARTS) throw new Error(`the body needs more than ${MAX_PARTS} parts`);
    const PartNumber = partNumber;
    const UploadId = uploadId;
    const sent = client
      .send(new UploadPartCommand({ Bucket, Key, UploadId, PartNumber, Body: part.subarray(0, length) }))
      .then((r) => {
        if (!r.ETag) throw new Error(`S3 returned no ETag for part ${PartNumber}`);
        parts.push({ PartNumber, ETag: r.ETag, ChecksumCRC32: r.ChecksumCRC32 });
        return part;
      });
    // Noted at once, so a failed part stops the reading loop instead of surfacing only when awaited.
    sent.catch((e: unknown) => (failure ??= e));
    inFlight.push(sent);
  };

  try {
    for await (const chunk of body) {
      if (failure !== undefined) throw failure;
      let offset = 0;
      while (offset < chunk.length) {
        const n = chunk.copy(buffer, filled, offset);
        filled += n;
        offset += n;
        if (filled < buffer.length) continue;
        // A full buffer: wait for a slot (reusing that part's buffer), then send it.
        if (inFlight.length >= opts.queueSize) free.push(await inFlight.shift()!);
        await startPart(buffer, filled);
        buffer = free.pop() ?? Buffer.allocUnsafe(opts.partBytes);
        filled = 0;
      }
    }
    if (uploadId === undefined) {
      await client.send(new PutObjectCommand({ Bucket, Key, Body: buffer.subarray(0, filled) }));
      return;
    }
    if (filled > 0) await startPart(buffer, filled);
    await Promise.all(inFlight);
    parts.sort((a, b) => (a.PartNumber ?? 0) - (b.PartNumber ?? 0));
    await client.send(
      new CompleteMultipartUploadCommand({
        Bucket,
        Key,
        UploadId: uploadId,
        MultipartUpload: { Parts: parts },
      }),
    );
  } catch (e) {
    await Promise.allSettled(inFlight);
    if (uploadId !== undefined)
      await client
        .send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId: uploadId }))
        .catch(() => undefined);
    throw failure ?? e;
  }
}
