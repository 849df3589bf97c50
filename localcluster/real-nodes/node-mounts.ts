// Mounts the real nodes leave under the stack folder (containers' overlay root filesystems, sandbox /dev/shm, Pod network
// namespaces, kubelet volumes): found in /proc/self/mountinfo and lazily unmounted deepest first on teardown.
import { readFileSync } from 'node:fs';
import { sep } from 'node:path';
import { shQuiet } from './host-commands';

/** Pure: mount points at or under `dir`, deepest first; mountinfo escapes spaces and the like as octal. */
export function mountsUnder(mountinfo: string, dir: string): string[] {
  const unescape = (s: string) =>
    s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
  const points = mountinfo
    .split('\n')
    .map((l) => l.split(' ')[4])
    .filter((p): p is string => p !== undefined)
    .map(unescape)
    .filter((p) => p === dir || p.startsWith(dir + sep));
  return [...new Set(points)].sort((a, b) => b.split(sep).length - a.split(sep).length || b.localeCompare(a));
}

export function currentMountsUnder(dir: string): string[] {
  return mountsUnder(readFileSync('/proc/self/mountinfo', 'utf8'), dir);
}

export async function unmountAllUnder(dir: string): Promise<string[]> {
  for (let round = 0; round < 5; round++) {
    const points = currentMountsUnder(dir);
    if (points.length === 0) return [];
    for (const p of points) await shQuiet('umount', ['-l', p]);
  }
  return currentMountsUnder(dir);
}
