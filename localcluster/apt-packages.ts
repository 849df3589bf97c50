// Debian packages the real nodes and their tool builds need (umoci, libseccomp for runc, iptables...): installed with apt
// when missing, which needs root; anything else is an error that names the packages.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** What `up` and `images` need on the machine itself (the tools' build needs are on their ToolSpecs). */
export const REAL_NODE_DEB_PACKAGES = [
  'umoci',
  'busybox-static',
  'iptables',
  'iproute2',
  'util-linux',
  // The Debian base of the project's image (project-image.ts).
  'mmdebstrap',
];

async function isDebInstalled(pkg: string): Promise<boolean> {
  try {
    const { stdout } = await run('dpkg-query', ['-W', '-f=${db:Status-Status}', pkg]);
    return stdout.trim() === 'installed';
  } catch {
    return false;
  }
}

export async function missingDebPackages(pkgs: string[]): Promise<string[]> {
  const installed = await Promise.all(pkgs.map(isDebInstalled));
  return pkgs.filter((_, i) => !installed[i]);
}

/** Installs the missing ones with apt-get (after one `apt-get update` if the first try fails). */
export async function ensureDebPackages(pkgs: string[], log: (line: string) => void): Promise<void> {
  const missing = await missingDebPackages(pkgs);
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0)
    throw new Error(
      `Debian packages missing: ${missing.join(' ')}; install them as root: apt-get install ${missing.join(' ')}`,
    );
  log(`apt: installing ${missing.join(' ')}`);
  const install = () =>
    run('apt-get', ['install', '-y', '--no-install-recommends', ...missing], {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  try {
    await install();
  } catch {
    await run('apt-get', ['update']);
    await install().catch((e: unknown) => {
      throw new Error(
        `apt-get install ${missing.join(' ')} failed: ${e instanceof Error ? e.message : String(e)}`,
      );
    });
  }
}
