// Real servers for the agent's e2e tests (an etcd 3.6 member and MinIO from the tool cache, each on free ports of one loopback IP in a temp dir) and a runner for the built agent as a child process.
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { isOk } from '../../localcluster/http-probe';
import { startProcess, type ManagedProcess } from '../../localcluster/managed-process';
import { repoRoot } from '../../localcluster/stack-info';
import { cacheRoot, ETCD_TOOLS, MINIO_TOOL, toolDirs } from '../../localcluster/tool-cache';
import { waitFor } from '../../localcluster/wait-for';

/** This checkout's own loopback address (see the brief); nothing here binds elsewhere. */
export const HOST = process.env.ETCD_CONDUCTOR_HOST_IP ?? '127.22.0.1';
export const ETCD_BIN_DIR = toolDirs(cacheRoot(), ETCD_TOOLS['3.6.16']).binDir;
const MINIO_BIN = join(toolDirs(cacheRoot(), MINIO_TOOL).binDir, 'minio');

export async function freePort(host = HOST): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface EtcdMember {
  name: string;
  clientUrl: string;
  peerUrl: string;
  dataDir: string;
  process: ManagedProcess;
}

export interface EtcdMemberOptions {
  name: string;
  dataDir: string;
  logFile: string;
  peerPort?: number;
  /** The cluster line; defaults to just this member. */
  initialCluster?: string;
  initialClusterToken?: string;
  extraArgs?: string[];
}

export async function startEtcd(opts: EtcdMemberOptions): Promise<EtcdMember> {
  const clientUrl = `http://${HOST}:${await freePort()}`;
  const peerUrl = `http://${HOST}:${opts.peerPort ?? (await freePort())}`;
  const p = startProcess({
    name: `etcd ${opts.name}`,
    command: join(ETCD_BIN_DIR, 'etcd'),
    args: [
      `--name=${opts.name}`,
      `--data-dir=${opts.dataDir}`,
      `--listen-client-urls=${clientUrl}`,
      `--advertise-client-urls=${clientUrl}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=${opts.initialCluster ?? `${opts.name}=${peerUrl}`}`,
      `--initial-cluster-token=${opts.initialClusterToken ?? 'agent-e2e'}`,
      ...(opts.extraArgs ?? []),
    ],
    cwd: opts.dataDir.replace(/\/[^/]+$/, ''),
    logFile: opts.logFile,
    stackDir: opts.dataDir,
  });
  try {
    await waitFor(`etcd ${opts.name} to be healthy`, () => isOk(`${clientUrl}/health`), {
      timeoutMs: 30_000,
      process: p,
    });
  } catch (e) {
    await p.stop();
    throw e;
  }
  return { name: opts.name, clientUrl, peerUrl, dataDir: opts.dataDir, process: p };
}

export interface Minio {
  endpoint: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  client: S3Client;
  process: ManagedProcess;
  stop(): Promise<void>;
}

export async function startMinio(dir: string, buckets: string[]): Promise<Minio> {
  const endpoint = `http://${HOST}:${await freePort()}`;
  const credentials = { accessKeyId: 'agent-e2e', secretAccessKey: 'agent-e2e-secret-0123' };
  const p = startProcess({
    name: 'minio',
    command: MINIO_BIN,
    args: [
      'server',
      join(dir, 'minio-data'),
      `--address=${endpoint.replace('http://', '')}`,
      `--console-address=${HOST}:${await freePort()}`,
      '--quiet',
    ],
    cwd: dir,
    logFile: join(dir, 'minio.log'),
    stackDir: dir,
    env: {
      MINIO_ROOT_USER: credentials.accessKeyId,
      MINIO_ROOT_PASSWORD: credentials.secretAccessKey,
      MINIO_UPDATE: 'off',
      MINIO_BROWSER: 'off',
    },
  });
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials });
  try {
    await waitFor('MinIO to be ready', () => isOk(`${endpoint}/minio/health/ready`), {
      timeoutMs: 60_000,
      process: p,
    });
    for (const bucket of buckets) await client.send(new CreateBucketCommand({ Bucket: bucket }));
  } catch (e) {
    client.destroy();
    await p.stop();
    throw e;
  }
  return {
    endpoint,
    credentials,
    client,
    process: p,
    async stop() {
      client.destroy();
      await p.stop();
    },
  };
}

const AGENT_MAIN = join(repoRoot(), 'dist', 'agent', 'main.js');

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/** The tests run what the image runs (dist/agent/main.js): build it when a source is newer than the build. */
export function ensureAgentBuilt(): void {
  const root = repoRoot();
  if (existsSync(AGENT_MAIN) && statSync(AGENT_MAIN).mtimeMs >= newestSource(join(root, 'agent'))) return;
  execFileSync(
    process.execPath,
    [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
    {
      cwd: root,
      stdio: 'inherit',
    },
  );
}

export interface AgentRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The result file's content, parsed; undefined when the agent wrote none. */
  result: unknown;
  resultText: string;
}

export interface RunAgentOptions {
  env?: Record<string, string | undefined>;
  /** Called with the child's pid once it started (for signals). */
  onSpawn?: (pid: number) => void;
}

/** Runs `node dist/agent/main.js <args> --result-file <file>` with a clean environment plus `env`. */
export function runAgent(args: string[], resultFile: string, opts: RunAgentOptions = {}): Promise<AgentRun> {
  const env: Record<string, string> = { PATH: `${ETCD_BIN_DIR}:${process.env.PATH ?? ''}` };
  for (const [k, v] of Object.entries(opts.env ?? {})) if (v !== undefined) env[k] = v;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [AGENT_MAIN, ...args, '--result-file', resultFile], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (child.pid !== undefined) opts.onSpawn?.(child.pid);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const resultText = existsSync(resultFile) ? readFileSync(resultFile, 'utf8') : '';
      let result: unknown;
      try {
        result = resultText ? JSON.parse(resultText) : undefined;
      } catch {
        result = undefined;
      }
      resolve({ code, stdout, stderr, result, resultText });
    });
  });
}
