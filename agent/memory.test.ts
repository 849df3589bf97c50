// CollectingStream is a pure pass-through: collecting garbage on the way never changes, drops or reorders bytes.
import { Readable } from 'node:stream';
import { CollectingStream } from './memory';

it('passes every byte through in order, across minor and major collection points', async () => {
  const chunks = Array.from({ length: 40 }, (_, i) => Buffer.alloc(1000 + i, i));
  const stream = new CollectingStream({ minorEveryBytes: 3000, majorEveryBytes: 10_000 });
  const out: Buffer[] = [];
  Readable.from(chunks).pipe(stream);
  for await (const chunk of stream) out.push(chunk as Buffer);
  expect(Buffer.concat(out).equals(Buffer.concat(chunks))).toBe(true);
});
