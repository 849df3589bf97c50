import { etcdImageRecipe, pauseImageRecipe, recipeKey, splitReference } from './images';

describe('etcdImageRecipe', () => {
  const recipe = etcdImageRecipe('3.6.16', '/t/etcd-3.6.16/bin');
  it('is tagged exactly as the operator references etcd by default', () => {
    expect(recipe.reference).toBe('quay.io/coreos/etcd:v3.6.16');
  });
  it('carries upstream layout: the three binaries in /usr/local/bin, etcd as the command, client and peer ports', () => {
    expect(recipe.files.filter((f) => f.from).map((f) => [f.path, f.from])).toEqual([
      ['/usr/local/bin/etcd', '/t/etcd-3.6.16/bin/etcd'],
      ['/usr/local/bin/etcdctl', '/t/etcd-3.6.16/bin/etcdctl'],
      ['/usr/local/bin/etcdutl', '/t/etcd-3.6.16/bin/etcdutl'],
    ]);
    expect(recipe.cmd).toEqual(['/usr/local/bin/etcd']);
    expect(recipe.exposedPorts).toEqual(['2379/tcp', '2380/tcp']);
  });
  it('has a shell and id for kubectl exec', () => {
    expect(recipe.busyboxApplets).toEqual(expect.arrayContaining(['sh', 'id']));
  });
});

describe('recipeKey', () => {
  const stat = (size: number) => () => ({ size, mtimeMs: 1 });
  it('changes when an input binary changes, so a rebuilt etcd gives a new image', () => {
    const r = pauseImageRecipe('/t/pause');
    expect(recipeKey(r, stat(1))).not.toBe(recipeKey(r, stat(2)));
    expect(recipeKey(r, stat(1))).toBe(recipeKey(r, stat(1)));
  });
});

describe('splitReference', () => {
  it('splits at the tag colon, not at a registry port', () => {
    expect(splitReference('localhost:5000/etcd:v3.6.16')).toEqual({
      repository: 'localhost:5000/etcd',
      tag: 'v3.6.16',
    });
    expect(() => splitReference('localhost:5000/etcd')).toThrow('without a tag');
  });
});
