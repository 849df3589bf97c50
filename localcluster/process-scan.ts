// Finds every process that belongs to a stack (by environment marker, working directory or ancestry), so `down` can prove nothing is left behind.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { sep } from 'node:path';
import { STACK_ENV_MARKER } from './managed-process';

export interface ProcInfo {
  pid: number;
  ppid: number;
  cwd: string | undefined;
  /** Value of STACK_ENV_MARKER in the process environment, if any. */
  stackDir: string | undefined;
  command: string;
}

/** Pure: the processes of the stack in `stateDir`, descendants of `ownerPid` included, never the caller or its ancestors. */
export function selectStackProcesses(
  procs: ProcInfo[],
  stateDir: string,
  ownerPid: number | undefined,
  exclude: Set<number>,
): ProcInfo[] {
  const inside = (p: string | undefined) =>
    p !== undefined && (p === stateDir || p.startsWith(stateDir + sep));
  const byParent = new Map<number, ProcInfo[]>();
  for (const p of procs) byParent.set(p.ppid, [...(byParent.get(p.ppid) ?? []), p]);
  const picked = new Map<number, ProcInfo>();
  const addTree = (p: ProcInfo) => {
    if (picked.has(p.pid)) return;
    picked.set(p.pid, p);
    for (const child of byParent.get(p.pid) ?? []) addTree(child);
  };
  for (const p of procs) {
    if (p.pid === ownerPid || p.stackDir === stateDir || inside(p.cwd)) addTree(p);
  }
  return [...picked.values()].filter((p) => !exclude.has(p.pid)).sort((a, b) => a.pid - b.pid);
}

export function listProcesses(): ProcInfo[] {
  const out: ProcInfo[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // comm may contain spaces and parentheses: fields resume after the last ')'.
      const after = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ppid = Number(after[1]);
      if (after[0] === 'Z') continue; // zombies hold no resources; their parent reaps them
      let cwd: string | undefined;
      let stackDir: string | undefined;
      try {
        cwd = readlinkSync(`/proc/${pid}/cwd`);
      } catch {
        cwd = undefined;
      }
      try {
        const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
        stackDir = env.find((e) => e.startsWith(`${STACK_ENV_MARKER}=`))?.slice(STACK_ENV_MARKER.length + 1);
      } catch {
        stackDir = undefined;
      }
      const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
      out.push({ pid, ppid, cwd, stackDir, command });
    } catch {
      // the process ended while we looked
    }
  }
  return out;
}

/** Our own pid and every ancestor: `down` runs from inside npm, which may itself sit in the state folder. */
export function selfAndAncestors(procs: ProcInfo[]): Set<number> {
  const byPid = new Map(procs.map((p) => [p.pid, p]));
  const out = new Set<number>();
  let pid: number | undefined = process.pid;
  while (pid !== undefined && pid > 0 && !out.has(pid)) {
    out.add(pid);
    pid = byPid.get(pid)?.ppid;
  }
  return out;
}

export function findStackProcesses(stateDir: string, ownerPid: number | undefined): ProcInfo[] {
  const procs = listProcesses();
  return selectStackProcesses(procs, stateDir, ownerPid, selfAndAncestors(procs));
}

/** Listening TCP sockets on an address, from /proc/net/tcp (IPv4, little-endian hex). */
export function listeningPorts(ip: string): number[] {
  const hex = ip
    .split('.')
    .map((o) => Number(o).toString(16).padStart(2, '0').toUpperCase())
    .reverse()
    .join('');
  const lines = readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1);
  const ports: number[] = [];
  for (const line of lines) {
    const cols = line.trim().split(/\s+/);
    const [addr, port] = (cols[1] ?? '').split(':');
    if (cols[3] === '0A' && addr === hex && port) ports.push(parseInt(port, 16));
  }
  return ports.sort((a, b) => a - b);
}
