// `etcd-conductor archive`: the continuous backup. Keeps a chain in the store (a full snapshot, then every change from an
// etcd watch in chunks uploaded at most maxLag after the change), starts a new chain with a new full snapshot at least
// every fullSnapshotInterval, and after a gap (the watch fell behind a compaction, the store refused writes longer than
// the buffer holds). Its place is read from the store at start, never from local state, so a restarted archiver goes
// on from the last uploaded revision. Invariant: a chunk is written only with whole, contiguous revisions that follow
// the chain's reach, so every chain is a snapshot plus an unbroken run of changes. What it writes to the store is in
// archive-chains.ts, the changes it holds in change-buffer.ts; this file is the loop and its place.
import type { Etcd3, IWatchResponse, Watcher } from 'etcd3';
import { Range } from 'etcd3';
import { describe } from './agent-error';
import {
  applyRetention,
  iso,
  putChunk,
  readArchiveState,
  uploadChain,
  writeArchiveState,
  type ArchiveAt,
  type CurrentChain,
} from './archive-chains';
import type { ArchiveStore } from './archive-store';
import type { FullSnapshot } from './archive-snapshot';
import { ChangeBuffer, changeOf } from './change-buffer';
import { grantedTtlOf, LeaseLookups } from './lease-lookups';
import {
  archiveRoot,
  chainReach,
  chainsOfListing,
  type ArchiveGap,
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

/** A reason to leave the watch loop and start a new chain. */
class GapError extends Error {
  constructor(
    readonly reason: ArchiveGap['reason'],
    message: string,
  ) {
    super(message);
  }
}

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
/** A lease TTL lookup that gets no answer in this long fails (and is asked again before the chunk goes out). */
const LEASE_LOOKUP_MS = 5000;

export class Archiver {
  private readonly root: string;
  private readonly archive: ArchiveAt;
  private chain: CurrentChain | undefined;
  /** The last revision safe in the store, in the current chain. */
  private uploaded = 0;
  /** Changes after `uploaded`, whole revisions, in order. */
  private readonly buffer = new ChangeBuffer();
  /** Granted TTLs of the leases the changes name, written on the first put naming each before it is uploaded. */
  private readonly leases: LeaseLookups;
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
    this.archive = { store: deps.store, root: this.root, clusterUid: settings.clusterUid };
    this.leases = new LeaseLookups((lease) =>
      deps.etcd.leaseClient
        .leaseTimeToLive({ ID: lease }, { deadline: Date.now() + LEASE_LOOKUP_MS })
        .then(grantedTtlOf),
    );
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
    const state = await readArchiveState(this.archive);
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

  /** Takes a full snapshot and starts a chain with it in the store. */
  private async uploadChain(
    cause: ChainManifest['cause'],
    signal: AbortSignal,
  ): Promise<{ chain: CurrentChain; snapshot: FullSnapshot }> {
    const snapshot = await this.deps.fullSnapshot(signal);
    const chain = await uploadChain(this.archive, snapshot, cause);
    this.deps.log(
      `chain ${chain.chain} started (${cause}): full snapshot at revision ${snapshot.revision}, ${snapshot.size} bytes`,
    );
    return { chain, snapshot };
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
        this.leases.note(change);
        this.buffer.push(change);
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
    return (this.buffer.newest?.revision ?? this.uploaded) + 1;
  }

  /** One look at everything: a finished rollover, a due flush, a due full snapshot, a due state refresh. */
  private async tick(signal: AbortSignal): Promise<void> {
    const now = this.deps.now();
    if (this.rollover?.done) await this.switchChain(this.rollover.done);
    else if (this.rollover?.failed) {
      this.deps.log(`scheduled full snapshot failed: ${describe(this.rollover.failed)}; the chain goes on`);
      this.rollover = undefined;
    }
    const oldest = this.buffer.oldest;
    // Half the lag budget waiting for more changes, half for the upload.
    const due =
      oldest !== undefined &&
      (now - Date.parse(oldest.receivedAt) >= this.settings.maxLagMs / 2 ||
        this.buffer.bytes >= this.settings.chunkBytes);
    if (due) await this.flush(now);
    else if (oldest === undefined && now - this.lastProbe >= PROBE_EVERY_MS) await this.probeCurrent();
    if (!this.rollover && this.chain && now - this.chain.startedAt >= this.settings.fullSnapshotIntervalMs)
      this.startRollover(signal);
    await this.writeState(false);
  }

  /** Uploads the buffer as chunks of whole revisions; a refusing store keeps it, until it grows past its bound. */
  private async flush(now: number): Promise<void> {
    while (this.buffer.length > 0) {
      const cut = this.buffer.head(this.settings.chunkBytes);
      // Outside the try: a failed lookup is etcd's failure, not the store's (the loop retries from its place).
      await this.leases.settle(cut);
      try {
        await this.putChunk(this.chain!, cut);
      } catch (e) {
        this.storeFailingSince ??= now;
        if (this.buffer.bytes > this.settings.maxBufferBytes)
          throw new GapError(
            'store',
            `the store refused writes since ${iso(this.storeFailingSince)} and ${this.buffer.bytes} bytes of changes are waiting: ${describe(e)}`,
          );
        this.deps.log(
          `store refused chunk ${cut[0]!.revision}..${cut[cut.length - 1]!.revision}: ${describe(e)}; keeping it`,
        );
        return;
      }
      this.storeFailingSince = undefined;
      this.buffer.shift(cut.length);
      const last = cut[cut.length - 1]!;
      this.uploaded = last.revision;
      // Everything the watch had delivered by then is safe: the last change's arrival is the time the store reaches.
      this.latest = { revision: this.uploaded, time: Date.parse(last.receivedAt) };
      this.rollover?.tail.push(...cut);
    }
  }

  private putChunk(chain: CurrentChain, changes: ArchivedChange[]): Promise<void> {
    return putChunk(this.archive, chain, changes, iso(this.deps.now()));
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
    const oldPart = this.buffer.all().filter((c) => c.revision <= S);
    await this.leases.settle(oldPart);
    if (oldPart.length > 0) await this.putChunk(this.chain!, oldPart);
    const carried = [...this.rollover!.tail, ...this.buffer.all()].filter((c) => c.revision > S);
    this.chain = done.chain;
    this.uploaded = S;
    this.buffer.replace(carried);
    this.rollover = undefined;
    await this.applyRetention();
    await this.writeState(true);
  }

  private dropBuffer(): void {
    this.buffer.clear();
    this.leases.clear();
    this.rollover = undefined;
  }

  /** Deletes whole chains older than the retention window that no kept point needs, and the gaps before them. */
  private async applyRetention(): Promise<void> {
    const keepFrom = iso(this.deps.now() - this.settings.retentionMs);
    this.gaps = await applyRetention(this.archive, keepFrom, this.gaps, this.deps.log);
  }

  /** The state object, rewritten when the place moved or, while idle, every stateRefreshMs. */
  private async writeState(force: boolean): Promise<void> {
    if (!this.chain || !this.latest) return;
    const moved = this.latest.revision !== this.lastStateWrite.revision;
    const stale = this.latest.time - this.lastStateWrite.time >= this.settings.stateRefreshMs;
    if (!force && !moved && !stale) return;
    try {
      await writeArchiveState(this.archive, {
        chain: this.chain.chain,
        latestRevision: this.latest.revision,
        latestTime: iso(this.latest.time),
        gaps: this.gaps,
      });
      this.lastStateWrite = { ...this.latest };
    } catch (e) {
      // The chunks are what counts; the state is retried on the next tick.
      this.deps.log(`state not written: ${describe(e)}`);
    }
  }
}
