import DurationSequencer from './duration-sequencer';

// Tests as Jest hands them to a sequencer; `cache: false` keeps Jest's timing cache on disk out of it.
const context = {
  config: { rootDir: '/repo', cache: false },
  hasteFS: {
    getSize: (path: string) => ({ '/repo/test/a.test.ts': 10, '/repo/test/b.test.ts': 20 })[path] ?? 5,
  },
};
const testAt = (name: string) => ({
  path: `/repo/${name}`,
  context,
  duration: undefined as number | undefined,
});
const order = (sequencer: DurationSequencer, names: string[]) =>
  (sequencer.sort(names.map(testAt) as never) as unknown as { path: string }[]).map((t) =>
    t.path.slice('/repo/'.length),
  );

describe('DurationSequencer', () => {
  it('runs the longest recorded file first, whatever the file sizes say', () => {
    const sequencer = new DurationSequencer({} as never);
    sequencer.recorded = { 'test/a.test.ts': 200, 'test/b.test.ts': 30, 'test/c.test.ts': 90 };
    expect(order(sequencer, ['test/b.test.ts', 'test/c.test.ts', 'test/a.test.ts'])).toEqual([
      'test/a.test.ts',
      'test/c.test.ts',
      'test/b.test.ts',
    ]);
  });

  it('runs a file the figures do not name (the log names only files past 5 s) after those it names', () => {
    const sequencer = new DurationSequencer({} as never);
    sequencer.recorded = { 'test/a.test.ts': 30 };
    expect(order(sequencer, ['test/b.test.ts', 'test/a.test.ts'])).toEqual([
      'test/a.test.ts',
      'test/b.test.ts',
    ]);
  });

  it('lets a duration Jest measured on this checkout win over the recorded one', () => {
    const sequencer = new DurationSequencer({} as never);
    sequencer.recorded = { 'test/a.test.ts': 200, 'test/b.test.ts': 30 };
    const cache = (sequencer as unknown as { _cache: Map<unknown, Record<string, [number, number]>> })._cache;
    cache.set(context, { '/repo/test/b.test.ts': [1, 500_000] });
    expect(order(sequencer, ['test/a.test.ts', 'test/b.test.ts'])).toEqual([
      'test/b.test.ts',
      'test/a.test.ts',
    ]);
  });

  it('falls back to file size, largest first, when no file has a figure', () => {
    const sequencer = new DurationSequencer({} as never);
    sequencer.recorded = {};
    expect(order(sequencer, ['test/a.test.ts', 'test/b.test.ts'])).toEqual([
      'test/b.test.ts',
      'test/a.test.ts',
    ]);
  });
});
