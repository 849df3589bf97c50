// Renders the shell script that gives a container its own mount namespace view; every volume is bound at its mountPath, config volumes read-only.

export interface BindMount {
  /** Directory or file on this machine. */
  source: string;
  /** Absolute path the container sees. */
  target: string;
  readOnly: boolean;
  /** The source is a single file (subPath of a file), so the target must be a file too. */
  file: boolean;
}

/** Where a container's termination message goes: a per-container file of the node, seen by the container at `path`. */
export interface TerminationFile {
  /** terminationMessagePath, absolute, as the container sees it. */
  path: string;
  /**
   * Per-container folder on this machine holding `message` (the file the container writes through `path`)
   * and the overlay's `upper/`, `work/` and `stage/` folders; all four exist before the container starts.
   */
  hostDir: string;
}

export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Descriptors the script holds image folders open on (single digits: the only ones a POSIX sh redirects). */
const IMAGE_ROOT_FDS = [7, 8, 9];

/** Whether `path` is `dir` or lies below it. */
function within(path: string, dir: string): boolean {
  const d = dir.endsWith('/') ? dir : `${dir}/`;
  return path === dir || path.startsWith(d);
}

/**
 * Volumes in the order to bind them: a parent's target before its children's targets (so the children are
 * bound on top), and a mount whose source lies under another's target before that other one (so binding it
 * does not find its source hidden). Stable otherwise; when the two rules contradict each other the given
 * order is kept and the script fails at the hidden source with mount's own message.
 */
export function orderMounts(mounts: BindMount[]): BindMount[] {
  const n = mounts.length;
  const after: number[][] = mounts.map(() => []);
  const before = new Array<number>(n).fill(0);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const a = mounts[i];
      const b = mounts[j];
      if (i === j || !a || !b) continue;
      const parentFirst = a.target !== b.target && within(b.target, a.target);
      const hiddenSourceFirst = within(a.source, b.target);
      if (parentFirst || hiddenSourceFirst) {
        after[i]?.push(j);
        before[j] = (before[j] ?? 0) + 1;
      }
    }
  }
  const order: BindMount[] = [];
  const done = new Set<number>();
  while (order.length < n) {
    const next = mounts.findIndex((_m, i) => !done.has(i) && before[i] === 0);
    if (next < 0) return mounts;
    done.add(next);
    order.push(mounts[next] as BindMount);
    for (const j of after[next] ?? []) before[j] = (before[j] ?? 0) - 1;
  }
  return order;
}

/**
 * The script runs under `unshare -m --propagation private`, so its mounts are private to the container and
 * vanish with it; the tools it uses come from the system PATH, and it ends by exec-ing the container command passed as "$@", keeping the spawned pid.
 */
export function renderMountScript(
  mounts: BindMount[],
  workingDir: string,
  termination?: TerminationFile,
  imageRoots: string[] = [],
): string {
  const lines = ['set -e', 'container_path="$PATH"', 'PATH=/usr/sbin:/usr/bin:/sbin:/bin'];
  // Image folders a volume would hide are opened first and bound back from their descriptors after the
  // volumes (a path would no longer reach them): an emptyDir at /tmp must not hide a checkout under /tmp.
  const hiddenRoots = imageRoots
    .filter((root) => mounts.some((m) => within(root, m.target)))
    .slice(0, IMAGE_ROOT_FDS.length)
    .map((root, i) => ({ root, fd: IMAGE_ROOT_FDS[i] as number }));
  for (const { root, fd } of hiddenRoots) lines.push(`exec ${fd}< ${shellQuote(root)}`);
  // The node's own folders (volume sources, termination files) live on this machine's tree, which the
  // container shares: a volume mounted over one of their ancestors (an emptyDir at /tmp while the stack lives
  // under /tmp) would hide them. So the termination file is set up first unless its path lies in a volume,
  // and volumes are bound in an order where no mount hides a source still to be bound.
  const terminationFirst =
    termination !== undefined && !mounts.some((m) => within(termination.path, m.target));
  if (termination !== undefined && terminationFirst) lines.push(...terminationFileLines(termination));
  for (const m of orderMounts(mounts)) {
    const target = shellQuote(m.target);
    if (m.file) lines.push(`mkdir -p "$(dirname ${target})"`, `[ -e ${target} ] || : > ${target}`);
    else lines.push(`mkdir -p ${target}`);
    lines.push(`mount --bind ${shellQuote(m.source)} ${target}`);
    if (m.readOnly) lines.push(`mount -o remount,bind,ro ${target}`);
  }
  for (const { root, fd } of hiddenRoots) {
    const target = shellQuote(root);
    lines.push(
      `mkdir -p ${target}`,
      `mount --no-canonicalize --bind /proc/self/fd/${fd} ${target}`,
      `mount -o remount,bind,ro ${target}`,
      `exec ${fd}<&-`,
    );
  }
  if (termination !== undefined && !terminationFirst) lines.push(...terminationFileLines(termination));
  lines.push(
    `mkdir -p ${shellQuote(workingDir)}`,
    `cd ${shellQuote(workingDir)}`,
    'PATH="$container_path"',
    'exec "$@"',
  );
  return lines.join('\n');
}

/**
 * Gives the container a file at the termination path without touching the host's copy of its folder (for the default
 * `/dev/termination-log` that is the host's real /dev): the nearest existing folder on the way to the path (the
 * "anchor", as the container sees it after its volume mounts) is covered by an overlay whose upper layer is the
 * node's per-container folder, so the mount point and any missing parents are created there only. The overlay hides
 * the anchor's submounts (/dev/pts, /dev/shm, ...), so they are bound again from a recursive copy taken first. The
 * node's `message` file is then bound at the path. Paths whose anchor is `/` are refused: an overlay on the root would
 * contain the node's own folders.
 */
function terminationFileLines(t: TerminationFile): string[] {
  const fail = (why: string) =>
    `echo "etcd-conductor node: terminationMessagePath $tm_path ${why}" >&2; exit 128`;
  return [
    `tm_path=${shellQuote(t.path)}`,
    `tm_dir=${shellQuote(t.hostDir)}`,
    'tm_anchor=$(dirname "$tm_path")',
    'while [ ! -d "$tm_anchor" ]; do tm_anchor=$(dirname "$tm_anchor"); done',
    'case "$tm_anchor" in',
    `  /) ${fail('needs its mount point created directly in /, which this node cannot do without changing the host')};;`,
    `  *[,:]*) ${fail('lies under a folder whose name holds , or : (overlay options cannot carry it)')};;`,
    'esac',
    `[ -d "$tm_dir/stage" ] || { ${fail("cannot be set up: a volume is mounted over the node's folder $tm_dir")}; }`,
    'case "$tm_dir" in',
    `  "$tm_anchor"/*) ${fail("lies under a folder that holds the node's own state")};;`,
    'esac',
    'mount --rbind "$tm_anchor" "$tm_dir/stage"',
    'mount -t overlay overlay -o "lowerdir=$tm_anchor,upperdir=$tm_dir/upper,workdir=$tm_dir/work" "$tm_anchor"',
    'tm_bound=',
    'findmnt -rn -o TARGET | while read -r tm_sub; do',
    '  case "$tm_sub" in "$tm_dir/stage"/*) ;; *) continue;; esac',
    '  if [ -n "$tm_bound" ]; then case "$tm_sub" in "$tm_bound" | "$tm_bound"/*) continue;; esac; fi',
    '  tm_bound=$tm_sub',
    '  mount --rbind "$tm_sub" "$tm_anchor${tm_sub#"$tm_dir/stage"}"',
    'done',
    'umount -R "$tm_dir/stage"',
    'mkdir -p "$(dirname "$tm_path")"',
    ': > "$tm_path"',
    'mount --bind "$tm_dir/message" "$tm_path"',
  ];
}
