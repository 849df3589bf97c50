import { orderMounts, renderMountScript, shellQuote } from './mount-script';
import type { BindMount } from './mount-script';

describe('renderMountScript', () => {
  it('binds a directory at its mount path and ends by exec-ing the command', () => {
    expect(
      renderMountScript(
        [{ source: '/s/data', target: '/var/lib/etcd', readOnly: false, file: false }],
        '/w',
      ).split('\n'),
    ).toEqual([
      'set -e',
      'container_path="$PATH"',
      'PATH=/usr/sbin:/usr/bin:/sbin:/bin',
      "mkdir -p '/var/lib/etcd'",
      "mount --bind '/s/data' '/var/lib/etcd'",
      "mkdir -p '/w'",
      "cd '/w'",
      'PATH="$container_path"',
      'exec "$@"',
    ]);
  });

  it('remounts a read-only volume read-only after binding it', () => {
    const lines = renderMountScript(
      [{ source: '/s/tok', target: '/var/run/secrets/x', readOnly: true, file: false }],
      '/',
    ).split('\n');
    expect(lines.indexOf("mount -o remount,bind,ro '/var/run/secrets/x'")).toBe(
      lines.indexOf("mount --bind '/s/tok' '/var/run/secrets/x'") + 1,
    );
  });

  it('creates an empty file as the target of a file mount', () => {
    const script = renderMountScript(
      [{ source: '/s/cm/app.conf', target: '/etc/app.conf', readOnly: true, file: true }],
      '/',
    );
    expect(script).toContain(`[ -e '/etc/app.conf' ] || : > '/etc/app.conf'`);
    expect(script).not.toContain("mkdir -p '/etc/app.conf'");
  });

  it('without a termination file, leaves the container its host view', () => {
    expect(renderMountScript([], '/')).not.toContain('overlay');
  });

  it('gives the termination file before the volume mounts (which could hide the node folder) and before the working directory, bound from the node folder', () => {
    const lines = renderMountScript(
      [{ source: '/s/data', target: '/var/lib/etcd', readOnly: false, file: false }],
      '/w',
      { path: '/dev/termination-log', hostDir: '/node/pods/p/termination/c' },
    ).split('\n');
    const at = (line: string) => {
      const i = lines.indexOf(line);
      expect(i).toBeGreaterThanOrEqual(0);
      return i;
    };
    const volume = at("mount --bind '/s/data' '/var/lib/etcd'");
    const overlay = at(
      'mount -t overlay overlay -o "lowerdir=$tm_anchor,upperdir=$tm_dir/upper,workdir=$tm_dir/work" "$tm_anchor"',
    );
    const bind = at('mount --bind "$tm_dir/message" "$tm_path"');
    expect(bind).toBeLessThan(volume);
    expect(at("tm_dir='/node/pods/p/termination/c'")).toBeLessThan(overlay);
    expect(at('mount --rbind "$tm_anchor" "$tm_dir/stage"')).toBeLessThan(overlay);
    expect(overlay).toBeLessThan(at('umount -R "$tm_dir/stage"'));
    expect(bind).toBeLessThan(at("cd '/w'"));
  });

  it('gives the termination file after the volume mounts when its path lies in a volume', () => {
    const lines = renderMountScript(
      [{ source: '/s/scratch', target: '/scratch', readOnly: false, file: false }],
      '/w',
      { path: '/scratch/log/term', hostDir: '/node/pods/p/termination/c' },
    ).split('\n');
    expect(lines.indexOf("mount --bind '/s/scratch' '/scratch'")).toBeLessThan(
      lines.indexOf("tm_path='/scratch/log/term'"),
    );
  });

  it('quotes paths holding single quotes', () => {
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
  });
});

describe('orderMounts', () => {
  const m = (source: string, target: string): BindMount => ({ source, target, readOnly: false, file: false });
  test.each<[string, BindMount[], string[]]>([
    ['keeps the given order when nothing overlaps', [m('/s/a', '/a'), m('/s/b', '/b')], ['/a', '/b']],
    [
      'a parent target goes before its child target',
      [m('/s/child', '/data/child'), m('/s/data', '/data')],
      ['/data', '/data/child'],
    ],
    [
      'a source under another target is bound before that target hides it (emptyDir at /tmp, stack under /tmp)',
      [m('/node/tmp-empty', '/tmp'), m('/tmp/ci/.local/nodes/a/token', '/run/secrets/sa')],
      ['/run/secrets/sa', '/tmp'],
    ],
    [
      'both rules together',
      [m('/node/empty', '/tmp'), m('/node/cache', '/tmp/cache'), m('/tmp/stack/vol', '/data')],
      ['/data', '/tmp', '/tmp/cache'],
    ],
    [
      'a contradiction keeps the given order (the script then fails at the hidden source)',
      [m('/node/empty', '/tmp'), m('/tmp/stack/vol', '/tmp/x')],
      ['/tmp', '/tmp/x'],
    ],
    ['a sibling with a common prefix is not a child', [m('/s/ab', '/ab'), m('/a/x', '/a')], ['/ab', '/a']],
  ])('%s', (_name, mounts, targets) => {
    expect(orderMounts(mounts).map((x) => x.target)).toEqual(targets);
  });
});

describe('renderMountScript keeps the image visible', () => {
  const emptyDirAtTmp: BindMount = { source: '/n/empty', target: '/tmp', readOnly: false, file: false };
  it('binds an image folder a volume hides back from a descriptor opened before the volumes, read-only', () => {
    const lines = renderMountScript([emptyDirAtTmp], '/w', undefined, [
      '/tmp/ci/repo',
      '/root/.cache/etcd',
    ]).split('\n');
    const open = lines.indexOf("exec 7< '/tmp/ci/repo'");
    const volume = lines.indexOf("mount --bind '/n/empty' '/tmp'");
    const bind = lines.indexOf("mount --no-canonicalize --bind /proc/self/fd/7 '/tmp/ci/repo'");
    expect(open).toBeGreaterThanOrEqual(0);
    expect(open).toBeLessThan(volume);
    expect(volume).toBeLessThan(bind);
    expect(lines[bind + 1]).toBe("mount -o remount,bind,ro '/tmp/ci/repo'");
    expect(lines[bind + 2]).toBe('exec 7<&-');
    // A folder no volume covers is left as it is.
    expect(lines.join('\n')).not.toContain('/root/.cache/etcd');
  });

  it('does nothing when no volume covers the image', () => {
    expect(renderMountScript([emptyDirAtTmp], '/w', undefined, ['/work/repo'])).not.toContain(
      '/proc/self/fd',
    );
  });
});
