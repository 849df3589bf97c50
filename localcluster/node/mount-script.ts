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

export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The script runs under `unshare -m --propagation private`, so its mounts are private to the container and
 * vanish with it; the tools it uses come from the system PATH, and it ends by exec-ing the container command passed as "$@", keeping the spawned pid.
 */
export function renderMountScript(mounts: BindMount[], workingDir: string): string {
  const lines = ['set -e', 'container_path="$PATH"', 'PATH=/usr/sbin:/usr/bin:/sbin:/bin'];
  for (const m of mounts) {
    const target = shellQuote(m.target);
    if (m.file) lines.push(`mkdir -p "$(dirname ${target})"`, `[ -e ${target} ] || : > ${target}`);
    else lines.push(`mkdir -p ${target}`);
    lines.push(`mount --bind ${shellQuote(m.source)} ${target}`);
    if (m.readOnly) lines.push(`mount -o remount,bind,ro ${target}`);
  }
  lines.push(
    `mkdir -p ${shellQuote(workingDir)}`,
    `cd ${shellQuote(workingDir)}`,
    'PATH="$container_path"',
    'exec "$@"',
  );
  return lines.join('\n');
}
