// The few object-store calls the continuous backup makes (put, put a file, get, list, delete), behind one interface so
// the archiver and the point-in-time restore are the same code against S3 and against a fake in unit tests.
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { createReadStream, createWriteStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { uploadParts } from './part-uploader';

export interface ArchiveStore {
  /** Where it is, for messages: s3://bucket. */
  readonly where: string;
  put(key: string, body: Buffer): Promise<void>;
  /** A large file (a full snapshot), streamed. */
  putFile(key: string, path: string): Promise<void>;
  /** undefined when the object does not exist. */
  get(key: string): Promise<Buffer | undefined>;
  /** Streams the object into a file (a full snapshot); false when the object does not exist. */
  download(key: string, path: string): Promise<boolean>;
  /** Every key under the prefix, in key order. */
  list(prefix: string): Promise<string[]>;
  /** Absent keys are not an error. */
  delete(keys: string[]): Promise<void>;
}

const NOT_FOUND = new Set(['NoSuchKey', 'NotFound']);
const PART_BYTES = 8 * 1024 * 1024;

export class S3ArchiveStore implements ArchiveStore {
  readonly where: string;

  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
  ) {
    this.where = `s3://${bucket}`;
  }

  async put(key: string, body: Buffer): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body }));
  }

  async putFile(key: string, path: string): Promise<void> {
    await uploadParts(createReadStream(path), {
      client: this.client,
      bucket: this.bucket,
      key,
      partBytes: PART_BYTES,
      queueSize: 2,
    });
  }

  async get(key: string): Promise<Buffer | undefined> {
    try {
      const r = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      if (!r.Body) return Buffer.alloc(0);
      return Buffer.from(await r.Body.transformToByteArray());
    } catch (e) {
      if (NOT_FOUND.has((e as { name?: string }).name ?? '')) return undefined;
      throw e;
    }
  }

  async download(key: string, path: string): Promise<boolean> {
    let body: Readable;
    try {
      const r = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      if (!r.Body) throw new Error(`S3 returned no body for ${key}`);
      body = r.Body as Readable;
    } catch (e) {
      if (NOT_FOUND.has((e as { name?: string }).name ?? '')) return false;
      throw e;
    }
    await pipeline(body, createWriteStream(path, { mode: 0o600 }));
    return true;
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const r = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }),
      );
      for (const o of r.Contents ?? []) if (o.Key) keys.push(o.Key);
      token = r.IsTruncated ? r.NextContinuationToken : undefined;
    } while (token);
    return keys.sort();
  }

  async delete(keys: string[]): Promise<void> {
    // DeleteObjects takes at most 1000 keys per call.
    for (let i = 0; i < keys.length; i += 1000) {
      const r = await this.client.send(
        new DeleteObjectsCommand({
          Bucket: this.bucket,
          Delete: { Objects: keys.slice(i, i + 1000).map((Key) => ({ Key })), Quiet: true },
        }),
      );
      const failed = (r.Errors ?? []).filter((e) => !NOT_FOUND.has(e.Code ?? ''));
      if (failed.length > 0)
        throw new Error(
          `S3 did not delete ${failed.length} object(s), first ${failed[0]?.Key}: ${failed[0]?.Code} ${failed[0]?.Message}`,
        );
    }
  }
}
