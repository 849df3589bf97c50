// `etcd-conductor archive`: the continuous backup. Keeps a chain in the store (a full snapshot, then every change from an
// etcd watch in chunks uploaded at most maxLag after the change), starts a new chain with a new full snapshot at least
// every fullSnapshotInterval, and after a gap (the watch fell behind a compaction, the store refused writes longer than
// the buffer holds). Its place is read from the store at start, never from local state, so a restarted archiver goes
// on from the last uploaded revision. Invariant: a chunk is written only with whole, contiguous revisions that follow
// the chain's reach, so every chain is a snapshot plus an unbroken run of changes.
import type { Etcd3, IKeyValue, IWatchResponse, Watcher } from 'etcd3';
import { Range } from 'etcd3';
import { describe } from './agent-error';
import type { ArchiveStore } from './archive-store';
import type { FullSnapshot } from './archive-snapshot';
import { encodeChunk } from './change-chunk';
import {
  archiveRoot,
  chainId,
  chainPrefix,
  chainReach,
  chainsOfListing,
  chainsToDelete,
  chunkKey,
  CONTINUOUS_FORMAT,
  manifestKey,
  snapshotKey,
  stateKey,
  type ArchiveGap,
  type ArchiveState,
  type ArchivedChange,
  type ChainManifest,
} from '../contracts/continuous-backup';

export interface ArchiverSettings {
  clusterUid: string;
  /** The destination's key prefix; the archive lives under <prefix>/continuous/<uid>/. */
  prefix: string;
  fullSnapshotIntervalMs: number;
  maxLagMs: number;
  retentionMs: number;
  /** Changes waiting for a store that refuses them, in bytes, past which they are dropped and a gap recorded. */
  maxBufferBytes: number;
  /** A chunk is cut early when it reaches this size. */
  chunkBytes: number;
  /** While nothing changes, the state object is rewritten this often, so its latestTime says the archive is current. */
  stateRefreshMs: number;
  /** How often the loop looks at the buffer, the clock and the store. */
  tickMs: number;
}

export const ARCHIVER_DEFAULTS = {
  maxBufferBytes: 64 * 1024 * 1024,
  chunkBytes: 4 * 1024 * 1024,
  stateRefreshMs: 30_000,
  tickMs: 200,
} as const;

export interface ArchiverDeps {
  store: ArchiveStore;
  /** One client for the watch and the revision probe. */
  etcd: Etcd3;
  fullSnapshot(signal: AbortSignal): Promise<FullSnapshot>;
  now(): number;
  log(line: string): void;
}

interface CurrentChain {
  chain: string;
  snapshotRevision: number;
  startedAt: number;
}

/** A reason to leave the watch loop and start a new chain. */
class GapError extends Error {
  constructor(
    readonly reason: ArchiveGap['reason'],
    message: string,
  ) {
    super(message);
  }
}

const iso = (ms: number) => new Date(ms).toISOString();
const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

const COMPACTED = /compacted/i;
/** While nothing waits, etcd is asked this often whether it holds anything newer than the store. */
const PROBE_EVERY_MS = 1000;
const ALL_KEYS = new Range(Buffer.from([0]), Buffer.from([0]));

function changeOf(type: 'put' | 'delete', kv: IKeyValue, receivedAt: string): ArchivedChange {
  return {
    type,
    key: kv.key.toString('base64'),
    ...(type === 'put' ? { value: kv.value.toString('base64') } : {}),
    revision: Number(kv.mod_revision),
    createRevision: Number(kv.create_revision),
    version: Number(kv.version),
    lease: kv.lease === undefined || kv.lease === '' ? '0' : String(kv.lease),
    receivedAt,
  };
}

const sizeOf = (c: ArchivedChange) => c.key.length + (c.value?.length ?? 0) + 160;

export class Archiver {
  private readonly root: string;
  private chain: CurrentChain | undefined;
  /** The last revision safe in the store, in the current chain. */
  private uploaded = 0;
  /** Changes after `uploaded`, whole revisions, in order. */
  private buffer: ArchivedChange[] = [];
  private bufferBytes = 0;
  private gaps: ArchiveGap[] = [];
  /** When the store first refused the current buffer; cleared by a successful write. */
  private storeFailingSince: number | undefined;
  /** Revision and time the archive was last known to hold everything etcd had. */
  private latest: { revision: number; time: number } | undefined;
  private lastStateWrite = { revision: -1, time: 0 };
  private lastProbe = 0;
  /** The scheduled snapshot's upload, awaited before run() returns so nothing outlives the archiver. */
  private rolloverTask: Promise<unknown> | undefined;
  /** A scheduled full snapshot under way: the changes uploaded since it began, kept to start the new chain. */
  private rollover:
    | { done?: { chain: CurrentChain; revision: number }; failed?: unknown; tail: ArchivedChange[] }
    | undefined;

  constructor(
    private readonly settings: ArchiverSettings,
    private readonly deps: ArchiverDeps,
  ) {
    this.root = archiveRoot(settings.prefix, settings.clusterUid);
  }

  /** For tests and logs: the current chain and place. */
  get place(): { chain?: string; uploaded: number; gaps: ArchiveGap[] } {
    return { chain: this.chain?.chain, uploaded: this.uploaded, gaps: [...this.gaps] };
  }

  /** Runs until `signal` aborts; every failure is logged and retried, none ends the loop. */
  async run(signal: AbortSignal): Promise<void> {
    let pendingGap: Omit<ArchiveGap, 'beforeRevision' | 'beforeTime'> | undefined;
    let backoff = 1000;
    while (!signal.aborted) {
      try {
        if (!this.chain) await this.resume();
        if (!this.chain || pendingGap) {
          await this.startChain(pendingGap ? 'gap' : 'first', pendingGap, signal);
          pendingGap = undefined;
        }
        await this.follow(signal);
        backoff = 1000;
      } catch (e) {
        if (signal.aborted) break;
        if (e instanceof GapError) {
          this.deps.log(`gap: ${e.message}; starting a new chain with a full snapshot`);
          pendingGap ??= {
            afterRevision: this.uploaded,
            afterTime: iso(this.latest?.time ?? this.deps.now()),
            reason: e.reason,
          };
          this.dropBuffer();
          continue;
        }
        this.deps.log(`archive: ${describe(e)}; retrying in ${backoff / 1000}s`);
        await sleep(backoff, signal);
        backoff = Math.min(backoff * 2, 30_000);
      }
    }
    await this.rolloverTask;
  }

  /** Reads the place from the store: the newest complete chain and how far its chunks reach; the recorded gaps. */
  async resume(): Promise<void> {
    const chains = chainsOfListing(this.root, await this.deps.store.list(this.root));
    const state = await this.readState();
    this.gaps = state?.gaps ?? [];
    const newest = chains.filter((c) => c.complete).pop();
    if (!newest) return;
    const reach = chainReach(newest);
    this.chain = {
      chain: newest.chain,
      snapshotRevision: newest.snapshotRevision,
      startedAt: Date.parse(newest.snapshotTime),
    };
    this.uploaded = reach.to;
    this.latest =
      state && state.chain === newest.chain && state.latestRevision <= reach.to
        ? { revision: state.latestRevision, time: Date.parse(state.latestTime) }
        : undefined;
    this.deps.log(`resuming chain ${newest.chain} after revision ${reach.to}`);
  }

  private async readState(): Promise<ArchiveState | undefined> {
    const bytes = await this.deps.store.get(stateKey(this.root));
    if (!bytes) return undefined;
    try {
      const s = JSON.parse(bytes.toString('utf8')) as ArchiveState;
      return s.format === CONTINUOUS_FORMAT && s.clusterUid === this.settings.clusterUid ? s : undefined;
    } catch {
      return undefined;
    }
  }

  /** Takes and uploads a full snapshot, then its manifest: from then on the chain exists. */
  private async uploadChain(
    cause: ChainManifest['cause'],
    signal: AbortSignal,
  ): Promise<{ chain: CurrentChain; snapshot: FullSnapshot }> {
    const snapshot = await this.deps.fullSnapshot(signal);
    try {
      const chain = chainId(snapshot.revision, snapshot.takenAt);
      await this.deps.store.putFile(snapshotKey(this.root, chain), snapshot.path);
      const manifest: ChainManifest = {
        format: CONTINUOUS_FORMAT,
        clusterUid: this.settings.clusterUid,
        chain,
        snapshotRevision: snapshot.revision,
        snapshotTime: snapshot.takenAt,
        snapshotSha256: snapshot.sha256,
        snapshotSize: snapshot.size,
        etcdVersion: snapshot.etcdVersion,
        cause,
      };
      await this.deps.store.put(manifestKey(this.root, chain), Buffer.from(`${JSON.stringify(manifest)}\n`));
      this.deps.log(
        `chain ${chain} started (${cause}): full snapshot at revision ${snapshot.revision}, ${snapshot.size} bytes`,
      );
      return {
        chain: { chain, snapshotRevision: snapshot.revision, startedAt: Date.parse(snapshot.takenAt) },
        snapshot,
      };
    } finally {
      await snapshot.discard();
    }
  }

  private async startChain(
    cause: ChainManifest['cause'],
    gap: Omit<ArchiveGap, 'beforeRevision' | 'beforeTime'> | undefined,
    signal: AbortSignal,
  ): Promise<void> {
    const { chain, snapshot } = await this.uploadChain(cause, signal);
    this.chain = chain;
    this.uploaded = snapshot.revision;
    this.latest = { revision: snapshot.revision, time: Date.parse(snapshot.takenAt) };
    if (gap) this.gaps.push({ ...gap, beforeRevision: snapshot.revision, beforeTime: snapshot.takenAt });
    await this.applyRetention();
    await this.writeState(true);
  }

  /** Watches from the place and uploads; returns only by throwing (a gap, a lost watch) or when `signal` aborts. */
  private async follow(signal: AbortSignal): Promise<void> {
    const from = this.nextRevision();
    let failure: unknown;
    let expected = from;
    let watcher: Watcher;
    try {
      watcher = await this.deps.etcd.watch().inRange(ALL_KEYS).startRevision(String(from)).create();
    } catch (e) {
      throw (await this.compacted(from)) ? new GapError('compacted', `revision ${from} was compacted`) : e;
    }
    const onData = (res: IWatchResponse) => {
      if (failure) return;
      const receivedAt = iso(this.deps.now());
      for (const ev of res.events) {
        const change = changeOf(ev.type === 'Delete' ? 'delete' : 'put', ev.kv, receivedAt);
        // A watch over every key sees every revision; one missing means this watch cannot be trusted.
        if (change.revision !== expected && change.revision !== expected - 1) {
          failure = new Error(`the watch skipped from revision ${expected - 1} to ${change.revision}`);
          return;
        }
        expected = change.revision + 1;
        this.buffer.push(change);
        this.bufferBytes += sizeOf(change);
      }
    };
    // etcd3 would reconnect by itself from the last header revision, which can lie past changes not yet delivered:
    // a lost connection ends this watch instead, and the next one starts from the archiver's own place.
    const onLost = (e: unknown) => (failure ??= e ?? new Error('the watch ended'));
    watcher.on('data', onData);
    watcher.on('disconnected', onLost);
    watcher.on('error', onLost);
    watcher.on('end', () => onLost(new Error('the watch ended')));
    try {
      while (!signal.aborted) {
        if (failure) break;
        await this.tick(signal);
        await sleep(this.settings.tickMs, signal);
      }
    } finally {
      watcher.removeAllListeners();
      await watcher.cancel().catch(() => undefined);
    }
    if (failure && !signal.aborted) {
      const next = this.nextRevision();
      if (await this.compacted(next))
        throw new GapError('compacted', `revision ${next} was compacted before the archiver saw it`);
      throw failure;
    }
  }

  /** A canceled watch says nothing of why (etcd3 drops the compact revision); a read at the revision does. */
  private compacted(revision: number): Promise<boolean> {
    return this.deps.etcd.kv
      .range({ key: Buffer.from([0]), revision: String(revision), limit: '1', keys_only: true })
      .then(
        () => false,
        (e: unknown) => COMPACTED.test(describe(e)),
      );
  }

  private nextRevision(): number {
    const last = this.buffer[this.buffer.length - 1];
    return (last ? last.revision : this.uploaded) + 1;
  }

  /** One look at everything: a finished rollover, a due flush, a due full snapshot, a due state refresh. */
  private async tick(signal: AbortSignal): Promise<void> {
    const now = this.deps.now();
    if (this.rollover?.done) await this.switchChain(this.rollover.done);
    else if (this.rollover?.failed) {
      this.deps.log(`scheduled full snapshot failed: ${describe(this.rollover.failed)}; the chain goes on`);
      this.rollover = undefined;
    }
    const oldest = this.buffer[0];
    // Half the lag budget waiting for more changes, half for the upload.
    const due =
      oldest !== undefined &&
      (now - Date.parse(oldest.receivedAt) >= this.settings.maxLagMs / 2 ||
        this.bufferBytes >= this.settings.chunkBytes);
    if (due) await this.flush(now);
    else if (oldest === undefined && now - this.lastProbe >= PROBE_EVERY_MS) await this.probeCurrent();
    if (!this.rollover && this.chain && now - this.chain.startedAt >= this.settings.fullSnapshotIntervalMs)
      this.startRollover(signal);
    await this.writeState(false);
  }

  /** Uploads the buffer as chunks of whole revisions; a refusing store keeps it, until it grows past its bound. */
  private async flush(now: number): Promise<void> {
    while (this.buffer.length > 0) {
      const cut = this.cutChunk();
      try {
        await this.putChunk(this.chain!, cut);
      } catch (e) {
        this.storeFailingSince ??= now;
        if (this.bufferBytes > this.settings.maxBufferBytes)
          throw new GapError(
            'store',
            `the store refused writes since ${iso(this.storeFailingSince)} and ${this.bufferBytes} bytes of changes are waiting: ${describe(e)}`,
          );
        this.deps.log(
          `store refused chunk ${cut[0]!.revision}..${cut[cut.length - 1]!.revision}: ${describe(e)}; keeping it`,
        );
        return;
      }
      this.storeFailingSince = undefined;
      this.buffer.splice(0, cut.length);
      this.bufferBytes -= cut.reduce((n, c) => n + sizeOf(c), 0);
      const last = cut[cut.length - 1]!;
      this.uploaded = last.revision;
      // Everything the watch had delivered by then is safe: the last change's arrival is the time the store reaches.
      this.latest = { revision: this.uploaded, time: Date.parse(last.receivedAt) };
      this.rollover?.tail.push(...cut);
    }
  }

  /** The buffer's head up to chunkBytes, never splitting a revision. */
  private cutChunk(): ArchivedChange[] {
    let bytes = 0;
    let end = 0;
    while (end < this.buffer.length) {
      const c = this.buffer[end]!;
      const sameRevision = end > 0 && this.buffer[end - 1]!.revision === c.revision;
      if (!sameRevision && end > 0 && bytes + sizeOf(c) > this.settings.chunkBytes) break;
      bytes += sizeOf(c);
      end++;
    }
    return this.buffer.slice(0, end);
  }

  private async putChunk(chain: CurrentChain, changes: ArchivedChange[]): Promise<void> {
    const { bytes, header } = encodeChunk(
      { clusterUid: this.settings.clusterUid, chain: chain.chain, closedAt: iso(this.deps.now()) },
      changes,
    );
    await this.deps.store.put(chunkKey(this.root, chain.chain, header.first, header.last), bytes);
  }

  /** Nothing waiting: if etcd holds nothing newer than the store, the archive is current as of now. */
  private async probeCurrent(): Promise<void> {
    const asked = this.deps.now();
    this.lastProbe = asked;
    const res = await this.deps.etcd.kv.range({
      key: Buffer.from([0]),
      limit: '1',
      keys_only: true,
      count_only: true,
    });
    if (Number(res.header.revision) <= this.uploaded && this.buffer.length === 0)
      this.latest = { revision: this.uploaded, time: asked };
  }

  private startRollover(signal: AbortSignal): void {
    const rollover: NonNullable<Archiver['rollover']> = { tail: [] };
    this.rollover = rollover;
    this.rolloverTask = this.uploadChain('scheduled', signal).then(
      ({ chain, snapshot }) => (rollover.done = { chain, revision: snapshot.revision }),
      (e: unknown) => (rollover.failed = e),
    );
  }

  /**
   * The new chain begins at its snapshot's revision S: what is waiting up to S still goes to the old chain (so its
   * reach touches the new snapshot), and what came after S, uploaded to the old chain meanwhile or still waiting, is
   * the new chain's first changes.
   */
  private async switchChain(done: { chain: CurrentChain; revision: number }): Promise<void> {
    const S = done.revision;
    const oldPart = this.buffer.filter((c) => c.revision <= S);
    if (oldPart.length > 0) await this.putChunk(this.chain!, oldPart);
    const carried = [...this.rollover!.tail, ...this.buffer].filter((c) => c.revision > S);
    this.chain = done.chain;
    this.uploaded = S;
    this.buffer = carried;
    this.bufferBytes = carried.reduce((n, c) => n + sizeOf(c), 0);
    this.rollover = undefined;
    await this.applyRetention();
    await this.writeState(true);
  }

  private dropBuffer(): void {
    this.buffer = [];
    this.bufferBytes = 0;
    this.rollover = undefined;
  }

  /** Deletes whole chains older than the retention window that no kept point needs, and the gaps before them. */
  private async applyRetention(): Promise<void> {
    const chains = chainsOfListing(this.root, await this.deps.store.list(this.root));
    const keepFrom = iso(this.deps.now() - this.settings.retentionMs);
    const doomed = new Set(chainsToDelete(chains, keepFrom));
    for (const chain of doomed) {
      const keys = await this.deps.store.list(chainPrefix(this.root, chain));
      // The manifest first: a chain without one is never used, so a deletion cut short leaves nothing usable half-gone.
      const manifest = manifestKey(this.root, chain);
      await this.deps.store.delete(keys.filter((k) => k === manifest));
      await this.deps.store.delete(keys.filter((k) => k !== manifest));
      this.deps.log(`retention: deleted chain ${chain} (${keys.length} objects)`);
    }
    const oldestKept = chains.filter((c) => c.complete && !doomed.has(c.chain))[0];
    if (oldestKept) this.gaps = this.gaps.filter((g) => g.beforeRevision > oldestKept.snapshotRevision);
  }

  /** The state object, rewritten when the place moved or, while idle, every stateRefreshMs. */
  private async writeState(force: boolean): Promise<void> {
    if (!this.chain || !this.latest) return;
    const moved = this.latest.revision !== this.lastStateWrite.revision;
    const stale = this.latest.time - this.lastStateWrite.time >= this.settings.stateRefreshMs;
    if (!force && !moved && !stale) return;
    const state: ArchiveState = {
      format: CONTINUOUS_FORMAT,
      clusterUid: this.settings.clusterUid,
      chain: this.chain.chain,
      latestRevision: this.latest.revision,
      latestTime: iso(this.latest.time),
      gaps: this.gaps,
    };
    try {
      await this.deps.store.put(stateKey(this.root), Buffer.from(`${JSON.stringify(state)}\n`));
      this.lastStateWrite = { ...this.latest };
    } catch (e) {
      // The chunks are what counts; the state is retried on the next tick.
      this.deps.log(`state not written: ${describe(e)}`);
    }
  }
}
