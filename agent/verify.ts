// `etcd-conductor verify`: reads a stored snapshot back, checks its bytes against the sha256 its upload measured,
// lets etcdutl check and restore it into the work dir, starts a throwaway single-member etcd on loopback only, and
// reports the revision, the live key count and hashkv it serves; the etcd is stopped and the work dir emptied after.
//
// Invariant: nothing here talks to the source cluster; the only etcd it reaches is the one it started itself.
import { noop } from 'cockatiel';
import { Etcd3 } from 'etcd3';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { AgentError, describe } from './agent-error';
import { defaultUri, type VerifyArgs } from './args';
import { hashKV } from './etcd-hashkv';
import { download } from './restore';
import { AgentFailureReasons, type VerifySuccess } from '../contracts/agent-result';

/** How long the restored etcd may take to answer; a large database takes a while to open. */
export const ETCD_START_TIMEOUT_MS = 120_000;
const CALL_TIMEOUT_MS = 30_000;
const LOOPBACK = '127.0.0.1';
const MEMBER = 'verify';

/** Where the verifier keeps its files inside the work dir. */
export const verifyPaths = (workDir: string) => ({
  download: join(workDir, 'snapshot.db'),
  dataDir: join(workDir, 'data'),
});

/** etcdutl's own integrity check (the hash etcd appends to a snapshot) or a database it cannot read. */
const NO_SPACE = /no space left on device/i;

function corrupt(message: string): AgentError {
  return new AgentError(AgentFailureReasons.SnapshotCorrupt, message);
}

/**
 * How long one etcdutl run may take: a minute, plus a second for every 16 MB of snapshot. A damaged database can
 * send bbolt round a loop of pages; the bound turns that into SnapshotCorrupt instead of a Job that never ends.
 */
export const etcdutlTimeoutMs = (snapshotBytes: number): number =>
  60_000 + Math.ceil(snapshotBytes / (16 * 1024 * 1024)) * 1000;

/** Runs etcdutl; a failure is the snapshot's fault unless the work dir ran out of space. Also used by the archiver. */
export function etcdutl(
  args: string[],
  env: NodeJS.ProcessEnv,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('etcdutl', args, { stdio: ['ignore', 'pipe', 'pipe'], signal, env });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    let output = '';
    const collect = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-16384);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(
        new AgentError(
          AgentFailureReasons.DestinationUnavailable,
          e.code === 'ENOENT'
            ? 'etcdutl is not on PATH (the image must carry etcd 3.6 etcdutl)'
            : `etcdutl could not run: ${describe(e)}`,
        ),
      );
    });
    child.on('close', (code, sig) => {
      clearTimeout(timer);
      if (code === 0) return resolve(output);
      const last = lastLines(output);
      const what = timedOut
        ? `etcdutl ${args.slice(0, 2).join(' ')} failed: it did not finish within ${timeoutMs / 1000}s: ${last}`
        : `etcdutl ${args.slice(0, 2).join(' ')} failed (${code ?? sig}): ${last}`;
      reject(
        NO_SPACE.test(output)
          ? new AgentError(AgentFailureReasons.DestinationUnavailable, `the work dir is full: ${what}`)
          : corrupt(what),
      );
    });
  });
}

const lastLines = (output: string) =>
  output.trim().split('\n').filter(Boolean).slice(-3).join(' | ') || '(no output)';

/** A port the kernel just handed out on loopback; etcd binds it a moment later. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, LOOPBACK, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('no port'))));
    });
  });
}

export interface RunningEtcd {
  client: Etcd3;
  /** Where it answers clients. */
  clientURL: string;
  /** Resolves when etcd has exited; its last lines of output. */
  exited: Promise<string>;
  stop(): Promise<void>;
}

/** Starts etcd on the restored data dir, listening on loopback only, without fsync (the data is thrown away). */
export function startEtcd(
  dataDir: string,
  clientPort: number,
  peerPort: number,
  env: NodeJS.ProcessEnv,
): RunningEtcd {
  const clientURL = `http://${LOOPBACK}:${clientPort}`;
  const peerURL = `http://${LOOPBACK}:${peerPort}`;
  const child: ChildProcess = spawn(
    'etcd',
    [
      '--name',
      MEMBER,
      '--data-dir',
      dataDir,
      '--listen-client-urls',
      clientURL,
      '--advertise-client-urls',
      clientURL,
      '--listen-peer-urls',
      peerURL,
      '--initial-advertise-peer-urls',
      peerURL,
      '--initial-cluster',
      `${MEMBER}=${peerURL}`,
      '--unsafe-no-fsync',
      '--log-level',
      'warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env },
  );
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-16384);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<string>((resolve) => {
    child.once('error', (e) => resolve(`etcd could not run: ${describe(e)}`));
    child.once('close', (code, sig) => resolve(`etcd exited (${code ?? sig}): ${lastLines(output)}`));
  });
  const client = new Etcd3({
    hosts: clientURL,
    dialTimeout: 5_000,
    faultHandling: { global: noop, host: () => noop },
    defaultCallOptions: () => ({ deadline: Date.now() + CALL_TIMEOUT_MS }),
  });
  return {
    client,
    clientURL,
    exited,
    async stop() {
      client.close();
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

const ALL_KEYS = { key: Buffer.from([0]), range_end: Buffer.from([0]) };

/**
 * `etcdutl snapshot restore` of `snapshot` into `dataDir` as the single member startEtcd runs (MEMBER). Its peer URL,
 * kept in the data, is a free loopback port; the etcd started on it listens wherever startRestoredEtcd tells it, and a
 * single member never dials its own peer URL.
 */
export async function restoreSingleMember(
  snapshot: string,
  dataDir: string,
  env: NodeJS.ProcessEnv,
  signal: AbortSignal,
  timeoutMs: number,
  clusterToken?: string,
): Promise<void> {
  const peerURL = `http://${LOOPBACK}:${await freePort()}`;
  await etcdutl(
    [
      'snapshot',
      'restore',
      snapshot,
      '--data-dir',
      dataDir,
      '--name',
      MEMBER,
      '--initial-cluster',
      `${MEMBER}=${peerURL}`,
      '--initial-advertise-peer-urls',
      peerURL,
      ...(clusterToken ? ['--initial-cluster-token', clusterToken] : []),
    ],
    env,
    signal,
    timeoutMs,
  );
}

/** etcd's words when a port it was given was taken between freePort() and its bind. */
export const PORT_TAKEN = /address already in use/i;

/** The throwaway etcd lost a port race: nothing is wrong with the data; start it again on other ports. */
export class PortTakenError extends Error {
  constructor(readonly exit: string) {
    super(`the etcd restored from the snapshot could not bind its port: ${exit}`);
    this.name = 'PortTakenError';
  }
}

/** Port races tried before a start that keeps finding its ports taken is given up (as not answering). */
export const PORT_ATTEMPTS = 3;

/**
 * Starts etcd on a restored data dir and waits for its first read, on fresh loopback ports each time its start
 * finds a port taken (freePort() hands a port out, etcd binds it a moment later; another process can take it in
 * between): that is a race on this machine, never a property of the snapshot. The restored member's peer URL is
 * kept in its data; it listens wherever it is told, and a single member never dials its own peer URL.
 */
export async function startRestoredEtcd(
  dataDir: string,
  env: NodeJS.ProcessEnv,
  signal: AbortSignal,
  ports: () => Promise<number> = freePort,
): Promise<{ etcd: RunningEtcd; first: { revision: number; keys: number } }> {
  for (let attempt = 1; ; attempt++) {
    const etcd = startEtcd(dataDir, await ports(), await ports(), env);
    try {
      return { etcd, first: await firstRead(etcd, signal) };
    } catch (e) {
      await etcd.stop().catch(() => undefined);
      if (e instanceof PortTakenError && attempt < PORT_ATTEMPTS) continue;
      if (e instanceof PortTakenError)
        throw new AgentError(
          AgentFailureReasons.DestinationUnavailable,
          `${e.message} (${PORT_ATTEMPTS} times, on fresh ports each time)`,
        );
      throw e;
    }
  }
}

/** Waits until the restored etcd serves a read; its count and revision are the first figures. */
export async function firstRead(
  etcd: RunningEtcd,
  signal: AbortSignal,
): Promise<{ revision: number; keys: number }> {
  const deadline = Date.now() + ETCD_START_TIMEOUT_MS;
  let exit: string | undefined;
  void etcd.exited.then((why) => (exit = why));
  let last: unknown;
  while (Date.now() < deadline) {
    if (exit && PORT_TAKEN.test(exit)) throw new PortTakenError(exit);
    if (exit) throw corrupt(`the etcd restored from the snapshot did not start: ${exit}`);
    if (signal.aborted)
      throw new AgentError(
        AgentFailureReasons.DestinationUnavailable,
        `verification stopped by ${String(signal.reason ?? 'a signal')}`,
      );
    try {
      // An etcd that exits is noticed at once, not after the read's deadline (its port may answer for another).
      const res = await Promise.race([
        etcd.client.kv.range({ ...ALL_KEYS, count_only: true }),
        etcd.exited.then(() => undefined),
      ]);
      if (!res) continue;
      return { revision: Number(res.header.revision), keys: Number(res.count) };
    } catch (e) {
      last = e;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  throw corrupt(
    `the etcd restored from the snapshot did not answer within ${ETCD_START_TIMEOUT_MS / 1000}s: ${describe(last)}`,
  );
}

const COMPACTED = /required revision has been compacted/i;

/** hashkv at `wanted`, or at the restored revision when `wanted` is compacted away or beyond it. */
async function hashAt(
  client: Etcd3,
  wanted: number,
  revision: number,
): Promise<{ hashRevision: number; hash: number; compactRevision: number }> {
  const ask = async (rev: number) => {
    const res = await hashKV(client, rev);
    return { hashRevision: rev, hash: res.hash, compactRevision: res.compactRevision };
  };
  const first = Math.min(wanted, revision);
  try {
    return await ask(first);
  } catch (e) {
    if (!COMPACTED.test(describe(e)) || first === revision)
      throw corrupt(`hashkv at revision ${first} failed on the restored etcd: ${describe(e)}`);
    return ask(revision);
  }
}

export async function verifySnapshot(
  args: VerifyArgs,
  env: NodeJS.ProcessEnv,
  signal: AbortSignal = new AbortController().signal,
): Promise<VerifySuccess> {
  const paths = verifyPaths(args.workDir);
  const where = defaultUri(args.source);
  await mkdir(args.workDir, { recursive: true }).catch((e: unknown) => {
    throw new AgentError(
      AgentFailureReasons.DestinationUnavailable,
      `cannot create ${args.workDir}: ${describe(e)}`,
    );
  });
  let etcd: RunningEtcd | undefined;
  try {
    const got = await download(args.source, paths.download, env, signal);
    if (got.sha256 !== args.sha256)
      throw new AgentError(
        AgentFailureReasons.ChecksumMismatch,
        `${where} now has sha256 ${got.sha256} (${got.size} bytes), but its upload measured ${args.sha256}: the stored object was altered or damaged`,
      );
    // Restore first: it checks the sha256 etcd appended to the snapshot before bbolt reads a page, so damage is
    // found by a checksum rather than by walking damaged pages; status then reads every page of what passed it.
    const timeoutMs = etcdutlTimeoutMs(got.size);
    await rm(paths.dataDir, { recursive: true, force: true });
    await restoreSingleMember(paths.download, paths.dataDir, env, signal, timeoutMs, 'etcd-conductor-verify');
    await etcdutl(['snapshot', 'status', paths.download, '-w', 'json'], env, signal, timeoutMs);
    // The download is no longer needed: give its space back before etcd opens the database.
    await rm(paths.download, { force: true });
    const started = await startRestoredEtcd(paths.dataDir, env, signal);
    etcd = started.etcd;
    const { revision, keys } = started.first;
    const hashed = await hashAt(etcd.client, args.hashRevision, revision);
    return {
      ok: true,
      verification: { sha256: got.sha256, size: got.size, revision, keys, ...hashed },
    };
  } catch (e) {
    throw e instanceof AgentError
      ? e
      : new AgentError(
          AgentFailureReasons.DestinationUnavailable,
          `verifying ${where} failed: ${describe(e)}`,
        );
  } finally {
    await etcd?.stop().catch(() => undefined);
    await rm(paths.download, { force: true }).catch(() => undefined);
    await rm(paths.dataDir, { recursive: true, force: true }).catch(() => undefined);
  }
}
