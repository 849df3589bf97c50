import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnContainer, stopContainer } from './container-process';
import { messageFilePath, prepareTerminationFile } from './termination-files';

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

  it('gives the container /dev/termination-log backed by the node folder, leaves the host /dev alone and keeps /dev usable', async () => {
    const hostDir = join(dir, 'term-default');
    const termination = prepareTerminationFile(hostDir, '/dev/termination-log');
    const proc = spawnContainer({
      argv: [
        '/bin/sh',
        '-c',
        'echo ok > /dev/null && head -c 4 /dev/urandom | wc -c && ls /dev/pts/ptmx && printf done > /dev/termination-log',
      ],
      env: { PATH: '/bin:/usr/bin' },
      mounts: [],
      workingDir: dir,
      logPath: join(dir, 'term-default.log'),
      termination,
    });
    expect((await proc.exited).exitCode).toBe(0);
    expect(readFileSync(messageFilePath(hostDir), 'utf8')).toBe('done');
    expect(readFileSync(join(dir, 'term-default.log'), 'utf8')).toBe('4\n/dev/pts/ptmx\n');
    expect(existsSync('/dev/termination-log')).toBe(false);
  });

  it('creates the missing folders of a custom path only inside the container, also inside a volume', async () => {
    const hostDir = join(dir, 'term-custom');
    const vol = join(dir, 'msg-vol');
    mkdirSync(vol);
    const missing = `/run/etcd-conductor-test-${process.pid}`;
    const run = async (path: string, mounts: Parameters<typeof spawnContainer>[0]['mounts']) => {
      const proc = spawnContainer({
        argv: ['/bin/sh', '-c', `printf written > ${path}`],
        env: { PATH: '/bin:/usr/bin' },
        mounts,
        workingDir: dir,
        logPath: join(dir, 'term-custom.log'),
        termination: prepareTerminationFile(hostDir, path),
      });
      expect((await proc.exited).exitCode).toBe(0);
      return readFileSync(messageFilePath(hostDir), 'utf8');
    };
    expect(await run(`${missing}/deep/msg`, [])).toBe('written');
    expect(existsSync(missing)).toBe(false);
    // The first test's mount point: a volume's mount point is a folder on the host (see mount-script.ts).
    const inVolume = await run('/mnt/etcd-conductor-test/sub/msg', [
      { source: vol, target: '/mnt/etcd-conductor-test', readOnly: false, file: false },
    ]);
    expect(inVolume).toBe('written');
    expect(existsSync(join(vol, 'sub'))).toBe(false);
  });

  it('refuses a path that would need a new folder in / and says why in the log', async () => {
    const proc = spawnContainer({
      argv: ['/bin/true'],
      env: { PATH: '/bin:/usr/bin' },
      mounts: [],
      workingDir: dir,
      logPath: join(dir, 'term-root.log'),
      termination: prepareTerminationFile(join(dir, 'term-root'), '/etcd-conductor-nowhere/msg'),
    });
    expect((await proc.exited).exitCode).toBe(128);
    expect(readFileSync(join(dir, 'term-root.log'), 'utf8')).toContain(
      'terminationMessagePath /etcd-conductor-nowhere/msg needs its mount point created directly in /',
    );
    expect(existsSync('/etcd-conductor-nowhere')).toBe(false);
  });

  it('a volume over the node folder hides neither the termination file nor the image folders', async () => {
    // As an emptyDir at /tmp does when the stack lives under /tmp: both sit below the volume's target.
    const vol = join(dir, 'cover');
    mkdirSync(vol);
    const image = join(dir, 'image');
    mkdirSync(image);
    writeFileSync(join(image, 'hello.sh'), 'printf from-image > /dev/termination-log\n');
    const hostDir = join(dir, 'term-hidden');
    const proc = spawnContainer({
      argv: ['/bin/sh', join(image, 'hello.sh')],
      env: { PATH: '/bin:/usr/bin' },
      mounts: [{ source: vol, target: dir, readOnly: false, file: false }],
      workingDir: '/',
      logPath: join(dir, 'term-hidden.log'),
      termination: prepareTerminationFile(hostDir, '/dev/termination-log'),
      imageRoots: [image],
    });
    expect((await proc.exited).exitCode).toBe(0);
    expect(readFileSync(messageFilePath(hostDir), 'utf8')).toBe('from-image');
  });
});
