import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnContainer, stopContainer } from './container-process';

const root = process.getuid?.() === 0;
const maybe = root ? describe : describe.skip;

maybe('spawnContainer (needs root for mount namespaces)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'container-process-'));

  it('runs the command with its env, sees a volume at its mount path and logs its output', async () => {
    const vol = join(dir, 'vol');
    mkdirSync(vol);
    writeFileSync(join(vol, 'f'), 'from-volume\n');
    const proc = spawnContainer({
      argv: ['/bin/sh', '-c', 'echo "$GREETING"; cat /mnt/etcd-conductor-test/f; echo oops >&2; exit 3'],
      env: { GREETING: 'hello', PATH: '/bin:/usr/bin' },
      mounts: [{ source: vol, target: '/mnt/etcd-conductor-test', readOnly: true, file: false }],
      workingDir: dir,
      logPath: join(dir, 'c.log'),
    });
    const exit = await proc.exited;
    expect(exit.exitCode).toBe(3);
    expect(readFileSync(join(dir, 'c.log'), 'utf8')).toBe('hello\nfrom-volume\noops\n');
  });

  it('refuses writes to a read-only mount', async () => {
    const vol = join(dir, 'ro');
    mkdirSync(vol);
    const proc = spawnContainer({
      argv: ['/bin/sh', '-c', 'touch /mnt/etcd-conductor-ro/x'],
      env: { PATH: '/bin:/usr/bin' },
      mounts: [{ source: vol, target: '/mnt/etcd-conductor-ro', readOnly: true, file: false }],
      workingDir: dir,
      logPath: join(dir, 'ro.log'),
    });
    expect((await proc.exited).exitCode).not.toBe(0);
  });

  it('kills a container that ignores SIGTERM once the grace period is over, children included', async () => {
    const proc = spawnContainer({
      argv: ['/bin/sh', '-c', "trap '' TERM; sleep 30 & wait"],
      env: { PATH: '/bin:/usr/bin' },
      mounts: [],
      workingDir: dir,
      logPath: join(dir, 'k.log'),
    });
    await new Promise((r) => setTimeout(r, 200));
    const exit = await stopContainer(proc, 300);
    expect(exit).toMatchObject({ exitCode: 137, signal: 9 });
    // Zombies do not count: this machine's PID 1 reaps orphans late, and a zombie runs nothing.
    const groupAlive = (): boolean => {
      try {
        return execFileSync('ps', ['-o', 'stat=', '-g', String(proc.pid)], { encoding: 'utf8' })
          .split('\n')
          .some((s) => s.trim() !== '' && !s.startsWith('Z'));
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 20 && groupAlive(); i++) await new Promise((r) => setTimeout(r, 50));
    expect(groupAlive()).toBe(false);
  });
});
