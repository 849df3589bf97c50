// The local stack's command line (`tools`, `start`, `up`, `down`, `status`, and the internal `daemon`); the only module here that exits the process.
import { startStallLog } from './loop-stalls';
import { resolve } from 'node:path';
import { rmSync } from 'node:fs';
import { down, daemonPidFile, stackHealthy, up } from './stack-daemon';
import { readStackInfo, type StackInfo } from './stack-info';
import { stackLayout, type StackLayout } from './stack-layout';
import { removeHostsBlock } from './real-nodes/host-names';
import { startStack, type RunningStack } from './stack';
import { parseCli, toolSetOf, type Cli, USAGE } from './cli-args';
import { ensureDebPackages, REAL_NODE_DEB_PACKAGES } from './apt-packages';
import { ensureImages } from './images';
import { ensureProjectImage } from './project-image';
import { FAULT_USAGE, parseFaultArgs, runFault } from './fault-cli';
import { realNodeLayout } from './real-nodes/real-node-layout';
import { cleanupRealNodes, networkOwnerOf } from './real-nodes/real-nodes';
import { assertMachineCanRunNodes, RealNodesUnsupportedError } from './real-nodes/preflight';
import {
  ALL_TOOLS,
  cacheRoot,
  HOST_TOOLS,
  isInstalled,
  toolId,
  toolPaths,
  type ToolSpec,
} from './tool-cache';
import { ensureTools } from './tools';

const REPO_ROOT = resolve(__dirname, '..', '..');

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
    `  cert-manager    ${info.certManager?.metricsUrl ?? '-'}`,
    `  operator        ${info.operatorChart ? `chart release ${info.operatorChart.release} in namespace ${info.operatorChart.namespace}` : 'host process'}`,
    `  logs            ${info.logsDir}`,
    `  shell           . ${resolve(stateDir, 'env.sh')}`,
  ].join('\n');
}

async function ensureAllTools(tools: ToolSpec[] = ALL_TOOLS): Promise<void> {
  const t0 = Date.now();
  await ensureTools({ log, tools });
  log(
    `tools: ${tools === ALL_TOOLS ? 'all' : tools.length} ready in ${((Date.now() - t0) / 1000).toFixed(1)}s`,
  );
}

/** A stack needs every tool (the real nodes' included); returns the cache root that holds them. */
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
  const root = requireTools();
  const started = startStack({
    layout,
    tools: toolPaths(root),
    cacheRoot: root,
    withOperator: cli.withOperator,
    withCertManager: cli.withCertManager,
    claimsInMemory: cli.claimsInMemory,
    operatorMode: cli.operatorMode,
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
  const parsed = parseCli(argv, {
    stateDir: resolve(REPO_ROOT, '.local'),
    // A second checkout (a git worktree) runs its own stack beside the default one by choosing another loopback address.
    hostIp: process.env.ETCD_CONDUCTOR_HOST_IP ?? '127.0.0.1',
  });
  const cli: Cli = { ...parsed, stateDir: resolve(parsed.stateDir) };
  const layout = stackLayout({ repoRoot: REPO_ROOT, stateDir: cli.stateDir, hostIp: cli.hostIp });
  const extraArgs = [
    ...(cli.withOperator ? [] : ['--no-operator']),
    ...(cli.withCertManager ? [] : ['--no-cert-manager']),
    ...(cli.claimsInMemory ? ['--claims-in-memory'] : []),
    ...(cli.operatorMode === 'chart' ? ['--operator=chart'] : []),
  ];
  const cleanups = [
    async () => removeHostsBlock(layout.stateDir),
    // Real nodes leave namespaces, links, mounts and cgroups that no process scan finds; only root can have made them.
    // Only the network this folder's stack made (its record names the host IP it used): the names derive from the host
    // IP alone, so cleaning by the command line's host IP would tear down another folder's running stack.
    async () => {
      if (process.getuid?.() !== 0) return;
      const owner = networkOwnerOf(layout);
      if (!owner) return;
      const own =
        owner.hostIp === layout.hostIp
          ? layout
          : stackLayout({ repoRoot: REPO_ROOT, stateDir: cli.stateDir, hostIp: owner.hostIp });
      const left = await cleanupRealNodes(own, log);
      if (left.length > 0) log(`down: could not remove ${left.join(', ')}`);
    },
  ];
  /** Fails within seconds, before any tool is built, when the machine cannot run containers. */
  const preflight = async () => {
    // Root installs what is missing first; anyone else gets the one message naming every problem, root included.
    if (process.getuid?.() === 0) await ensureDebPackages(REAL_NODE_DEB_PACKAGES, log);
    await assertMachineCanRunNodes(realNodeLayout(layout).prefix);
  };
  switch (cli.command) {
    case 'tools':
      await ensureAllTools(toolSetOf(cli.positional) === 'host' ? HOST_TOOLS : ALL_TOOLS);
      return 0;
    case 'images': {
      const t0 = Date.now();
      await ensureDebPackages(REAL_NODE_DEB_PACKAGES, log);
      await ensureAllTools();
      await ensureImages(cacheRoot(), toolPaths(cacheRoot()), log);
      await ensureProjectImage(cacheRoot(), REPO_ROOT, toolPaths(cacheRoot()), log);
      log(
        `images: ready in ${((Date.now() - t0) / 1000).toFixed(1)}s (imported into each real node's containerd by \`up\`)`,
      );
      return 0;
    }
    case 'up': {
      const t0 = Date.now();
      await preflight();
      await ensureAllTools();
      const result = await up(layout, {
        mainJs: __filename,
        extraArgs,
        timeoutMs: 300000,
        log,
        cleanups,
      });
      log(
        `${result.alreadyRunning ? 'up: already running' : `up: ready in ${((Date.now() - t0) / 1000).toFixed(1)}s`}\n${summary(result.info, layout.stateDir)}`,
      );
      return 0;
    }
    case 'down': {
      const result = await down(layout, { log, cleanups });
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
      await preflight();
      await ensureAllTools();
      const existing = readStackInfo(layout.paths.stackJson);
      if (existing && (await stackHealthy(layout, existing))) {
        log(
          `start: a stack is already running in ${layout.stateDir} (pid ${existing.ownerPid}); \`npm run down\` stops it`,
        );
        return 1;
      }
      if (existing) await down(layout, { log, cleanups });
      await runInForeground(layout, cli, (stack) =>
        log(`\nstack ready; Ctrl-C stops everything\n${summary(stack.info, layout.stateDir)}\n`),
      );
      return 0;
    }
    case 'fault': {
      const request = parseFaultArgs(cli.positional);
      if ('error' in request) {
        console.error(`fault: ${request.error}\n${FAULT_USAGE}`);
        return 2;
      }
      const info = readStackInfo(layout.paths.stackJson);
      if (!info || !(await stackHealthy(layout, info))) {
        console.error(`fault: no healthy stack in ${layout.stateDir}; \`npm run up\` first`);
        return 1;
      }
      await runFault(info, request, stamp);
      return 0;
    }
    case 'daemon': {
      const stopStallLog = startStallLog(layout.paths.daemonStalls);
      try {
        await runInForeground(layout, cli, () => stamp('daemon: stack ready'));
      } finally {
        rmSync(daemonPidFile(layout), { force: true });
        stopStallLog();
      }
      return 0;
    }
    default:
      log(USAGE);
      return cli.command === 'help' ? 0 : 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    // A machine that cannot run real nodes is the user's to fix, not a bug: the one message, without a stack trace.
    if (e instanceof RealNodesUnsupportedError) console.error(e.message);
    else console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
    process.exit(1);
  },
);
