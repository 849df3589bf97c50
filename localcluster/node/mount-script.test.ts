import { renderMountScript, shellQuote } from './mount-script';

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

  it('quotes paths holding single quotes', () => {
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
  });
});
