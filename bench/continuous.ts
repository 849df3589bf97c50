// Bench section "continuous": the archiver (`etcd-conductor archive`) on a throw-away etcd and MinIO under a burst of
// writes (how many changes per second it stores, how stale the store gets, how long it takes to catch up), then
// `restore-point` of the archive (a ~16 MB full snapshot plus every change) timed to the snapshot alone and to the
// newest point, so the replay rate shows. Scaled to run in about a minute; prints figures, never fails on a time.
import { CreateBucketCommand, GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Etcd3 } from 'etcd3';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ArchiveState } from '../contracts/continuous-backup';
import { isOk } from '../localcluster/http-probe';
import { startProcess, type ManagedProcess } from '../localcluster/managed-process';
import { repoRoot } from '../localcluster/stack-info';
import { cacheRoot, ETCD_TOOLS, MINIO_TOOL, toolDirs } from '../localcluster/tool-cache';
import { waitFor } from '../localcluster/wait-for';
import type { BenchSection, Figure } from './section';

const HOST = process.env.ETCD_CONDUCTOR_HOST_IP ?? '127.0.0.1';
const BUCKET = 'bench';
const PREFIX = 'bench';
const UID = 'bench-continuous';
/** The full snapshot: values of 256 KiB, incompressible, BENCH_CONTINUOUS_FULL_MB of them (default ~16 MB). */
const FILL_BYTES = 256 * 1024;
const FILL_VALUES = Math.max(
  4,
  Math.round((Number(process.env.BENCH_CONTINUOUS_FULL_MB ?? '16') * 1024 * 1024) / FILL_BYTES / 4) * 4,
);
/** The burst: this many writers, each putting a 256-byte value in a loop, for this long. */
const WRITERS = 16;
const CHANGE_BYTES = 256;
const BURST_SECONDS = 20;
/**
 * With BENCH_CONTINUOUS_CHANGES the burst runs until that many changes are written instead of for BURST_SECONDS
 * (bounded by BURST_LIMIT_SECONDS): issue 18's restore of 100 MB plus 100,000 changes is
 * `BENCH_CONTINUOUS_FULL_MB=100 BENCH_CONTINUOUS_CHANGES=100000 npm run bench -- continuous`.
 */
const BURST_CHANGES = process.env.BENCH_CONTINUOUS_CHANGES
  ? Number(process.env.BENCH_CONTINUOUS_CHANGES)
  : undefined;
const BURST_LIMIT_SECONDS = 600;
const MAX_LAG_SECONDS = 2;
/** The longest wait for the archiver to store the burst's last change after the burst ends. */
const CATCH_UP_LIMIT_MS = 120_000;

const MB = 1e6;

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

/** Runs an agent command to completion and returns its wall time in seconds. */
function timed(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-2000)));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`${args[1] ?? 'agent'} exited ${code}: ${stderr.trim()}`));
      else resolve((performance.now() - t0) / 1000);
    });
  });
}

async function readState(s3: S3Client): Promise<ArchiveState | undefined> {
  try {
    const got = await s3.send(
      new GetObjectCommand({ Bucket: BUCKET, Key: `${PREFIX}/continuous/${UID}/state.json` }),
    );
    return JSON.parse(await got.Body!.transformToString()) as ArchiveState;
  } catch {
    return undefined;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const continuousSection: BenchSection = {
  name: 'continuous',
  async run(log) {
    const dir = mkdtempSync(join(tmpdir(), 'etcd-conductor-bench-continuous-'));
    const etcdBin = toolDirs(cacheRoot(), ETCD_TOOLS['3.6.16']).binDir;
    const minioBin = join(toolDirs(cacheRoot(), MINIO_TOOL).binDir, 'minio');
    const agentMain = join(repoRoot(), 'dist', 'agent', 'main.js');
    const credentials = { accessKeyId: 'bench', secretAccessKey: randomBytes(16).toString('hex') };
    const processes: ManagedProcess[] = [];
    let s3: S3Client | undefined;
    let client: Etcd3 | undefined;
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

      client = new Etcd3({ hosts: clientUrl });
      for (let i = 0; i < FILL_VALUES; i += 4)
        await Promise.all(
          [0, 1, 2, 3].map((j) => client!.put(`fill/${i + j}`).value(randomBytes(FILL_BYTES))),
        );
      const env = {
        PATH: `${etcdBin}:${process.env.PATH ?? ''}`,
        AWS_ACCESS_KEY_ID: credentials.accessKeyId,
        AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      };
      const s3Flags = [
        '--s3-endpoint',
        s3Endpoint,
        '--s3-bucket',
        BUCKET,
        '--s3-key',
        PREFIX,
        '--s3-region',
        'us-east-1',
        '--s3-force-path-style',
      ];
      const archiver = startProcess({
        name: 'bench archiver',
        command: process.execPath,
        args: [
          agentMain,
          'archive',
          '--endpoint',
          clientUrl,
          ...s3Flags,
          '--cluster-uid',
          UID,
          '--work-dir',
          join(dir, 'archive-work'),
          '--full-snapshot-interval-seconds',
          '3600',
          '--max-lag-seconds',
          String(MAX_LAG_SECONDS),
          '--retention-seconds',
          '3600',
        ],
        cwd: dir,
        logFile: join(dir, 'archiver.log'),
        stackDir: dir,
        env,
      });
      processes.push(archiver);
      const store = s3;
      let first: ArchiveState | undefined;
      await waitFor(
        'the archiver to store its first chain',
        async () => (first = await readState(store)) !== undefined,
        { timeoutMs: 120_000, process: archiver },
      );
      const snapshotRevision = first?.latestRevision ?? 0;
      log(
        `continuous: ${FILL_VALUES * (FILL_BYTES / 1024)} KiB filled, chain at revision ${snapshotRevision}`,
      );

      // The burst, with the store's staleness sampled as it goes (state.json is rewritten after every chunk).
      let changes = 0;
      let stalest = 0;
      const burstStart = performance.now();
      const until = burstStart + (BURST_CHANGES === undefined ? BURST_SECONDS : BURST_LIMIT_SECONDS) * 1000;
      const going = () =>
        performance.now() < until && (BURST_CHANGES === undefined || changes < BURST_CHANGES);
      const sampler = (async () => {
        while (going()) {
          const st = await readState(store);
          if (st) stalest = Math.max(stalest, (Date.now() - Date.parse(st.latestTime)) / 1000);
          await sleep(250);
        }
      })();
      const value = randomBytes(CHANGE_BYTES / 2).toString('hex');
      await Promise.all(
        Array.from({ length: WRITERS }, async (_, w) => {
          for (let i = 0; going(); i++) {
            await client!.put(`burst/${w}/${i % 1000}`).value(value);
            changes++;
          }
        }),
      );
      const burstEnd = performance.now();
      await sampler;
      const last = Number((await client.kv.range({ key: Buffer.from('x') })).header.revision);
      const caught = await waitFor(
        `the archiver to store revision ${last}`,
        async () => ((await readState(store))?.latestRevision ?? 0) >= last,
        { timeoutMs: CATCH_UP_LIMIT_MS, intervalMs: 100, process: archiver },
      ).then(
        () => performance.now(),
        () => undefined,
      );
      await archiver.stop();
      const burstSeconds = (burstEnd - burstStart) / 1000;
      log(
        `continuous: ${changes} changes in ${burstSeconds.toFixed(1)} s; archived by ${caught ? 'the end' : 'never'}`,
      );

      const restore = async (point: string[], name: string) => {
        const peer = `http://127.0.0.1:${await freePort()}`;
        return timed(
          [
            agentMain,
            'restore-point',
            ...s3Flags,
            '--cluster-uid',
            UID,
            ...point,
            '--work-dir',
            join(dir, `${name}-work`),
            '--data-dir',
            join(dir, `${name}-data`),
            '--name',
            name,
            '--initial-cluster',
            `${name}=${peer}`,
            '--initial-advertise-peer-urls',
            peer,
            '--initial-cluster-token',
            'bench',
            '--result-file',
            join(dir, `${name}-result`),
          ],
          env,
        );
      };
      const base = await restore(['--revision', String(snapshotRevision)], 'base');
      const newest = await restore(['--newest'], 'newest');
      const replayed = last - snapshotRevision;
      const result = JSON.parse(readFileSync(join(dir, 'newest-result'), 'utf8')) as { revision?: number };

      const figures: Figure[] = [
        {
          name: 'changes written (burst)',
          value: changes / burstSeconds,
          unit: 'changes/s',
          note: `${changes} changes: ${WRITERS} writers, ${CHANGE_BYTES} B values, ${burstSeconds.toFixed(0)} s, one etcd`,
        },
        {
          name: 'changes archived',
          value: caught ? changes / ((caught - burstStart) / 1000) : undefined,
          unit: 'changes/s',
          note: 'from the first write until the store held the last one',
        },
        {
          name: 'store staleness during the burst (max)',
          value: stalest,
          unit: 's',
          note: `maxLagSeconds ${MAX_LAG_SECONDS}; now minus state.json latestTime, sampled every 250 ms`,
        },
        {
          name: 'catch-up after the burst',
          value: caught ? (caught - burstEnd) / 1000 : undefined,
          unit: 's',
          note: caught ? 'last write to last change stored' : `not within ${CATCH_UP_LIMIT_MS / 1000} s`,
        },
        {
          name: 'restore-point to the full snapshot',
          value: base,
          unit: 's',
          note: `~${((FILL_VALUES * FILL_BYTES) / MB).toFixed(0)} MB snapshot, no change replayed`,
        },
        {
          name: 'restore-point to the newest point',
          value: newest,
          unit: 's',
          note: `the same plus ${replayed} changes; reached revision ${result.revision ?? '?'} of ${last}`,
        },
        {
          name: 'replay rate',
          value: newest > base ? replayed / (newest - base) : undefined,
          unit: 'changes/s',
          note: 'changes over the extra time of the newest restore',
        },
      ];
      return figures;
    } finally {
      client?.close();
      s3?.destroy();
      for (const p of processes.reverse()) await p.stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
