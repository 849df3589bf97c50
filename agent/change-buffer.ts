// The changes the archiver has from its watch and not yet in the store: whole revisions, in order, with their size,
// cut into chunks that never split a revision.
import type { IKeyValue } from 'etcd3';
import type { ArchivedChange } from '../contracts/continuous-backup';

export function changeOf(type: 'put' | 'delete', kv: IKeyValue, receivedAt: string): ArchivedChange {
  return {
    type,
    key: kv.key.toString('base64'),
    ...(type === 'put' ? { value: kv.value.toString('base64') } : {}),
    revision: Number(kv.mod_revision),
    createRevision: Number(kv.create_revision),
    version: Number(kv.version),
    lease: kv.lease === undefined || kv.lease === '' ? '0' : String(kv.lease),
    receivedAt,
  };
}

/** About what a change costs in a chunk: its base64 key and value plus the fields around them. */
export const sizeOf = (c: ArchivedChange) => c.key.length + (c.value?.length ?? 0) + 160;

export class ChangeBuffer {
  private items: ArchivedChange[] = [];
  private size = 0;

  get bytes(): number {
    return this.size;
  }
  get length(): number {
    return this.items.length;
  }
  get oldest(): ArchivedChange | undefined {
    return this.items[0];
  }
  get newest(): ArchivedChange | undefined {
    return this.items[this.items.length - 1];
  }
  all(): readonly ArchivedChange[] {
    return this.items;
  }

  push(change: ArchivedChange): void {
    this.items.push(change);
    this.size += sizeOf(change);
  }

  /** The head up to chunkBytes (at least one change), never splitting a revision; the buffer is unchanged. */
  head(chunkBytes: number): ArchivedChange[] {
    let bytes = 0;
    let end = 0;
    while (end < this.items.length) {
      const c = this.items[end]!;
      const sameRevision = end > 0 && this.items[end - 1]!.revision === c.revision;
      if (!sameRevision && end > 0 && bytes + sizeOf(c) > chunkBytes) break;
      bytes += sizeOf(c);
      end++;
    }
    return this.items.slice(0, end);
  }

  /** Drops the first n changes (a head that reached the store). */
  shift(n: number): void {
    const gone = this.items.splice(0, n);
    this.size -= gone.reduce((b, c) => b + sizeOf(c), 0);
  }

  replace(changes: ArchivedChange[]): void {
    this.items = changes;
    this.size = changes.reduce((b, c) => b + sizeOf(c), 0);
  }

  clear(): void {
    this.replace([]);
  }
}
