// A pass-through that measures what flows through it (byte count and sha256), so the artifact's size and checksum describe exactly the bytes stored.
import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

export class DigestStream extends Transform {
  private readonly hash: Hash = createHash('sha256');
  private bytes = 0;
  private hex: string | undefined;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.hash.update(chunk);
    this.bytes += chunk.length;
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    this.hex = this.hash.digest('hex');
    callback();
  }

  get byteCount(): number {
    return this.bytes;
  }

  /** Lowercase hex; only once every byte went through (after the stream finished). */
  get sha256(): string {
    if (this.hex === undefined) throw new Error('sha256 asked for before the stream finished');
    return this.hex;
  }
}
