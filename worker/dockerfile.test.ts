// The Dockerfile's invariants that can be checked without Docker (none on the build machines): node 24, a numeric
// non-root user, a runtime stage of dist and production node_modules only, and entry points that the build emits.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../localcluster/stack-info';
import { OPERATOR_NODE_FLAGS } from '../contracts/node-flags';

const root = repoRoot();
const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
// Continuation lines joined, comments dropped: one instruction per entry.
const instructions = dockerfile
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));
const stages: string[][] = [];
for (const i of instructions) {
  if (i.startsWith('FROM ')) stages.push([]);
  stages[stages.length - 1]?.push(i);
}
const runtime = stages[stages.length - 1] ?? [];
const args = Object.fromEntries(
  instructions
    .filter((i) => i.startsWith('ARG ') && i.includes('='))
    .map((i) => i.slice(4).split('=') as [string, string]),
);
const image = (from: string) =>
  from.split(/\s+/)[1]?.replace(/^\$\{(\w+)\}$/, (_m, a: string) => args[a] ?? '') ?? '';

describe('Dockerfile', () => {
  it('is multi-stage and builds and runs on Node 24', () => {
    expect(stages.length).toBeGreaterThan(1);
    expect(image(runtime[0] ?? '')).toMatch(/^node:24[.-]/);
    const build = stages.find((s) => s.some((i) => i.includes('npm run build')));
    expect(image(build?.[0] ?? '')).toMatch(/^node:24[.-]/);
    expect(build).toEqual(expect.arrayContaining(['RUN npm ci']));
  });

  it('runs as a numeric non-root user', () => {
    const users = runtime.filter((i) => i.startsWith('USER '));
    expect(users).toHaveLength(1);
    const [uid, gid] = (users[0] ?? '').slice(5).split(':');
    expect(uid).toMatch(/^\d+$/);
    expect(Number(uid)).toBeGreaterThan(0);
    if (gid !== undefined) expect(Number(gid)).toBeGreaterThan(0);
  });

  it('the runtime stage holds dist, production node_modules and package.json only', () => {
    const copies = runtime.filter((i) => i.startsWith('COPY '));
    const app = copies.filter((i) => !i.includes('/usr/local/bin'));
    expect(app.map((i) => i.split(/\s+/).slice(-1)[0]).sort()).toEqual(['./', 'dist', 'node_modules']);
    const depsStage = stages.find((s) => s[0]?.endsWith(' AS deps'));
    expect(depsStage?.some((i) => i.startsWith('RUN npm ci --omit=dev'))).toBe(true);
    expect(copies).toContain('COPY --from=deps /src/node_modules node_modules');
  });

  it('keeps writes off the root filesystem: HOME is /tmp, the one emptyDir the chart mounts', () => {
    expect(runtime.find((i) => i.startsWith('ENV '))).toContain('HOME=/tmp');
    const deployment = readFileSync(join(root, 'deploy/chart/templates/deployment.yaml'), 'utf8');
    expect(deployment).toContain('readOnlyRootFilesystem: true');
    expect(deployment).toContain('mountPath: /tmp');
  });

  it('copies every source folder the build compiles', () => {
    const tsconfig = JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8')) as {
      include: string[];
      compilerOptions: { outDir: string; rootDir: string };
    };
    expect(tsconfig.compilerOptions).toMatchObject({ outDir: 'dist', rootDir: '.' });
    const build = stages.find((s) => s.some((i) => i.includes('npm run build'))) ?? [];
    // tsconfig.build.json leaves test/ out.
    for (const dir of tsconfig.include.filter((d) => d !== 'test'))
      expect(build).toContain(`COPY ${dir} ${dir}`);
  });

  it('its programs run files the build emits from sources that exist', () => {
    const emitted = [...dockerfile.matchAll(/\/app\/(dist\/[\w/-]+)\.js/g)].map((m) => m[1] ?? '');
    expect(emitted.sort()).toEqual(['dist/agent/main', 'dist/worker/main']);
    for (const js of emitted) expect(existsSync(join(root, `${js.replace(/^dist\//, '')}.ts`))).toBe(true);
    expect(runtime).toContain('ENTRYPOINT ["etcd-conductor"]');
  });

  it('runs the operator with the node flags the local stack uses', () => {
    const line = /exec node ([^\n]*?)\/app\/dist\/worker\/main\.js/.exec(dockerfile)?.[1] ?? '';
    expect(line.trim().split(/\s+/)).toEqual([...OPERATOR_NODE_FLAGS]);
  });

  it('.dockerignore keeps local state, build output and dependencies out of the context', () => {
    const ignored = readFileSync(join(root, '.dockerignore'), 'utf8').split('\n');
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', '.local', '.git']));
  });
});
