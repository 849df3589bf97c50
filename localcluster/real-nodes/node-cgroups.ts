// Each real node's cgroupRoot, created in every mounted cgroup hierarchy before its kubelet starts (cgroup v1 needs the
// parent in each controller; cpuset children start empty, so they get the parent's CPUs and memory nodes), and on
// teardown emptied (every process in it killed) and removed depth-first.
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';

export interface CgroupMount {
  path: string;
  /** 'cgroup' (v1) or 'cgroup2'. */
  type: string;
  controllers: string[];
}

/** Pure: the cgroup mounts in /proc/self/mountinfo text. */
export function parseCgroupMounts(mountinfo: string): CgroupMount[] {
  const out: CgroupMount[] = [];
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    if (!left || !right) continue;
    const [type, , superOptions = ''] = right.split(' ');
    if (type !== 'cgroup' && type !== 'cgroup2') continue;
    const mountPoint = left.split(' ')[4];
    if (!mountPoint) continue;
    const controllers =
      type === 'cgroup2'
        ? []
        : superOptions
            .split(',')
            .filter((o) => !['rw', 'ro', 'relatime', 'noatime', 'nosuid', 'nodev', 'noexec'].includes(o));
    out.push({ path: mountPoint, type, controllers });
  }
  return out;
}

export function cgroupMounts(): CgroupMount[] {
  return parseCgroupMounts(readFileSync('/proc/self/mountinfo', 'utf8'));
}

export function createCgroupRoot(root: string): void {
  for (const m of cgroupMounts()) {
    const dir = join(m.path, root);
    mkdirSync(dir, { recursive: true });
    if (m.controllers.includes('cpuset')) {
      for (const f of ['cpuset.cpus', 'cpuset.mems']) {
        const parent = join(dir, '..', f);
        if (existsSync(parent)) copyFileSync(parent, join(dir, f));
      }
    }
  }
}

function subdirsDeepestFirst(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    let entries: string[];
    try {
      entries = readdirSync(d);
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(d, e);
      try {
        if (statSync(p).isDirectory()) walk(p);
      } catch {
        // raced with a removal
      }
    }
    out.push(d);
  };
  walk(dir);
  return out;
}

function pidsIn(dir: string): number[] {
  const pids: number[] = [];
  for (const d of subdirsDeepestFirst(dir)) {
    try {
      for (const l of readFileSync(join(d, 'cgroup.procs'), 'utf8').split('\n'))
        if (l.trim()) pids.push(Number(l));
    } catch {
      // gone
    }
  }
  return pids;
}

/** Kills every process under the root (containers, pause processes), thawing frozen ones first, then removes the dirs. */
export async function removeCgroupRoot(root: string): Promise<string[]> {
  const mounts = cgroupMounts();
  for (const m of mounts.filter((x) => x.controllers.includes('freezer'))) {
    for (const d of subdirsDeepestFirst(join(m.path, root))) {
      try {
        writeFileSync(join(d, 'freezer.state'), 'THAWED');
      } catch {
        // not frozen, or gone
      }
    }
  }
  for (let round = 0; round < 50; round++) {
    const pids = new Set(mounts.flatMap((m) => pidsIn(join(m.path, root))));
    if (pids.size === 0) break;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const left: string[] = [];
  for (const m of mounts) {
    const top = join(m.path, root);
    if (!existsSync(top)) continue;
    for (const d of subdirsDeepestFirst(top)) {
      try {
        rmdirSync(d);
      } catch {
        if (existsSync(d)) left.push(d);
      }
    }
  }
  return left;
}

export function leftoverCgroups(root: string): string[] {
  return cgroupMounts()
    .map((m) => join(m.path, root))
    .filter((d) => existsSync(d));
}
