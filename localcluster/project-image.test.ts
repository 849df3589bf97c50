// The image built here is the one the Dockerfile describes: same reference as the chart's default, same user,
// entrypoint, environment, working directory, port, programs and etcd version; and its cache key follows content.
import { mkdtempSync, mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { repoRoot } from './stack-info';
import {
  archivesToPrune,
  IMAGE_ETCD_VERSION,
  PROGRAMS,
  PROJECT_IMAGE,
  PROJECT_IMAGE_CONFIG,
  debianBaseArgs,
  projectImageKey,
  projectImageRecipe,
} from './project-image';

const root = repoRoot();
const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
const instructions = dockerfile
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));
const runtime = instructions.slice(instructions.map((i) => i.startsWith('FROM ')).lastIndexOf(true));
const one = (keyword: string) => {
  const found = runtime.filter((i) => i.startsWith(`${keyword} `));
  expect(found).toHaveLength(1);
  return (found[0] ?? '').slice(keyword.length + 1).trim();
};

describe('the project image recipe against the Dockerfile', () => {
  it("is tagged with the chart's default image reference", () => {
    const values = parse(readFileSync(join(root, 'deploy/chart/values.yaml'), 'utf8')) as {
      image: { repository: string; tag: string };
    };
    const chart = parse(readFileSync(join(root, 'deploy/chart/Chart.yaml'), 'utf8')) as {
      appVersion: string;
    };
    expect(PROJECT_IMAGE).toBe(`${values.image.repository}:${values.image.tag || chart.appVersion}`);
  });

  it('runs as the same user, from the same entrypoint and working directory, exposing the same port', () => {
    expect(PROJECT_IMAGE_CONFIG.user).toBe(one('USER'));
    expect(PROJECT_IMAGE_CONFIG.entrypoint).toEqual(JSON.parse(one('ENTRYPOINT')));
    expect(PROJECT_IMAGE_CONFIG.workingDir).toBe(one('WORKDIR'));
    expect(PROJECT_IMAGE_CONFIG.exposedPorts).toEqual([`${one('EXPOSE')}/tcp`]);
  });

  it("sets the Dockerfile's environment", () => {
    const env = one('ENV').split(/\s+/);
    expect(env.length).toBeGreaterThan(0);
    expect(PROJECT_IMAGE_CONFIG.env).toEqual(expect.arrayContaining(env));
  });

  it('writes the same two programs', () => {
    const printed = [...dockerfile.matchAll(/printf '([^']*)' > (\/usr\/local\/bin\/[\w-]+)/g)].map(
      (m) => [m[2] ?? '', (m[1] ?? '').replace(/\\n/g, '\n')] as const,
    );
    expect(Object.fromEntries(printed)).toEqual(
      Object.fromEntries(
        Object.entries(PROGRAMS).map(([name, content]) => [`/usr/local/bin/${name}`, content]),
      ),
    );
  });

  it('carries etcd, etcdctl and etcdutl of the Dockerfile etcd version', () => {
    expect(instructions).toContain(`ARG ETCD_VERSION=${IMAGE_ETCD_VERSION}`);
    expect(instructions).toContain('COPY --from=etcd /etcd/etcd /etcd/etcdctl /etcd/etcdutl /usr/local/bin/');
  });

  it('holds dist, production node_modules and package.json in /app on a Debian bookworm minbase, Node in /usr/local/bin', () => {
    const recipe = projectImageRecipe({
      repoRoot: '/repo',
      nodeBinary: '/node',
      etcdBinDir: '/etcd',
      baseRootfs: '/base.tar',
      productionModules: '/deps/node_modules',
    });
    expect(recipe.trees).toEqual([
      { path: '/app/node_modules', from: '/deps/node_modules' },
      { path: '/app/dist', from: '/repo/dist' },
    ]);
    expect(recipe.files.map((f) => f.path).sort()).toEqual([
      '/app/package.json',
      '/usr/local/bin/etcd',
      '/usr/local/bin/etcd-conductor',
      '/usr/local/bin/etcd-conductor-operator',
      '/usr/local/bin/etcdctl',
      '/usr/local/bin/etcdutl',
      '/usr/local/bin/node',
    ]);
    expect(recipe.baseRootfs).toBe('/base.tar');
    expect(debianBaseArgs('/out.tar')).toEqual(
      expect.arrayContaining(['--variant=minbase', 'bookworm', '/out.tar']),
    );
  });
});

describe('projectImageKey', () => {
  const dir = mkdtempSync(join(tmpdir(), 'project-image-key-'));
  const file = (p: string, content: string) => {
    mkdirSync(join(dir, p, '..'), { recursive: true });
    writeFileSync(join(dir, p), content);
  };
  beforeAll(() => {
    file('package.json', '{}');
    file('package-lock.json', '{"lockfileVersion":3}');
    file('dist/worker/main.js', 'main');
    file('bin/node', 'node');
    file('etcd/etcd', 'etcd');
    file('etcd/etcdctl', 'etcdctl');
    file('etcd/etcdutl', 'etcdutl');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const key = () => projectImageKey(dir, join(dir, 'bin/node'), join(dir, 'etcd'), 'base');

  it('stays the same for the same contents, even when only mtimes of dist change', () => {
    const k = key();
    const t = new Date(Date.now() - 3600_000);
    utimesSync(join(dir, 'dist/worker/main.js'), t, t);
    expect(key()).toBe(k);
  });

  it.each([
    ['a dist file changes', () => file('dist/worker/main.js', 'main v2')],
    ['a dist file is added', () => file('dist/agent/main.js', 'agent')],
    ['the lock file changes', () => file('package-lock.json', '{"lockfileVersion":3,"x":1}')],
    ['package.json changes', () => file('package.json', '{"version":"2"}')],
  ])('changes when %s', (_what, change) => {
    const before = key();
    change();
    expect(key()).not.toBe(before);
  });

  it('changes with the Debian base', () => {
    expect(projectImageKey(dir, join(dir, 'bin/node'), join(dir, 'etcd'), 'other-base')).not.toBe(key());
  });
});

describe('archivesToPrune: the project image cache keeps the newest archives', () => {
  test.each([
    { case: 'fewer than kept: none', archives: [{ name: 'a', mtimeMs: 1 }], keep: 3, want: [] },
    {
      case: 'the oldest beyond the kept ones',
      archives: [
        { name: 'a', mtimeMs: 1 },
        { name: 'b', mtimeMs: 4 },
        { name: 'c', mtimeMs: 3 },
        { name: 'd', mtimeMs: 2 },
      ],
      keep: 2,
      want: ['d', 'a'],
    },
    { case: 'keep 0: all', archives: [{ name: 'a', mtimeMs: 1 }], keep: 0, want: ['a'] },
  ])('$case', ({ archives, keep, want }) => {
    expect(archivesToPrune(archives, keep)).toEqual(want);
  });
});
