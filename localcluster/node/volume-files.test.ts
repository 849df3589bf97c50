import { downwardApiFiles, keyedFiles, safeVolumePath, tokenNeedsRefresh } from './volume-files';

const data = { 'ca.crt': Buffer.from('CA'), token: Buffer.from('T') };

describe('keyedFiles', () => {
  it('turns every key into a file with the default mode when no items are given', () => {
    expect(
      keyedFiles('Secret', 's', data, undefined, 0o400, false).map((f) => [
        f.path,
        f.content.toString(),
        f.mode,
      ]),
    ).toEqual([
      ['ca.crt', 'CA', 0o400],
      ['token', 'T', 0o400],
    ]);
  });

  it('writes only the listed keys, at their paths and modes', () => {
    expect(
      keyedFiles('ConfigMap', 'c', data, [{ key: 'token', path: 'dir/tok', mode: 0o600 }], undefined, false),
    ).toEqual([{ path: 'dir/tok', content: Buffer.from('T'), mode: 0o600 }]);
  });

  it('fails on a listed key that does not exist', () => {
    expect(() => keyedFiles('Secret', 's', data, [{ key: 'nope', path: 'x' }], undefined, false)).toThrow(
      'secret s references non-existent config key: nope',
    );
  });

  it('skips a missing listed key of an optional source', () => {
    expect(keyedFiles('Secret', 's', data, [{ key: 'nope', path: 'x' }], undefined, true)).toEqual([]);
  });
});

describe('downwardApiFiles', () => {
  it('writes pod fields into files', () => {
    const pod = { metadata: { name: 'p', namespace: 'n', labels: { a: '1' } } };
    const files = downwardApiFiles(
      pod,
      [
        { path: 'name', fieldRef: { fieldPath: 'metadata.name' } },
        { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
      ],
      undefined,
      { podIp: 'x', hostIp: 'y' },
    );
    expect(files.map((f) => [f.path, f.content.toString()])).toEqual([
      ['name', 'p'],
      ['labels', 'a="1"'],
    ]);
  });
});

describe('safeVolumePath and tokenNeedsRefresh', () => {
  const paths: Array<[string, string, boolean]> = [
    ['a plain relative path is safe', 'a/b', true],
    ['an absolute path is refused', '/etc/passwd', false],
    ['a parent segment is refused', 'a/../../x', false],
  ];
  it.each(paths)('%s', (_n, p, ok) => expect(safeVolumePath(p)).toBe(ok));

  const hour = 3600_000;
  const tokens: Array<[string, number, number, boolean]> = [
    ['a token at half its lifetime is kept', 100, 50, false],
    ['a token just before 80% of its lifetime is kept', 100, 79, false],
    ['a token at 80% of its lifetime is refreshed', 100, 80, true],
    ['an expired token is refreshed', 100, 150, true],
    ['a year-long token is kept during its first day', 365 * 24 * hour, 23 * hour, false],
    ['a year-long token is refreshed once it is a day old', 365 * 24 * hour, 25 * hour, true],
  ];
  it.each(tokens)('%s', (_n, lifetime, now, refresh) =>
    expect(tokenNeedsRefresh(0, lifetime, now)).toBe(refresh),
  );
});
