// The agent as the image runs it (`node dist/agent/main.js`), against a real etcd 3.6 member and a real MinIO: snapshots land whole with the size and sha256 they report, restores rebuild the same keys, and every failure is the contract's reason with nothing left behind.
import {
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { Etcd3 } from 'etcd3';
import { createHash, randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAgentResult, type SnapshotArtifact } from '../../contracts/agent-result';
import {
  ensureAgentBuilt,
  freePort,
  HOST,
  runAgent,
  startEtcd,
  startMinio,
  type EtcdMember,
  type Minio,
} from './agent-fixtures';

const BUCKET = 'snapshots';
const KEYS: Record<string, string> = {
  'agent-e2e/a': 'alpha',
  'agent-e2e/b': 'bravo',
  'agent-e2e/nested/c': 'charlie',
  'agent-e2e/big': randomBytes(64 * 1024).toString('base64'),
};

let dir: string;
let etcd: EtcdMember;
let minio: Minio;
let client: Etcd3;
let results = 0;

const resultFile = () => join(dir, `result-${++results}.json`);
const s3Flags = (key: string, bucket = BUCKET) => [
  '--s3-endpoint',
  minio.endpoint,
  '--s3-bucket',
  bucket,
  '--s3-key',
  key,
  '--s3-region',
  'us-east-1',
  '--s3-force-path-style',
];
const credentials = () => ({
  AWS_ACCESS_KEY_ID: minio.credentials.accessKeyId,
  AWS_SECRET_ACCESS_KEY: minio.credentials.secretAccessKey,
});
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function download(key: string): Promise<Buffer> {
  const out = await minio.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  return Buffer.from(await out.Body!.transformToByteArray());
}

async function objectKeys(): Promise<string[]> {
  const listed = await minio.client.send(new ListObjectsV2Command({ Bucket: BUCKET }));
  return (listed.Contents ?? []).map((o) => o.Key ?? '');
}

async function pendingUploads(): Promise<string[]> {
  const listed = await minio.client.send(new ListMultipartUploadsCommand({ Bucket: BUCKET }));
  return (listed.Uploads ?? []).map((u) => u.Key ?? '');
}

/** A TCP proxy in front of etcd that forwards `holdAfter` bytes of responses, then holds; `cut` drops every connection as a dead member would. */
async function holdingProxy(target: string, holdAfter: number) {
  const sockets: net.Socket[] = [];
  let forwarded = 0;
  const upstream = new URL(target);
  const server = net.createServer((downstream) => {
    const up = net.connect(Number(upstream.port), upstream.hostname);
    sockets.push(downstream, up);
    downstream.pipe(up);
    up.on('data', (chunk: Buffer) => {
      forwarded += chunk.length;
      if (!downstream.write(chunk) || forwarded >= holdAfter) up.pause();
    });
    downstream.on('drain', () => {
      if (forwarded < holdAfter) up.resume();
    });
    const end = () => {
      up.destroy();
      downstream.destroy();
    };
    up.on('error', end);
    downstream.on('error', end);
  });
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, HOST, r));
  const cut = () => sockets.forEach((s) => s.destroy());
  return {
    url: `http://${HOST}:${port}`,
    cut,
    close: () => {
      cut();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** The multipart upload exists once the agent has read its first part. */
async function untilUploadStarted(): Promise<void> {
  const deadline = Date.now() + 60_000;
  while ((await pendingUploads()).length === 0) {
    if (Date.now() > deadline) throw new Error('the multipart upload never started');
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function currentRevision(c: Etcd3): Promise<number> {
  return Number((await c.get('agent-e2e/a').exec()).header.revision);
}

/** A snapshot to S3 of the shared member; returns the artifact. */
async function snapshotToS3(key: string): Promise<SnapshotArtifact> {
  const run = await runAgent(['snapshot', '--endpoint', etcd.clientUrl, ...s3Flags(key)], resultFile(), {
    env: credentials(),
  });
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  const result = parseAgentResult(run.resultText);
  if (!result.ok || !('artifact' in result)) throw new Error(`snapshot failed: ${run.resultText}`);
  return result.artifact;
}

function failureOf(run: { code: number | null; resultText: string }) {
  expect(run.code).toBe(1);
  const result = parseAgentResult(run.resultText);
  if (result.ok) throw new Error(`expected a failure, got ${run.resultText}`);
  return result;
}

beforeAll(async () => {
  ensureAgentBuilt();
  dir = mkdtempSync(join(tmpdir(), 'agent-e2e-'));
  const etcdDir = join(dir, 'etcd');
  mkdirSync(etcdDir);
  [etcd, minio] = await Promise.all([
    startEtcd({ name: 'source', dataDir: join(etcdDir, 'data'), logFile: join(dir, 'etcd-source.log') }),
    startMinio(dir, [BUCKET]),
  ]);
  client = new Etcd3({ hosts: etcd.clientUrl });
  for (const [k, v] of Object.entries(KEYS)) await client.put(k).value(v);
});

afterAll(async () => {
  client?.close();
  await Promise.all([etcd?.process.stop(), minio?.stop()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('snapshot', () => {
  it('to S3: the object holds exactly the reported size and sha256, taken at the revision etcd was at', async () => {
    const revision = await currentRevision(client);
    const artifact = await snapshotToS3('e2e/to-s3.db');

    expect(artifact.uri).toBe(`s3://${BUCKET}/e2e/to-s3.db`);
    expect(artifact.revision).toBe(revision);
    expect(artifact.etcdVersion).toBe('3.6.16');
    expect(Date.now() - Date.parse(artifact.takenAt)).toBeGreaterThanOrEqual(0);
    const head = await minio.client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'e2e/to-s3.db' }));
    expect(head.ContentLength).toBe(artifact.size);
    const bytes = await download('e2e/to-s3.db');
    expect(bytes.length).toBe(artifact.size);
    expect(sha256(bytes)).toBe(artifact.sha256);
    // etcd's own trailer: the last 32 bytes are the sha256 of the database before them.
    expect(sha256(bytes.subarray(0, -32))).toBe(bytes.subarray(-32).toString('hex'));
  });

  it('to a file: the file holds exactly the reported size and sha256, and no partial file is left', async () => {
    const out = join(dir, 'claim', 'snapshots');
    mkdirSync(out, { recursive: true });
    const revision = await currentRevision(client);
    const run = await runAgent(
      [
        'snapshot',
        '--endpoint',
        etcd.clientUrl,
        '--file',
        join(out, 'one.db'),
        '--uri',
        'pvc://claim/one.db',
      ],
      resultFile(),
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^snapshot stored pvc:\/\/claim\/one\.db: \d+ bytes/);
    const result = parseAgentResult(run.resultText);
    if (!result.ok || !('artifact' in result)) throw new Error(run.resultText);
    const bytes = readFileSync(join(out, 'one.db'));
    expect(result.artifact).toMatchObject({
      uri: 'pvc://claim/one.db',
      size: bytes.length,
      sha256: sha256(bytes),
      revision,
    });
    expect(readdirSync(out)).toEqual(['one.db']);
  });

  it('wrong credentials: InvalidCredentials after at most two attempts, and no object', async () => {
    for (const env of [
      { ...credentials(), AWS_SECRET_ACCESS_KEY: 'not-the-secret' },
      { ...credentials(), AWS_ACCESS_KEY_ID: 'nobody' },
    ]) {
      const run = await runAgent(
        ['snapshot', '--endpoint', etcd.clientUrl, ...s3Flags('e2e/denied.db')],
        resultFile(),
        {
          env,
        },
      );
      const failure = failureOf(run);
      expect(failure.reason).toBe('InvalidCredentials');
      const attempts = Number(/(\d+) attempts?\)/.exec(failure.message)?.[1]);
      expect(attempts).toBeGreaterThanOrEqual(1);
      expect(attempts).toBeLessThanOrEqual(2);
      expect(failure.message).not.toContain(env.AWS_SECRET_ACCESS_KEY);
      expect(run.stdout + run.stderr).not.toContain(env.AWS_SECRET_ACCESS_KEY);
    }
    expect(await objectKeys()).not.toContain('e2e/denied.db');
  });

  it('no credentials in the environment: InvalidCredentials before etcd is even asked', async () => {
    const run = await runAgent(
      ['snapshot', '--endpoint', etcd.clientUrl, ...s3Flags('e2e/anon.db')],
      resultFile(),
    );
    expect(failureOf(run).reason).toBe('InvalidCredentials');
  });

  it('a missing bucket: BucketNotFound', async () => {
    const run = await runAgent(
      ['snapshot', '--endpoint', etcd.clientUrl, ...s3Flags('e2e/x.db', 'no-such-bucket')],
      resultFile(),
      { env: credentials() },
    );
    const failure = failureOf(run);
    expect(failure.reason).toBe('BucketNotFound');
    expect(failure.message).toContain('no-such-bucket');
  });

  it('an unreachable etcd: EtcdUnavailable, and nothing in the bucket', async () => {
    const dead = `http://${HOST}:${await freePort()}`;
    const run = await runAgent(
      ['snapshot', '--endpoint', dead, ...s3Flags('e2e/unreachable.db')],
      resultFile(),
      {
        env: credentials(),
      },
    );
    const failure = failureOf(run);
    expect(failure.reason).toBe('EtcdUnavailable');
    expect(failure.message).toContain(dead);
    expect(await objectKeys()).not.toContain('e2e/unreachable.db');
    expect(await pendingUploads()).toEqual([]);
  });

  it('an unreachable etcd with a file destination: EtcdUnavailable and no file, partial or whole', async () => {
    const out = join(dir, 'claim-unreachable');
    mkdirSync(out);
    const run = await runAgent(
      ['snapshot', '--endpoint', `http://${HOST}:${await freePort()}`, '--file', join(out, 'x.db')],
      resultFile(),
    );
    expect(failureOf(run).reason).toBe('EtcdUnavailable');
    expect(readdirSync(out)).toEqual([]);
  });

  it('a file destination whose folder is missing: DestinationUnavailable', async () => {
    const run = await runAgent(
      ['snapshot', '--endpoint', etcd.clientUrl, '--file', join(dir, 'no', 'such', 'dir', 'x.db')],
      resultFile(),
    );
    expect(failureOf(run).reason).toBe('DestinationUnavailable');
  });

  it('bad flags: InvalidArguments in the result file, exit 1', async () => {
    const run = await runAgent(['snapshot', '--endpoint', etcd.clientUrl, '--bogus'], resultFile());
    const failure = failureOf(run);
    expect(failure.reason).toBe('InvalidArguments');
    expect(failure.message).toContain('--bogus');
    expect(run.stderr).toContain('usage:');
  });
});

describe('a stream that breaks mid-upload', () => {
  let big: EtcdMember;
  let bigClient: Etcd3;

  beforeAll(async () => {
    const bigDir = join(dir, 'big');
    mkdirSync(bigDir);
    big = await startEtcd({ name: 'big', dataDir: join(bigDir, 'data'), logFile: join(dir, 'etcd-big.log') });
    bigClient = new Etcd3({ hosts: big.clientUrl });
    // ~24 MiB of incompressible values: three 8 MiB upload parts.
    for (let i = 0; i < 24; i++) await bigClient.put(`agent-e2e/big/${i}`).value(randomBytes(1024 * 1024));
  });

  afterAll(async () => {
    bigClient?.close();
    await big?.process.stop();
  });

  it('etcd gone after the multipart upload began: EtcdUnavailable, the upload aborted, no object', async () => {
    // Hold the stream after 12 MiB, so the cut is placed while the multipart upload is open, not timed.
    const proxy = await holdingProxy(big.clientUrl, 12 * 1024 * 1024);
    try {
      const running = runAgent(
        ['snapshot', '--endpoint', proxy.url, ...s3Flags('e2e/broken.db')],
        resultFile(),
        {
          env: credentials(),
        },
      );
      await untilUploadStarted();
      proxy.cut();
      const failure = failureOf(await running);
      expect(failure.reason).toBe('EtcdUnavailable');
      expect(await objectKeys()).not.toContain('e2e/broken.db');
      expect(await pendingUploads()).toEqual([]);
    } finally {
      await proxy.close();
    }
  });

  it('SIGTERM during an upload: the result is written, the upload aborted, no object', async () => {
    // Hold the stream after 12 MiB so the signal lands while the multipart upload is open.
    const proxy = await holdingProxy(big.clientUrl, 12 * 1024 * 1024);
    try {
      let pid = 0;
      const running = runAgent(
        ['snapshot', '--endpoint', proxy.url, ...s3Flags('e2e/terminated.db')],
        resultFile(),
        {
          env: credentials(),
          onSpawn: (p) => (pid = p),
        },
      );
      await untilUploadStarted();
      process.kill(pid, 'SIGTERM');
      const failure = failureOf(await running);
      expect(failure.reason).toBe('DestinationUnavailable');
      expect(failure.message).toMatch(/stopped by SIGTERM/);
      expect(await objectKeys()).not.toContain('e2e/terminated.db');
      expect(await pendingUploads()).toEqual([]);
    } finally {
      await proxy.close();
    }
  });

  it('a snapshot larger than one part uploads as multipart and stays whole', async () => {
    const run = await runAgent(
      ['snapshot', '--endpoint', big.clientUrl, ...s3Flags('e2e/big.db')],
      resultFile(),
      {
        env: credentials(),
      },
    );
    expect(run.code).toBe(0);
    const result = parseAgentResult(run.resultText);
    if (!result.ok || !('artifact' in result)) throw new Error(run.resultText);
    const bytes = await download('e2e/big.db');
    expect(result.artifact.size).toBeGreaterThan(24 * 1024 * 1024);
    expect(bytes.length).toBe(result.artifact.size);
    expect(sha256(bytes)).toBe(result.artifact.sha256);
  });
});

describe('restore', () => {
  let artifact: SnapshotArtifact;
  const restoreFlags = (dataDir: string, peerUrl: string) => [
    '--data-dir',
    dataDir,
    '--name',
    'restored',
    '--initial-cluster',
    `restored=${peerUrl}`,
    '--initial-advertise-peer-urls',
    peerUrl,
    '--initial-cluster-token',
    'agent-e2e-restored',
  ];

  beforeAll(async () => {
    artifact = await snapshotToS3('e2e/for-restore.db');
  });

  it('from S3 into a new data dir: etcd starts on it with the same keys and values, revision bumped past the snapshot', async () => {
    const volume = join(dir, 'volume-1');
    mkdirSync(volume);
    const dataDir = join(volume, 'data');
    const peerPort = await freePort();
    const peerUrl = `http://${HOST}:${peerPort}`;
    const run = await runAgent(
      [
        'restore',
        ...s3Flags('e2e/for-restore.db'),
        '--sha256',
        artifact.sha256,
        ...restoreFlags(dataDir, peerUrl),
      ],
      resultFile(),
      { env: credentials() },
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    // The revision is what etcdutl snapshot status read from the snapshot: the one the snapshot was taken at.
    expect(parseAgentResult(run.resultText)).toEqual({
      ok: true,
      restored: true,
      revision: artifact.revision,
      sha256: artifact.sha256,
      size: artifact.size,
    });
    expect(readdirSync(volume)).toEqual(['data']);

    const restored = await startEtcd({
      name: 'restored',
      dataDir,
      peerPort,
      initialClusterToken: 'agent-e2e-restored',
      logFile: join(dir, 'etcd-restored.log'),
    });
    const restoredClient = new Etcd3({ hosts: restored.clientUrl });
    try {
      const got = await restoredClient.getAll().prefix('agent-e2e/').strings();
      expect(got).toEqual(KEYS);
      expect(await currentRevision(restoredClient)).toBeGreaterThanOrEqual(artifact.revision + 1_000_000_000);
    } finally {
      restoredClient.close();
      await restored.process.stop();
    }

    // Idempotent: the init container may run again (Pod restart); the member's data is kept as is, and a
    // download left by a run that crashed after its rename is cleared.
    writeFileSync(`${dataDir}.snapshot`, 'left by a crashed run');
    const again = await runAgent(
      [
        'restore',
        ...s3Flags('e2e/for-restore.db'),
        '--sha256',
        artifact.sha256,
        ...restoreFlags(dataDir, peerUrl),
      ],
      resultFile(),
      { env: credentials() },
    );
    expect(again.code).toBe(0);
    expect(parseAgentResult(again.resultText)).toEqual({ ok: true, restored: false });
    expect(readdirSync(volume)).toEqual(['data']);
  });

  it('from a file, into a data dir that exists but is empty', async () => {
    const file = join(dir, 'from-file.db');
    const bytes = await download('e2e/for-restore.db');
    writeFileSync(file, bytes);
    const volume = join(dir, 'volume-2');
    mkdirSync(join(volume, 'data'), { recursive: true });
    const run = await runAgent(
      [
        'restore',
        '--file',
        file,
        '--sha256',
        artifact.sha256.toUpperCase(),
        ...restoreFlags(join(volume, 'data'), `http://${HOST}:2380`),
      ],
      resultFile(),
    );
    expect(run.code).toBe(0);
    expect(parseAgentResult(run.resultText)).toMatchObject({ restored: true, sha256: artifact.sha256 });
    expect(existsSync(join(volume, 'data', 'member', 'snap', 'db'))).toBe(true);
    expect(readdirSync(volume)).toEqual(['data']);
  });

  it('a wrong --sha256: ChecksumMismatch, no data dir and no temp file', async () => {
    const volume = join(dir, 'volume-3');
    mkdirSync(volume);
    const wrong = artifact.sha256.replace(/^./, (c) => (c === '0' ? '1' : '0'));
    const run = await runAgent(
      [
        'restore',
        ...s3Flags('e2e/for-restore.db'),
        '--sha256',
        wrong,
        ...restoreFlags(join(volume, 'data'), `http://${HOST}:2380`),
      ],
      resultFile(),
      { env: credentials() },
    );
    const failure = failureOf(run);
    expect(failure.reason).toBe('ChecksumMismatch');
    expect(failure.message).toContain(artifact.sha256);
    expect(failure.message).toContain(wrong);
    expect(readdirSync(volume)).toEqual([]);
  });

  it('bytes flipped in the stored object: ChecksumMismatch, no data dir', async () => {
    const bytes = await download('e2e/for-restore.db');
    const flipped = Buffer.from(bytes);
    flipped[4096] = flipped[4096]! ^ 0xff;
    await minio.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'e2e/flipped.db', Body: flipped }));
    const volume = join(dir, 'volume-4');
    mkdirSync(volume);
    const run = await runAgent(
      [
        'restore',
        ...s3Flags('e2e/flipped.db'),
        '--sha256',
        artifact.sha256,
        ...restoreFlags(join(volume, 'data'), `http://${HOST}:2380`),
      ],
      resultFile(),
      { env: credentials() },
    );
    expect(failureOf(run).reason).toBe('ChecksumMismatch');
    expect(readdirSync(volume)).toEqual([]);
  });

  it("a damaged snapshot whose --sha256 matches it: refused by etcdutl's own check, ChecksumMismatch, no data dir", async () => {
    const damaged = Buffer.from(await download('e2e/for-restore.db'));
    damaged[4096] = damaged[4096]! ^ 0xff;
    const file = join(dir, 'damaged.db');
    writeFileSync(file, damaged);
    const volume = join(dir, 'volume-7');
    mkdirSync(volume);
    const run = await runAgent(
      [
        'restore',
        '--file',
        file,
        '--sha256',
        sha256(damaged),
        ...restoreFlags(join(volume, 'data'), `http://${HOST}:2380`),
      ],
      resultFile(),
    );
    const failure = failureOf(run);
    expect(failure.reason).toBe('ChecksumMismatch');
    expect(failure.message).toMatch(/etcdutl snapshot restore failed .*expected sha256/);
    expect(readdirSync(volume)).toEqual([]);
  });

  it('a missing object: SourceNotFound; a missing file: SourceNotFound', async () => {
    const volume = join(dir, 'volume-5');
    mkdirSync(volume);
    const flags = restoreFlags(join(volume, 'data'), `http://${HOST}:2380`);
    const fromS3 = await runAgent(
      ['restore', ...s3Flags('e2e/never-written.db'), '--sha256', artifact.sha256, ...flags],
      resultFile(),
      { env: credentials() },
    );
    expect(failureOf(fromS3).reason).toBe('SourceNotFound');
    const fromFile = await runAgent(
      ['restore', '--file', join(dir, 'never-written.db'), '--sha256', artifact.sha256, ...flags],
      resultFile(),
    );
    expect(failureOf(fromFile).reason).toBe('SourceNotFound');
    expect(readdirSync(volume)).toEqual([]);
  });

  it('a data dir holding something else: DestinationUnavailable, left untouched', async () => {
    const volume = join(dir, 'volume-6');
    mkdirSync(join(volume, 'data'), { recursive: true });
    writeFileSync(join(volume, 'data', 'unrelated.txt'), 'keep me');
    const run = await runAgent(
      [
        'restore',
        ...s3Flags('e2e/for-restore.db'),
        '--sha256',
        artifact.sha256,
        ...restoreFlags(join(volume, 'data'), `http://${HOST}:2380`),
      ],
      resultFile(),
      { env: credentials() },
    );
    const failure = failureOf(run);
    expect(failure.reason).toBe('DestinationUnavailable');
    expect(failure.message).toMatch(/not empty/);
    expect(readdirSync(join(volume, 'data'))).toEqual(['unrelated.txt']);
  });
});
