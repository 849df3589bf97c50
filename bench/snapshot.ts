// Bench section "snapshot": the agent streaming a ~256 MB etcd snapshot to MinIO, side by side with `etcdctl snapshot save` plus an SDK upload of the file, on a throw-away etcd and MinIO; prints time, throughput and the agent's peak memory.
import { CreateBucketCommand, DeleteObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { Etcd3 } from 'etcd3';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isOk } from '../localcluster/http-probe';
import { startProcess, type ManagedProcess } from '../localcluster/managed-process';
import { repoRoot } from '../localcluster/stack-info';
import { cacheRoot, ETCD_TOOLS, MINIO_TOOL, toolDirs } from '../localcluster/tool-cache';
import { waitFor } from '../localcluster/wait-for';
import type { BenchSection, Figure } from './section';
import { median as medianOf } from './section';

const HOST = process.env.ETCD_CONDUCTOR_HOST_IP ?? '127.0.0.1';
const BUCKET = 'bench';
const VALUE_BYTES = 1024 * 1024;
/** 256 values of 1 MiB: a ~256 MB key space, a ~300 MB bolt file. Incompressible, so nothing is flattered. */
const VALUES = 256;
const ROUNDS = 3;
const MEMORY_TARGET_MB = 128;

const MB = 1e6;
/** The median of the runs (section.ts), NaN for none, so a failed run shows in the figure. */
const median = (xs: number[]) => medianOf(xs) ?? NaN;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** VmHWM (peak resident set) of a running process in MB, or undefined once it has exited. */
function peakRssMb(pid: number): number | undefined {
  try {
    const kb = /VmHWM:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? undefined : (Number(kb) * 1024) / MB;
  } catch {
    return undefined;
  }
}

interface Timed {
  seconds: number;
  peakMb?: number;
}

/** Runs a command to completion; with `watchMemory`, polls its VmHWM (monotonic, so the last read is the peak up to ~20 ms before exit). */
function run(command: string, args: string[], env: NodeJS.ProcessEnv, watchMemory = false): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(command, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-2000)));
    let peakMb: number | undefined;
    const poll = watchMemory
      ? setInterval(() => {
          const mb = child.pid === undefined ? undefined : peakRssMb(child.pid);
          if (mb !== undefined) peakMb = mb;
        }, 20)
      : undefined;
    child.on('error', reject);
    child.on('close', (code) => {
      if (poll) clearInterval(poll);
      const seconds = (performance.now() - t0) / 1000;
      if (code !== 0) reject(new Error(`${command} ${args[0] ?? ''} exited ${code}: ${stderr.trim()}`));
      else resolve({ seconds, ...(peakMb !== undefined ? { peakMb } : {}) });
    });
  });
}

async function emptyBucket(s3: S3Client): Promise<void> {
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET }));
  for (const o of listed.Contents ?? [])
    await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: o.Key }));
}

export const snapshotSection: BenchSection = {
  name: 'snapshot',
  async run(log) {
    const dir = mkdtempSync(join(tmpdir(), 'etcd-conductor-bench-snapshot-'));
    const etcdBin = toolDirs(cacheRoot(), ETCD_TOOLS['3.6.16']).binDir;
    const minioBin = join(toolDirs(cacheRoot(), MINIO_TOOL).binDir, 'minio');
    const agentMain = join(repoRoot(), 'dist', 'agent', 'main.js');
    const credentials = { accessKeyId: 'bench', secretAccessKey: randomBytes(16).toString('hex') };
    const processes: ManagedProcess[] = [];
    let s3: S3Client | undefined;
    let etcdClient: Etcd3 | undefined;
    try {
      const clientUrl = `http://${HOST}:${await freePort()}`;
      const peerUrl = `http://${HOST}:${await freePort()}`;
      const s3Endpoint = `http://${HOST}:${await freePort()}`;
      const etcd = startProcess({
        name: 'bench etcd',
        command: join(etcdBin, 'etcd'),
        args: [
          '--name=bench',
          `--data-dir=${join(dir, 'etcd')}`,
          `--listen-client-urls=${clientUrl}`,
          `--advertise-client-urls=${clientUrl}`,
          `--listen-peer-urls=${peerUrl}`,
          `--initial-advertise-peer-urls=${peerUrl}`,
          `--initial-cluster=bench=${peerUrl}`,
        ],
        cwd: dir,
        logFile: join(dir, 'etcd.log'),
        stackDir: dir,
      });
      processes.push(etcd);
      mkdirSync(join(dir, 'minio'));
      const minio = startProcess({
        name: 'bench minio',
        command: minioBin,
        args: [
          'server',
          join(dir, 'minio'),
          `--address=${s3Endpoint.slice('http://'.length)}`,
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
      processes.push(minio);
      await waitFor('bench etcd', () => isOk(`${clientUrl}/health`), { timeoutMs: 30_000, process: etcd });
      await waitFor('bench MinIO', () => isOk(`${s3Endpoint}/minio/health/ready`), {
        timeoutMs: 60_000,
        process: minio,
      });
      s3 = new S3Client({ endpoint: s3Endpoint, region: 'us-east-1', forcePathStyle: true, credentials });
      await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));

      log(`snapshot: filling etcd with ${VALUES} x ${VALUE_BYTES / 1024} KiB values`);
      etcdClient = new Etcd3({ hosts: clientUrl });
      const fillStart = performance.now();
      for (let i = 0; i < VALUES; i += 4) {
        await Promise.all(
          [0, 1, 2, 3].map((j) => etcdClient!.put(`bench/${i + j}`).value(randomBytes(VALUE_BYTES))),
        );
      }
      log(`snapshot: filled in ${((performance.now() - fillStart) / 1000).toFixed(1)} s`);

      const env = {
        PATH: process.env.PATH ?? '',
        AWS_ACCESS_KEY_ID: credentials.accessKeyId,
        AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      };
      const agent: Timed[] = [];
      const save: number[] = [];
      const upload: number[] = [];
      let size = 0;
      // Alternating rounds, so load from the other users of the machine hits both sides alike.
      for (let round = 1; round <= ROUNDS; round++) {
        const a = await run(
          process.execPath,
          [
            agentMain,
            'snapshot',
            '--endpoint',
            clientUrl,
            '--s3-endpoint',
            s3Endpoint,
            '--s3-bucket',
            BUCKET,
            '--s3-key',
            `agent-${round}.db`,
            '--s3-region',
            'us-east-1',
            '--s3-force-path-style',
            '--result-file',
            join(dir, `result-${round}.json`),
          ],
          env,
          true,
        );
        const result = JSON.parse(readFileSync(join(dir, `result-${round}.json`), 'utf8')) as {
          artifact: { size: number };
        };
        size = result.artifact.size;
        agent.push(a);

        const file = join(dir, `pair-${round}.db`);
        save.push(
          (await run(join(etcdBin, 'etcdctl'), ['--endpoints', clientUrl, 'snapshot', 'save', file], env))
            .seconds,
        );
        const t0 = performance.now();
        // The SDK's defaults for a file: 5 MiB parts, four in flight.
        await new Upload({
          client: s3,
          params: { Bucket: BUCKET, Key: `pair-${round}.db`, Body: createReadStream(file) },
        }).done();
        upload.push((performance.now() - t0) / 1000);
        if (statSync(file).size !== size) log(`snapshot: note: etcdctl wrote ${statSync(file).size} bytes`);
        rmSync(file);
        await emptyBucket(s3);
        log(
          `snapshot: round ${round}: agent ${a.seconds.toFixed(2)} s (peak ${a.peakMb?.toFixed(0)} MB), ` +
            `etcdctl save ${save.at(-1)?.toFixed(2)} s + upload ${upload.at(-1)?.toFixed(2)} s`,
        );
      }

      const agentSeconds = median(agent.map((a) => a.seconds));
      const pairSeconds = median(save.map((s, i) => s + (upload[i] ?? NaN)));
      const peak = Math.max(...agent.map((a) => a.peakMb ?? NaN));
      const sizeMb = size / MB;
      return [
        { name: 'snapshot size', value: sizeMb, unit: 'MB', note: `${VALUES} x 1 MiB random values` },
        {
          name: 'agent -> MinIO (median of 3)',
          value: agentSeconds,
          unit: 's',
          note: `${(agentSeconds / pairSeconds).toFixed(2)} x the pair; target <= 1.00: ${agentSeconds <= pairSeconds ? 'met' : 'missed'}`,
        },
        { name: 'agent throughput', value: sizeMb / agentSeconds, unit: 'MB/s' },
        {
          name: 'agent peak RSS (max of 3)',
          value: peak,
          unit: 'MB',
          note: `VmHWM; target < ${MEMORY_TARGET_MB} MB: ${peak < MEMORY_TARGET_MB ? 'met' : 'missed'}`,
        },
        {
          name: 'etcdctl save + SDK upload (median of 3)',
          value: pairSeconds,
          unit: 's',
          note: `save ${median(save).toFixed(1)} s + upload ${median(upload).toFixed(1)} s`,
        },
        { name: 'etcdctl save + upload throughput', value: sizeMb / pairSeconds, unit: 'MB/s' },
      ] satisfies Figure[];
    } finally {
      etcdClient?.close();
      if (s3) {
        await emptyBucket(s3).catch(() => undefined);
        s3.destroy();
      }
      await Promise.all(processes.map((p) => p.stop()));
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
