// Keeps the agent's memory flat while bytes stream through it: V8 frees a Buffer's memory only when a GC finds the Buffer dead, and by itself lets ~70 MB of dead 32 KiB snapshot chunks pile up; explicit collections at byte intervals keep them to a few MB.
import { Transform, type TransformCallback } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type Gc = (options?: { type?: 'minor' | 'major' }) => void;

let cached: Gc | null | undefined;

/**
 * V8's `gc`, exposed at run time because the image starts `node dist/agent/main.js` without flags.
 * Null if this V8 refuses: the agent then works the same, only with a larger footprint.
 */
function v8Gc(): Gc | null {
  if (cached !== undefined) return cached;
  try {
    setFlagsFromString('--expose-gc');
    const gc: unknown = runInNewContext('gc');
    cached = typeof gc === 'function' ? (gc as Gc) : null;
  } catch {
    cached = null;
  }
  return cached;
}

export interface CollectOptions {
  /**
   * A young-generation GC (well under a millisecond) this often: etcd's 32 KiB messages die young, and the
   * default young generation holds tens of MB of them before V8 collects on its own.
   */
  minorEveryBytes?: number;
  /**
   * A full GC this often, for what lived long enough to be promoted before dying (per-request objects of the
   * S3 client, for one); V8 would otherwise let the old generation grow for a while first.
   */
  majorEveryBytes?: number;
}

export const MINOR_GC_EVERY_BYTES = 1024 * 1024;

/** A pass-through that runs the GCs of `options` as bytes go through it. */
export class CollectingStream extends Transform {
  private sinceMinor = 0;
  private sinceMajor = 0;
  private readonly gc = v8Gc();
  private readonly minorEvery: number;
  private readonly majorEvery: number;

  constructor(options: CollectOptions = {}) {
    super();
    this.minorEvery = options.minorEveryBytes ?? MINOR_GC_EVERY_BYTES;
    this.majorEvery = options.majorEveryBytes ?? Infinity;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.sinceMinor += chunk.length;
    this.sinceMajor += chunk.length;
    if (this.sinceMajor >= this.majorEvery) {
      this.sinceMajor = 0;
      this.sinceMinor = 0;
      this.gc?.({ type: 'major' });
    } else if (this.sinceMinor >= this.minorEvery) {
      this.sinceMinor = 0;
      this.gc?.({ type: 'minor' });
    }
    callback(null, chunk);
  }
}
