// `etcd-conductor restore-point`'s command line; and, against a real MinIO and a real etcd 3.6, the whole path: the
// archiver writes to S3, restore-point turns the archive at revision R into a member's data dir, and that member
// serves exactly what `get --rev=R` gave on the source, at revision R plus the bump; a second run leaves it alone.
import { Etcd3 } from 'etcd3';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { AgentError } from './agent-error';
import { testArchiver } from '../test/support/test-archiver';
import { S3ArchiveStore } from './archive-store';
import { parseRestorePointArgs, restoreToPoint, type RestorePointArgs } from './restore-point';
import { firstRead, freePort, startEtcd } from './verify';
import { AgentFailureReasons } from '../contracts/agent-result';
import { archiveRoot, chainReach, chainsOfListing } from '../contracts/continuous-backup';
import { binaryPath, cacheRoot, ETCD_TOOLS, MINIO_TOOL } from '../localcluster/tool-cache';
import { startLocalEtcd, type LocalEtcd } from '../test/support/local-etcd';

jest.setTimeout(180_000);

const S3 = [
  '--s3-endpoint',
  'http://127.0.0.1:9000',
  '--s3-bucket',
  'backups',
  '--s3-key',
  'etcd/src',
  '--s3-region',
  'us-east-1',
];
const MEMBER = [
  '--data-dir',
  '/var/lib/etcd/data',
  '--work-dir',
  '/var/lib/etcd/pit',
  '--name',
  'dst-0',
  '--initial-cluster',
  'dst-0=http://dst-0.peer:2380',
  '--initial-advertise-peer-urls',
  'http://dst-0.peer:2380',
  '--initial-cluster-token',
  'tok',
];
const UID = ['--cluster-uid', '0b7e4b1e-7c1f-4f7e-a7a4-1f6c8f3d2a10'];

describe('command line', () => {
  it('parses a revision point', () => {
    expect(parseRestorePointArgs([...S3, ...UID, '--revision', '1200', ...MEMBER])).toMatchObject({
      command: 'restore-point',
      archive: { bucket: 'backups', key: 'etcd/src' },
      clusterUid: '0b7e4b1e-7c1f-4f7e-a7a4-1f6c8f3d2a10',
      point: { revision: 1200 },
      dataDir: '/var/lib/etcd/data',
      workDir: '/var/lib/etcd/pit',
      bumpRevision: 1_000_000_000,
    });
    expect(parseRestorePointArgs([...S3, ...UID, '--newest', ...MEMBER]).point).toBe('newest');
    expect(parseRestorePointArgs([...S3, ...UID, '--time', '2026-11-25T10:32:00Z', ...MEMBER]).point).toEqual(
      {
        time: '2026-11-25T10:32:00Z',
      },
    );
  });

  it.each<[string, string[], RegExp]>([
    [
      'both a revision and newest',
      [...S3, ...UID, '--newest', '--revision', '5', ...MEMBER],
      /exactly one of --revision N, --time RFC3339 or --newest/,
    ],
    ['neither', [...S3, ...UID, ...MEMBER], /exactly one of --revision N, --time RFC3339 or --newest/],
    [
      'a time that is no time',
      [...S3, ...UID, '--time', 'yesterday', ...MEMBER],
      /--time must be an RFC 3339 time/,
    ],
    [
      'a time and a revision',
      [...S3, ...UID, '--time', '2026-11-25T10:32:00Z', '--revision', '5', ...MEMBER],
      /exactly one of/,
    ],
    [
      'a revision of 0',
      [...S3, ...UID, '--revision', '0', ...MEMBER],
      /--revision must be a positive integer/,
    ],
    ['a file source', ['--file', '/x', ...UID, '--newest', ...MEMBER], /in S3 \(--s3-\*\), not --file/],
    [
      'a work dir inside the data dir',
      [
        ...S3,
        ...UID,
        '--newest',
        ...MEMBER.map((a) => (a === '/var/lib/etcd/pit' ? '/var/lib/etcd/data/pit' : a)),
      ],
      /outside --data-dir/,
    ],
    ['no cluster uid', [...S3, '--newest', ...MEMBER], /--cluster-uid is required/],
  ])('refuses %s', (_name, argv, message) => {
    let caught: unknown;
    try {
      parseRestorePointArgs(argv);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(AgentError);
    expect((caught as AgentError).reason).toBe(AgentFailureReasons.InvalidArguments);
    expect((caught as AgentError).message).toMatch(message);
  });
});

describe('through a real MinIO', () => {
  const CLUSTER_UID = '5e0a7c3e-1111-4c55-9a3e-2f0d8e7b1c44';
  const env = {
    PATH: `${dirname(binaryPath(cacheRoot(), ETCD_TOOLS['3.6.16'], 'etcd'))}:${process.env.PATH ?? ''}`,
    AWS_ACCESS_KEY_ID: 'pit-test-user',
    AWS_SECRET_ACCESS_KEY: 'pit-test-secret-0123456789',
  };
  let work: string;
  let minio: ChildProcess;
  let endpoint: string;
  let etcd: LocalEtcd;
  let client: Etcd3;
  let R: number;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'restore-point-test-'));
    const [port, consolePort] = [await freePort(), await freePort()];
    endpoint = `http://127.0.0.1:${port}`;
    minio = spawn(
      binaryPath(cacheRoot(), MINIO_TOOL, 'minio'),
      [
        'server',
        join(work, 'minio'),
        `--address=127.0.0.1:${port}`,
        `--console-address=127.0.0.1:${consolePort}`,
        '--quiet',
      ],
      {
        stdio: 'ignore',
        env: {
          ...process.env,
          MINIO_ROOT_USER: env.AWS_ACCESS_KEY_ID,
          MINIO_ROOT_PASSWORD: env.AWS_SECRET_ACCESS_KEY,
        },
      },
    );
    const s3 = new S3Client({
      endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: env.AWS_SECRET_ACCESS_KEY },
    });
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        await s3.send(new CreateBucketCommand({ Bucket: 'backups' }));
        break;
      } catch (e) {
        if (Date.now() > deadline) throw e;
        await new Promise((r) => setTimeout(r, 300));
      }
    }
    etcd = await startLocalEtcd('restore-point-etcd-');
    client = new Etcd3({ hosts: etcd.url });
    const store = new S3ArchiveStore(s3, 'backups');
    const root = archiveRoot('etcd/src', CLUSTER_UID);
    const reach = async () => {
      const c = chainsOfListing(root, await store.list(root))
        .filter((x) => x.complete)
        .pop();
      return c ? chainReach(c).to : 0;
    };
    const stop = new AbortController();
    const archiver = testArchiver({
      store,
      client,
      etcdUrl: etcd.url,
      workDir: work,
      env,
      clusterUid: CLUSTER_UID,
      prefix: 'etcd/src',
    });
    const running = archiver.run(stop.signal);
    const until = async (f: () => Promise<boolean>) => {
      const end = Date.now() + 30_000;
      while (!(await f())) {
        if (Date.now() > end) throw new Error('timed out');
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    await until(async () => (await reach()) > 0);
    for (let i = 0; i < 25; i++) await client.put(`k/${i % 6}`).value(`a${i}`);
    await client.delete().key('k/2');
    R = Number((await client.kv.range({ key: Buffer.from('x') })).header.revision);
    for (let i = 0; i < 10; i++) await client.put(`k/${i % 3}`).value(`b${i}`);
    const newest = Number((await client.kv.range({ key: Buffer.from('x') })).header.revision);
    await until(async () => (await reach()) >= newest);
    stop.abort();
    await running;
    s3.destroy();
  });

  afterAll(() => {
    client?.close();
    etcd?.stop();
    minio?.kill('SIGKILL');
    rmSync(work, { recursive: true, force: true });
  });

  const args = (dataDir: string, point: RestorePointArgs['point'], peerPort = 1): RestorePointArgs => ({
    command: 'restore-point',
    archive: { endpoint, bucket: 'backups', key: 'etcd/src', region: 'us-east-1', forcePathStyle: true },
    clusterUid: CLUSTER_UID,
    point,
    workDir: `${dataDir}-pit`,
    dataDir,
    name: 'verify',
    initialCluster: `verify=http://127.0.0.1:${peerPort}`,
    initialAdvertisePeerUrls: `http://127.0.0.1:${peerPort}`,
    initialClusterToken: 'tok',
    bumpRevision: 1000,
    resultFile: join(work, 'result'),
  });

  it('restores a member data dir at R holding what get --rev=R gave; a second run leaves it alone', async () => {
    const dataDir = join(work, 'member-data');
    const [clientPort, peerPort] = [await freePort(), await freePort()];
    const result = await restoreToPoint(args(dataDir, { revision: R }, peerPort), env);
    expect(result).toMatchObject({ ok: true, restored: true, revision: R });
    expect(result.restored && Number.isNaN(Date.parse(result.time ?? ''))).toBe(false);
    expect(await restoreToPoint(args(dataDir, { revision: R }, peerPort), env)).toEqual({
      ok: true,
      restored: false,
    });

    // The member starts on the peer URL it was restored with, as the seed Pod would.
    const member = startEtcd(dataDir, clientPort, peerPort, env);
    try {
      const { revision } = await firstRead(member, new AbortController().signal);
      expect(revision).toBe(R + 1000);
      const all = { key: Buffer.from([0]), range_end: Buffer.from([0]) };
      const dump = (res: Awaited<ReturnType<Etcd3['kv']['range']>>) =>
        Object.fromEntries(res.kvs.map((kv) => [kv.key.toString(), kv.value.toString()]));
      expect(dump(await member.client.kv.range(all))).toEqual(
        dump(await client.kv.range({ ...all, revision: String(R) })),
      );
    } finally {
      await member.stop();
    }
  });

  it('a cluster uid with no archive is SourceNotFound', async () => {
    const e = await restoreToPoint(
      { ...args(join(work, 'none'), 'newest'), clusterUid: 'no-such-uid' },
      env,
    ).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(AgentError);
    expect((e as AgentError).reason).toBe(AgentFailureReasons.SourceNotFound);
  });
});
