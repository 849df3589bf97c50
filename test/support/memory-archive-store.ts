// An in-memory ArchiveStore for unit tests of the archiver and the point-in-time restore: the same answers as S3 for the
// calls they make, plus a switch that makes every write fail (a store that cannot be written).
import { readFile, writeFile } from 'node:fs/promises';
import type { ArchiveStore } from '../../agent/archive-store';

export class MemoryArchiveStore implements ArchiveStore {
  readonly where = 'memory://test';
  readonly objects = new Map<string, Buffer>();
  /** While set, put, putFile and delete reject with it. */
  failWrites: Error | undefined;
  puts = 0;

  private refuse(): void {
    if (this.failWrites) throw this.failWrites;
  }

  async put(key: string, body: Buffer): Promise<void> {
    await Promise.resolve();
    this.refuse();
    this.puts++;
    this.objects.set(key, Buffer.from(body));
  }

  async putFile(key: string, path: string): Promise<void> {
    const body = await readFile(path);
    this.refuse();
    this.puts++;
    this.objects.set(key, body);
  }

  async get(key: string): Promise<Buffer | undefined> {
    await Promise.resolve();
    const b = this.objects.get(key);
    return b ? Buffer.from(b) : undefined;
  }

  async download(key: string, path: string): Promise<boolean> {
    const b = this.objects.get(key);
    if (!b) return false;
    await writeFile(path, b, { mode: 0o600 });
    return true;
  }

  async list(prefix: string): Promise<string[]> {
    await Promise.resolve();
    return [...this.objects.keys()].filter((k) => k.startsWith(prefix)).sort();
  }

  async delete(keys: string[]): Promise<void> {
    await Promise.resolve();
    this.refuse();
    for (const k of keys) this.objects.delete(k);
  }
}
