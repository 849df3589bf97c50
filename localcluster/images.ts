// Container images built on this machine without a registry: etcd 3.5/3.6 from the etcd binaries the tool installer
// built, and the pause (sandbox) image, each assembled with umoci into an OCI layout tarball that is cached outside the
// repository by a key of its inputs, then imported into every real node's containerd under the reference the operator uses.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DEFAULT_ETCD_REPOSITORY } from '../activities/etcd-images';
import { COREDNS_VERSION, ETCD_VERSIONS } from './versions';
import type { ToolPaths } from './tool-cache';

const run = promisify(execFile);

/** The sandbox image every node's containerd is configured with (`pinned_images.sandbox`). */
export const PAUSE_IMAGE = 'etcd-conductor.local/pause:1';
/** Debian's statically linked busybox: gives the etcd images a shell and `id` for `kubectl exec` (upstream's are distroless). */
const BUSYBOX = '/bin/busybox';
/** Bump when the recipe below changes, so cached tarballs are rebuilt. */
const RECIPE_VERSION = '1';

export interface ImageFile {
  /** Path inside the image. */
  path: string;
  /** File on this machine to copy in, or literal content. */
  from?: string;
  content?: string;
  mode: number;
}

export interface ImageRecipe {
  /** Full reference, `repository:tag`, as Pods name it. */
  reference: string;
  files: ImageFile[];
  dirs: Array<{ path: string; mode: number }>;
  /** Busybox applets linked into /bin (empty: no busybox). */
  busyboxApplets: string[];
  cmd: string[];
  entrypoint?: string[];
  workingDir?: string;
  env: string[];
  exposedPorts: string[];
  /** A root filesystem tarball unpacked first (e.g. a Debian base made by mmdebstrap); absent: an empty image. */
  baseRootfs?: string;
  /** Directories copied in whole (`cp -a`), after the base and before the files. */
  trees?: Array<{ path: string; from: string }>;
  /** `uid:gid` the image runs as; absent: root, as the etcd images. */
  user?: string;
}

export interface BuiltImage {
  reference: string;
  repository: string;
  tag: string;
  archive: string;
}

export function splitReference(reference: string): { repository: string; tag: string } {
  const colon = reference.lastIndexOf(':');
  if (colon <= reference.lastIndexOf('/')) throw new Error(`image reference without a tag: ${reference}`);
  return { repository: reference.slice(0, colon), tag: reference.slice(colon + 1) };
}

const PASSWD = 'root:x:0:0:root:/root:/bin/sh\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n';
const GROUP = 'root:x:0:\nnonroot:x:65532:\n';
const SHELL_APPLETS = [
  'sh',
  'id',
  'ls',
  'cat',
  'echo',
  'touch',
  'mkdir',
  'rm',
  'sleep',
  'ps',
  'env',
  'df',
  'nslookup',
  'wget',
];

/** Upstream's layout (binaries in /usr/local/bin, WORKDIR /var/lib/etcd, ports 2379/2380) plus busybox for exec. */
export function etcdImageRecipe(version: string, binDir: string): ImageRecipe {
  return {
    reference: `${DEFAULT_ETCD_REPOSITORY}:v${version}`,
    files: [
      ...['etcd', 'etcdctl', 'etcdutl'].map((b) => ({
        path: `/usr/local/bin/${b}`,
        from: join(binDir, b),
        mode: 0o755,
      })),
      { path: '/etc/passwd', content: PASSWD, mode: 0o644 },
      { path: '/etc/group', content: GROUP, mode: 0o644 },
    ],
    dirs: [
      { path: '/tmp', mode: 0o1777 },
      { path: '/var/lib/etcd', mode: 0o755 },
      { path: '/home/nonroot', mode: 0o755 },
    ],
    busyboxApplets: SHELL_APPLETS,
    cmd: ['/usr/local/bin/etcd'],
    workingDir: '/var/lib/etcd',
    env: ['PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin'],
    exposedPorts: ['2379/tcp', '2380/tcp'],
  };
}

export function pauseImageRecipe(pauseBinary: string): ImageRecipe {
  return {
    reference: PAUSE_IMAGE,
    files: [{ path: '/pause', from: pauseBinary, mode: 0o755 }],
    dirs: [],
    busyboxApplets: [],
    cmd: ['/pause'],
    env: [],
    exposedPorts: [],
  };
}

/** Cluster DNS for the real nodes (see real-nodes/cluster-dns.ts). */
export const COREDNS_IMAGE = `etcd-conductor.local/coredns:${COREDNS_VERSION}`;

export function corednsImageRecipe(corednsBinary: string): ImageRecipe {
  return {
    reference: COREDNS_IMAGE,
    files: [
      { path: '/coredns', from: corednsBinary, mode: 0o755 },
      { path: '/etc/passwd', content: PASSWD, mode: 0o644 },
      { path: '/etc/group', content: GROUP, mode: 0o644 },
    ],
    dirs: [{ path: '/tmp', mode: 0o1777 }],
    busyboxApplets: [],
    // As upstream's image: Pods pass only arguments (`-conf ...`).
    entrypoint: ['/coredns'],
    cmd: [],
    env: [],
    exposedPorts: ['1053/udp', '1053/tcp'],
  };
}

export function imageRecipes(tools: ToolPaths): ImageRecipe[] {
  return [
    pauseImageRecipe(tools.pause),
    corednsImageRecipe(tools.coredns),
    ...ETCD_VERSIONS.map((v) => etcdImageRecipe(v, tools.etcdBinDirs[v])),
  ];
}

/** Changes whenever an input file or the recipe changes: size and mtime of every copied file, plus the recipe itself. */
export function recipeKey(
  recipe: ImageRecipe,
  stat: (path: string) => { size: number; mtimeMs: number },
): string {
  const h = createHash('sha256');
  h.update(RECIPE_VERSION);
  h.update(JSON.stringify(recipe));
  for (const f of recipe.files) {
    if (f.from) {
      const s = stat(f.from);
      h.update(`${f.from}:${s.size}:${Math.floor(s.mtimeMs)}`);
    }
  }
  if (recipe.busyboxApplets.length > 0) {
    const s = stat(BUSYBOX);
    h.update(`${BUSYBOX}:${s.size}:${Math.floor(s.mtimeMs)}`);
  }
  return h.digest('hex').slice(0, 16);
}

const imagesDir = (cacheRoot: string) => join(cacheRoot, 'images');

/** Builds every image whose tarball is not cached yet; returns them all. A warm run only stats files. */
export async function ensureImages(
  cacheRoot: string,
  tools: ToolPaths,
  log: (line: string) => void,
): Promise<BuiltImage[]> {
  const out: BuiltImage[] = [];
  for (const recipe of imageRecipes(tools)) {
    const { repository, tag } = splitReference(recipe.reference);
    const key = recipeKey(recipe, (p) => statSync(p));
    const archive = join(imagesDir(cacheRoot), `${repository.replace(/[/:]/g, '_')}_${tag}-${key}.tar`);
    if (!existsSync(archive)) {
      const t0 = Date.now();
      await buildImage(recipe, archive);
      log(`images: built ${recipe.reference} in ${((Date.now() - t0) / 1000).toFixed(1)}s (${archive})`);
    } else log(`images: ${recipe.reference} ready (${archive})`);
    out.push({ reference: recipe.reference, repository, tag, archive });
  }
  return out;
}

async function umoci(args: string[]): Promise<void> {
  await run('umoci', args).catch((e: unknown) => {
    throw new Error(`umoci ${args.join(' ')} failed: ${e instanceof Error ? e.message : String(e)}`);
  });
}

export async function buildImage(recipe: ImageRecipe, archive: string): Promise<void> {
  const { tag } = splitReference(recipe.reference);
  const work = `${archive}.work`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const layout = join(work, 'layout');
  const bundle = join(work, 'bundle');
  const image = `${layout}:${tag}`;
  try {
    await umoci(['init', '--layout', layout]);
    await umoci(['new', '--image', image]);
    await umoci(['unpack', '--image', image, bundle]);
    const rootfs = join(bundle, 'rootfs');
    const inRoot = (p: string) => join(rootfs, p);
    if (recipe.baseRootfs) await run('tar', ['-xpf', recipe.baseRootfs, '--numeric-owner', '-C', rootfs]);
    for (const t of recipe.trees ?? []) {
      mkdirSync(join(inRoot(t.path), '..'), { recursive: true });
      await run('cp', ['-a', t.from, inRoot(t.path)]);
    }
    for (const d of recipe.dirs) {
      mkdirSync(inRoot(d.path), { recursive: true });
      chmodSync(inRoot(d.path), d.mode);
    }
    for (const f of recipe.files) {
      mkdirSync(join(inRoot(f.path), '..'), { recursive: true });
      if (f.from) copyFileSync(f.from, inRoot(f.path));
      else writeFileSync(inRoot(f.path), f.content ?? '');
      chmodSync(inRoot(f.path), f.mode);
    }
    if (recipe.busyboxApplets.length > 0) {
      mkdirSync(inRoot('/bin'), { recursive: true });
      copyFileSync(BUSYBOX, inRoot('/bin/busybox'));
      chmodSync(inRoot('/bin/busybox'), 0o755);
      for (const a of recipe.busyboxApplets) symlinkSync('busybox', inRoot(`/bin/${a}`));
    }
    await umoci(['repack', '--image', image, bundle]);
    await umoci([
      'config',
      '--image',
      image,
      ...recipe.cmd.flatMap((c) => ['--config.cmd', c]),
      ...(recipe.entrypoint ?? []).flatMap((c) => ['--config.entrypoint', c]),
      ...(recipe.workingDir ? ['--config.workingdir', recipe.workingDir] : []),
      ...recipe.env.flatMap((e) => ['--config.env', e]),
      ...recipe.exposedPorts.flatMap((p) => ['--config.exposedports', p]),
      ...(recipe.user ? ['--config.user', recipe.user] : []),
    ]);
    await run('tar', ['-C', layout, '-cf', `${archive}.tmp`, '.']);
    renameSync(`${archive}.tmp`, archive);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Imports the images into one node's containerd (its own content store); the tag comes from the layout's ref name. */
export async function importImages(ctr: string, socket: string, images: BuiltImage[]): Promise<void> {
  for (const img of images) {
    await run(ctr, [
      '--address',
      socket,
      '-n',
      'k8s.io',
      'images',
      'import',
      '--base-name',
      img.repository,
      img.archive,
    ]).catch((e: unknown) => {
      throw new Error(
        `importing ${img.reference} into ${socket} failed: ${e instanceof Error ? e.message : String(e)}`,
      );
    });
  }
}
