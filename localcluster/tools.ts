// The tool installer: builds each pinned tool from the Go module proxy once into the shared cache; never rebuilds a tool whose marker and binaries exist.
import { spawn } from 'node:child_process';
import {
  accessSync,
  chmodSync,
  constants,
  copyFileSync,
  createWriteStream,
  mkdirSync,
  readdirSync,
  readFileSync,
  unlinkSync,
  writeFileSync,
  openSync,
  closeSync,
} from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { ensureDebPackages } from './apt-packages';
import { buildSteps, stagingModules, type BuildStep } from './build-steps';
import { ALL_TOOLS, cacheRoot, isInstalled, toolDirs, toolId, type ToolSpec } from './tool-cache';

export class ToolBuildError extends Error {
  constructor(
    readonly tool: string,
    readonly step: string,
    readonly registry: string,
    readonly outputTail: string,
    readonly logFile: string,
  ) {
    super(
      `Building ${tool} failed at step "${step}". Modules come from ${registry}; check that it is reachable ` +
        `(GOPROXY) and that Go is recent enough. Full log: ${logFile}\n--- last lines of go's output ---\n${outputTail}`,
    );
    this.name = 'ToolBuildError';
  }
}

/** Go from PATH, else the standard /usr/local/go install. */
export function findGo(env: NodeJS.ProcessEnv = process.env): string {
  const candidates = [
    ...(env.GO ? [env.GO] : []),
    ...(env.PATH ?? '')
      .split(delimiter)
      .filter(Boolean)
      .map((d) => join(d, 'go')),
    '/usr/local/go/bin/go',
  ];
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      // try the next one
    }
  }
  throw new Error(
    'Go is not installed: the local stack builds Kubernetes, etcd, Temporal and MinIO from source. Install Go 1.24+ and put it on PATH.',
  );
}

export interface EnsureToolsOptions {
  root?: string;
  tools?: ToolSpec[];
  log?: (line: string) => void;
}

/** Makes every tool available; returns the cache root. A warm run only stats files. */
export async function ensureTools(opts: EnsureToolsOptions = {}): Promise<string> {
  const root = opts.root ?? cacheRoot();
  const log = opts.log ?? ((l: string) => console.log(l));
  for (const spec of opts.tools ?? ALL_TOOLS) {
    if (isInstalled(root, spec)) {
      log(`tools: ${spec.name} ${spec.version} ready (${toolDirs(root, spec).binDir})`);
      continue;
    }
    await withLock(toolDirs(root, spec).lockFile, log, async () => {
      if (isInstalled(root, spec)) return; // another installer finished it while we waited
      const started = Date.now();
      log(
        `tools: ${spec.name} ${spec.version} building from the Go module proxy (first run only; Kubernetes takes tens of minutes)...`,
      );
      await buildTool(root, spec, log);
      log(`tools: ${spec.name} ${spec.version} built in ${Math.round((Date.now() - started) / 1000)}s`);
    });
  }
  return root;
}

async function buildTool(root: string, spec: ToolSpec, log: (line: string) => void): Promise<void> {
  const dirs = toolDirs(root, spec);
  mkdirSync(dirs.buildDir, { recursive: true });
  mkdirSync(dirs.binDir, { recursive: true });
  if (spec.debPackages) await ensureDebPackages(spec.debPackages, log);
  const go = findGo();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${dirname(go)}${delimiter}${process.env.PATH ?? ''}`,
    GOFLAGS: '-buildvcs=false',
    CGO_ENABLED: '0',
  };
  const logFile = join(root, 'build', `${toolId(spec)}.log`);
  const proxy = await goProxy(go, env);
  const registry = `the Go module proxy (${proxy})`;
  for (const step of buildSteps(root, spec)) {
    log(`tools:   ${spec.name} ${spec.version}: ${step.label}`);
    await runStep(step, { go, env, logFile, proxy }).catch((err: unknown) => {
      const tail = err instanceof StepFailure ? err.tail : String(err);
      throw new ToolBuildError(`${spec.name} ${spec.version}`, step.label, registry, tail, logFile);
    });
  }
  writeFileSync(dirs.marker, `${new Date().toISOString()}\n`);
  if (!isInstalled(root, spec)) {
    throw new ToolBuildError(
      `${spec.name} ${spec.version}`,
      'verify binaries',
      registry,
      `expected ${spec.binaries.join(', ')} in ${dirs.binDir}`,
      logFile,
    );
  }
}

class StepFailure extends Error {
  constructor(readonly tail: string) {
    super(tail);
  }
}

interface StepContext {
  go: string;
  env: NodeJS.ProcessEnv;
  logFile: string;
  proxy: string;
}

async function runStep(step: BuildStep, ctx: StepContext): Promise<void> {
  switch (step.kind) {
    case 'write':
      writeFileSync(step.path, step.content);
      return;
    case 'copy':
      copyFileSync(step.from, step.to);
      return;
    case 'copy-module-files': {
      const moduleDir = (await goOutput(ctx, ['list', '-m', '-f', '{{.Dir}}', step.module], step.cwd)).trim();
      if (!moduleDir) throw new StepFailure(`go list -m found no folder for ${step.module} in ${step.cwd}`);
      const from = join(moduleDir, step.dir);
      const files = readdirSync(from).filter((f) => f.endsWith(step.suffix));
      if (files.length === 0) throw new StepFailure(`no *${step.suffix} files in ${from}`);
      mkdirSync(step.to, { recursive: true });
      for (const f of files) {
        copyFileSync(join(from, f), join(step.to, f));
        // The module cache is read-only; a copy keeping that mode could not be replaced by a later build.
        chmodSync(join(step.to, f), 0o644);
      }
      return;
    }
    case 'go':
      if (step.skipIfExists && exists(step.skipIfExists)) return;
      await runGo(ctx, step.args, step.cwd, step.env);
      return;
    case 'replace-staging': {
      const url = `${ctx.proxy}/k8s.io/kubernetes/@v/v${step.kubernetesVersion}.mod`;
      const res = await fetch(url).catch((e: unknown) => {
        throw new StepFailure(`GET ${url}: ${String(e)}`);
      });
      if (!res.ok) throw new StepFailure(`GET ${url}: HTTP ${res.status}`);
      const modules = stagingModules(await res.text());
      if (modules.length === 0) throw new StepFailure(`no staging replace directives found in ${url}`);
      await runGo(
        ctx,
        ['mod', 'edit', ...modules.map((m) => `-replace=${m}=${m}@v${step.stagingVersion}`)],
        step.cwd,
      );
      return;
    }
  }
}

function exists(path: string): boolean {
  try {
    accessSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Runs go and returns its stdout (also logged); for queries such as `go list`. */
async function goOutput(ctx: StepContext, args: string[], cwd: string): Promise<string> {
  let stdout = '';
  await runGo(ctx, args, cwd, {}, (chunk) => (stdout += chunk.toString()));
  return stdout;
}

function runGo(
  ctx: StepContext,
  args: string[],
  cwd: string,
  extraEnv: Record<string, string> = {},
  onStdout?: (chunk: Buffer) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const out = createWriteStream(ctx.logFile, { flags: 'a' });
    out.write(`\n$ (cd ${cwd} && go ${args.join(' ')})\n`);
    const tail: string[] = [];
    const child = spawn(ctx.go, args, {
      cwd,
      env: { ...ctx.env, ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const collect = (chunk: Buffer) => {
      out.write(chunk);
      tail.push(...chunk.toString().split('\n').filter(Boolean));
      if (tail.length > 40) tail.splice(0, tail.length - 40);
    };
    child.stdout.on('data', (chunk: Buffer) => {
      onStdout?.(chunk);
      collect(chunk);
    });
    child.stderr.on('data', collect);
    child.on('error', (e) => {
      out.end();
      reject(new StepFailure(String(e)));
    });
    child.on('close', (code, signal) => {
      out.end();
      if (code === 0) resolve();
      else reject(new StepFailure([...tail.slice(-20), `(go exited with ${code ?? signal})`].join('\n')));
    });
  });
}

async function goProxy(go: string, env: NodeJS.ProcessEnv): Promise<string> {
  const text = await new Promise<string>((resolve) => {
    const child = spawn(go, ['env', 'GOPROXY'], { env, stdio: ['ignore', 'pipe', 'ignore'] });
    let s = '';
    child.stdout.on('data', (c: Buffer) => (s += c.toString()));
    child.on('close', () => resolve(s.trim()));
    child.on('error', () => resolve(''));
  });
  const first = text.split(/[,|]/).find((p) => p.startsWith('http'));
  return (first ?? 'https://proxy.golang.org').replace(/\/$/, '');
}

/** One installer per tool at a time across processes; a lock whose owner died is taken over. */
async function withLock(
  lockFile: string,
  log: (line: string) => void,
  fn: () => Promise<void>,
): Promise<void> {
  mkdirSync(dirname(lockFile), { recursive: true });
  let announced = false;
  for (;;) {
    try {
      const fd = openSync(lockFile, 'wx');
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const owner = Number(readFileOr(lockFile, '0'));
      if (!owner || !pidAlive(owner)) {
        unlinkSafe(lockFile);
        continue;
      }
      if (!announced) log(`tools: waiting for another installer (pid ${owner}) that holds ${lockFile}`);
      announced = true;
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
  try {
    await fn();
  } finally {
    unlinkSafe(lockFile);
  }
}

function readFileOr(path: string, fallback: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return fallback;
  }
}

function unlinkSafe(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
