// The local stack's command line (`tools`, `start`, `up`, `down`, `status`, and the internal `daemon`); the only module here that exits the process.
import { resolve } from 'node:path';
import { rmSync } from 'node:fs';
import { down, daemonPidFile, stackHealthy, up } from './stack-daemon';
import { readStackInfo, type StackInfo } from './stack-info';
import { stackLayout, type StackLayout } from './stack-layout';
import { processNodeRuntime, removeHostsBlock } from './node-runtime';
import { startStack, type RunningStack } from './stack';
import { ALL_TOOLS, cacheRoot, isInstalled, toolId, toolPaths } from './tool-cache';
import { ensureTools } from './tools';

const REPO_ROOT = resolve(__dirname, '..', '..');

interface Cli {
  command: string;
  stateDir: string;
  hostIp: string;
  withOperator: boolean;
  withCertManager: boolean;
}

export function parseCli(argv: string[]): Cli {
  const [command = 'help', ...rest] = argv;
  const cli: Cli = {
    command,
    stateDir: resolve(REPO_ROOT, '.local'),
    // A second checkout (a git worktree) runs its own stack beside the default one by choosing another loopback address.
    hostIp: process.env.ETCD_CONDUCTOR_HOST_IP ?? '127.0.0.1',
    withOperator: true,
    withCertManager: true,
  };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    const value = () => {
      const v = rest[++i];
      if (v === undefined) throw new Error(`${arg} needs a value`);
      return v;
    };
    if (arg === '--state-dir') cli.stateDir = resolve(value());
    else if (arg === '--host-ip') cli.hostIp = value();
    else if (arg === '--no-operator') cli.withOperator = false;
    else if (arg === '--no-cert-manager') cli.withCertManager = false;
    else throw new Error(`unknown option ${arg}`);
  }
  return cli;
}

const log = (line: string) => console.log(line);
const stamp = (line: string) => console.log(`${new Date().toISOString()} ${line}`);

function summary(info: StackInfo, stateDir: string): string {
  return [
    `  kubeconfig      ${info.kubeconfig}`,
    `  apiserver       ${info.apiserverUrl}`,
    `  Temporal        ${info.temporal.address} (namespace ${info.temporal.namespace})`,
    `  Temporal UI     ${info.temporal.uiUrl}`,
    `  S3 (MinIO)      ${info.s3.endpoint} bucket ${info.s3.bucket}`,
    `  nodes           ${info.nodes.map((n) => `${n.name}@${n.hostIp}`).join(', ')}`,
    `  fault control   ${info.faultControlUrl ?? '-'}`,
    `  cert-manager    ${info.certManager?.metricsUrl ?? '-'}`,
    `  logs            ${info.logsDir}`,
    `  shell           . ${resolve(stateDir, 'env.sh')}`,
  ].join('\n');
}

async function ensureAllTools(): Promise<void> {
  const t0 = Date.now();
  await ensureTools({ log });
  log(`tools: all ready in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
}

function requireTools(): string {
  const root = cacheRoot();
  const missing = ALL_TOOLS.filter((t) => !isInstalled(root, t));
  if (missing.length > 0)
    throw new Error(`tools missing from ${root}: ${missing.map(toolId).join(', ')}; run \`npm run tools\``);
  return root;
}

/** Runs a stack in this process until SIGINT/SIGTERM; used by `start` (foreground) and `daemon` (detached by `up`). */
async function runInForeground(
  layout: StackLayout,
  cli: Cli,
  onReady: (stack: RunningStack) => void,
): Promise<void> {
  let stack: RunningStack | undefined;
  const stopSignal = new Promise<NodeJS.Signals>((res) => {
    process.once('SIGINT', () => res('SIGINT'));
    process.once('SIGTERM', () => res('SIGTERM'));
  });
  const started = startStack({
    layout,
    tools: toolPaths(requireTools()),
    nodes: processNodeRuntime,
    withOperator: cli.withOperator,
    withCertManager: cli.withCertManager,
    log: stamp,
  });
  const first = await Promise.race([
    started.then((s) => ({ kind: 'ready' as const, s })),
    stopSignal.then((sig) => ({ kind: 'signal' as const, sig })),
  ]);
  if (first.kind === 'signal') {
    stamp(`stack: ${first.sig} during start-up; stopping what was started`);
    stack = await started.catch(() => undefined);
  } else {
    stack = first.s;
    onReady(stack);
    const sig = await stopSignal;
    stamp(`stack: ${sig}, stopping`);
  }
  if (stack) await stack.stop();
  rmSync(layout.paths.stackJson, { force: true });
  rmSync(layout.paths.envSh, { force: true });
  stamp('stack: stopped');
}

async function main(argv: string[]): Promise<number> {
  const cli = parseCli(argv);
  const layout = stackLayout({ repoRoot: REPO_ROOT, stateDir: cli.stateDir, hostIp: cli.hostIp });
  const extraArgs = [
    ...(cli.withOperator ? [] : ['--no-operator']),
    ...(cli.withCertManager ? [] : ['--no-cert-manager']),
  ];
  switch (cli.command) {
    case 'tools':
      await ensureAllTools();
      return 0;
    case 'up': {
      const t0 = Date.now();
      await ensureAllTools();
      const result = await up(layout, {
        mainJs: __filename,
        extraArgs,
        timeoutMs: 300000,
        log,
        cleanups: [() => removeHostsBlock(layout.stateDir)],
      });
      log(
        `${result.alreadyRunning ? 'up: already running' : `up: ready in ${((Date.now() - t0) / 1000).toFixed(1)}s`}\n${summary(result.info, layout.stateDir)}`,
      );
      return 0;
    }
    case 'down': {
      const result = await down(layout, { log, cleanups: [() => removeHostsBlock(layout.stateDir)] });
      const strays =
        result.killed.length > 0
          ? `; killed ${result.killed.length} leftover process(es): ${result.killed.map((k) => `${k.pid} ${k.command}`).join(', ')}`
          : '';
      log(
        result.wasRunning
          ? `down: stack in ${layout.stateDir} stopped${strays}`
          : `down: no stack running in ${layout.stateDir}`,
      );
      return 0;
    }
    case 'status': {
      const info = readStackInfo(layout.paths.stackJson);
      if (!info || !(await stackHealthy(layout, info))) {
        log(`status: no healthy stack in ${layout.stateDir}`);
        return 1;
      }
      log(`status: healthy\n${summary(info, layout.stateDir)}`);
      return 0;
    }
    case 'start': {
      await ensureAllTools();
      const existing = readStackInfo(layout.paths.stackJson);
      if (existing && (await stackHealthy(layout, existing))) {
        log(
          `start: a stack is already running in ${layout.stateDir} (pid ${existing.ownerPid}); \`npm run down\` stops it`,
        );
        return 1;
      }
      if (existing) await down(layout, { log, cleanups: [() => removeHostsBlock(layout.stateDir)] });
      await runInForeground(layout, cli, (stack) =>
        log(`\nstack ready; Ctrl-C stops everything\n${summary(stack.info, layout.stateDir)}\n`),
      );
      return 0;
    }
    case 'daemon':
      try {
        await runInForeground(layout, cli, () => stamp('daemon: stack ready'));
      } finally {
        rmSync(daemonPidFile(layout), { force: true });
      }
      return 0;
    default:
      log(
        'usage: main.js <tools|start|up|down|status> [--state-dir DIR] [--host-ip 127.x.y.z] [--no-operator] [--no-cert-manager]',
      );
      return cli.command === 'help' ? 0 : 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
    process.exit(1);
  },
);
