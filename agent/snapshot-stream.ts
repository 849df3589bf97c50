// Turns etcd's Maintenance.Snapshot messages into the snapshot file's bytes, measuring their size and sha256, and refuses a stream that is cut short or whose trailing sha256 does not match its data, so a damaged stream can never complete an upload.
import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { AgentError } from './agent-error';
import { AgentFailureReasons } from '../contracts/agent-result';

/** One message of the stream as the etcd3 client delivers it (uint64 as a decimal string). */
export interface SnapshotMessage {
  header?: { revision?: string } | null;
  remaining_bytes: string;
  blob: Buffer;
}

const SHA256_BYTES = 32;

/**
 * etcd sends the bolt database in chunks until `remaining_bytes` is 0, then one more message whose blob is
 * the sha256 of the database. The output keeps that trailer: `etcdutl snapshot restore` verifies it, just as
 * it does for files written by `etcdctl snapshot save`.
 */
export class SnapshotStream extends Transform {
  /** Over every byte emitted; forked (Hash.copy) at the end of the data to check the trailer, so each byte is hashed once. */
  private readonly hash: Hash = createHash('sha256');
  private bytes = 0;
  private hex: string | undefined;
  private phase: 'data' | 'trailer' | 'done' = 'data';
  private first = true;
  private revision: number | undefined;

  constructor() {
    super({ writableObjectMode: true, readableObjectMode: false });
  }

  /** Bytes emitted so far, trailer included. */
  get byteCount(): number {
    return this.bytes;
  }

  /** Lowercase hex sha256 of everything emitted, trailer included; only once the stream finished. */
  get sha256(): string {
    if (this.hex === undefined) throw new Error('sha256 asked for before the stream finished');
    return this.hex;
  }

  /** The first message's header revision, when the server sends one (etcd 3.5 and 3.6 do not). */
  get headerRevision(): number | undefined {
    return this.revision;
  }

  override _transform(
    message: SnapshotMessage,
    _encoding: BufferEncoding,
    callback: TransformCallback,
  ): void {
    if (this.first) {
      this.first = false;
      const rev = Number(message.header?.revision ?? 0);
      if (Number.isSafeInteger(rev) && rev > 0) this.revision = rev;
    }
    const blob = message.blob ?? Buffer.alloc(0);
    switch (this.phase) {
      case 'data':
        this.count(blob);
        if (message.remaining_bytes === '0') this.phase = 'trailer';
        callback(null, blob);
        return;
      case 'trailer': {
        const expected = this.hash.copy().digest();
        this.phase = 'done';
        if (blob.length !== SHA256_BYTES || !blob.equals(expected)) {
          callback(
            new AgentError(
              AgentFailureReasons.EtcdUnavailable,
              `etcd's snapshot stream is damaged: its trailing sha256 (${blob.length} bytes) does not match the data received`,
            ),
          );
          return;
        }
        this.count(blob);
        callback(null, blob);
        return;
      }
      case 'done':
        callback(
          new AgentError(
            AgentFailureReasons.EtcdUnavailable,
            `etcd's snapshot stream sent data after its sha256 trailer`,
          ),
        );
        return;
    }
  }

  private count(blob: Buffer): void {
    this.hash.update(blob);
    this.bytes += blob.length;
  }

  override _flush(callback: TransformCallback): void {
    if (this.phase !== 'done') {
      callback(
        new AgentError(
          AgentFailureReasons.EtcdUnavailable,
          `etcd's snapshot stream ended before its sha256 trailer (the snapshot is incomplete)`,
        ),
      );
      return;
    }
    this.hex = this.hash.digest('hex');
    callback();
  }
}
