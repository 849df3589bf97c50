// What a writer's run proves, asserted: every acknowledged write is on every member (read from each member itself, once it has applied the highest acknowledged revision), hashKV agrees at one revision, and the longest write gap stays under its bound. The figures go to the test output and to <stack>/availability.log.
import { execFile } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DAEMON_STALLS_FILE, parseStallLog } from '../../localcluster/loop-stalls';
import { memberClientURL, memberClientURLTLS } from '../../crds/names';
import type { Harness } from './cluster-harness';
import { eventually, getCluster } from './cluster-harness';
import { memberLogsAround } from './member-log-window';
import type { MemberCopyCheck, StoredKey } from './write-history';
import { checkMemberCopy, highestAcknowledgedRevision } from './write-history';
import type { WriterReport } from './writer';
import { strictClient } from './writer';

const run = promisify(execFile);

/** A planned operation (scale, roll, rotation, defrag) must never stop writes for a second. */
export const PLANNED_GAP_BOUND_MS = 1000;
/** An injected fault (a member or the leader killed or frozen): a new election and a reconnect, within 5 s. */
export const FAULT_GAP_BOUND_MS = 5000;

export interface MemberCopy extends MemberCopyCheck {
  member: string;
  /** The member's revision when it was read (at least the highest acknowledged one). */
  revision: number;
  keys: number;
}

export interface VerifiedWrites {
  members: MemberCopy[];
  /** The revision every member's hashKV was taken at, and the hash per member. */
  hashRevision: number;
  hashes: Map<string, string>;
}

/** hashKV at `revision` of each endpoint, by etcdctl (3.6, which also asks 3.5 members), keyed by endpoint. */
async function hashKVAt(
  h: Harness,
  endpoints: string[],
  access: WriterReport['access'],
  revision: number,
): Promise<Map<string, string>> {
  const etcdctl = `${Object.values(h.stack.tools.etcdBinDirs).find((d) => d.includes('3.6')) ?? ''}/etcdctl`;
  const dir = mkdtempSync(join(tmpdir(), 'hashkv-'));
  try {
    const flags: string[] = [];
    const creds = access.credentials;
    if (creds) {
      writeFileSync(join(dir, 'ca.crt'), creds.rootCertificate);
      flags.push('--cacert', join(dir, 'ca.crt'));
      if (creds.certChain && creds.privateKey) {
        writeFileSync(join(dir, 'tls.crt'), creds.certChain);
        writeFileSync(join(dir, 'tls.key'), creds.privateKey, { mode: 0o600 });
        flags.push('--cert', join(dir, 'tls.crt'), '--key', join(dir, 'tls.key'));
      }
    }
    if (access.auth) flags.push('--user', `${access.auth.username}:${access.auth.password}`);
    const { stdout } = await run(
      etcdctl,
      [
        '--endpoints',
        endpoints.join(','),
        ...flags,
        '--command-timeout=10s',
        'endpoint',
        'hashkv',
        `--rev=${revision}`,
        '-w',
        'json',
      ],
      { encoding: 'utf8' },
    );
    const rows = JSON.parse(stdout) as { Endpoint: string; HashKV: { hash: number } }[];
    // etcdctl answers in the order of --endpoints, each row naming its endpoint.
    return new Map(
      endpoints.map((e, i) => [
        e,
        String((rows.find((r) => r.Endpoint === e) ?? rows[i])?.HashKV.hash ?? 'none'),
      ]),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The end of a prefix range: the prefix with its last byte raised by one. */
function rangeEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  end[end.length - 1] = (end[end.length - 1] ?? 0) + 1;
  return end;
}

/**
 * Reads the writer's keys from each member's own endpoint, serializably (the member's local state, which is what
 * must hold the data), after that member has applied at least the highest revision any write was acknowledged
 * with: every acknowledged write is at or below it, so a key missing then is lost on that member. Then hashKV on
 * every member at one revision all of them have reached.
 */
export async function verifyWrites(
  h: Harness,
  report: WriterReport,
  input: {
    members?: string[];
    timeoutMs?: number;
    /** Who reads back and takes hashKV (which needs root with auth on), if not the writer's own access. */
    access?: WriterReport['access'];
  } = {},
): Promise<VerifiedWrites> {
  const access = input.access ?? report.access;
  const ref = { namespace: report.namespace, name: report.name };
  const members =
    input.members ??
    ((await getCluster(h, ref.namespace, ref.name)).status?.members ?? []).map((m) => m.name);
  const urlOf = access.credentials ? memberClientURLTLS : memberClientURL;
  const highest = highestAcknowledgedRevision(report.records);
  const prefix = Buffer.from(`${report.prefix}/`);
  const timeoutMs = input.timeoutMs ?? 120_000;
  const withMember = async <T>(member: string, fn: (c: ReturnType<typeof strictClient>) => Promise<T>) => {
    const c = strictClient([urlOf(ref, member)], access, 10_000);
    try {
      return await fn(c);
    } finally {
      c.close();
    }
  };

  const copies: MemberCopy[] = [];
  let lastHashes: { hashRevision: number; hashes: Map<string, string> } | undefined;
  for (const member of members) {
    const copy = await eventually(
      `${member} to have applied revision ${highest} and to answer a read of ${report.prefix}/`,
      () =>
        withMember(member, async (c) => {
          const res = await c.kv.range({ key: prefix, range_end: rangeEnd(prefix), serializable: true });
          const revision = Number(res.header.revision);
          if (revision < highest) return undefined;
          const stored = new Map<string, StoredKey>(
            res.kvs.map((kv) => [
              kv.key.toString(),
              { value: kv.value.toString(), modRevision: Number(kv.mod_revision) },
            ]),
          );
          return { member, revision, keys: stored.size, ...checkMemberCopy(report.records, stored) };
        }),
      timeoutMs,
    );
    copies.push(copy);
  }

  // etcd3's client has no HashKV call (its bundled proto has it, its method table does not): etcdctl does it.
  const { hashRevision, hashes } = await eventually(
    `equal hashKV on ${members.join(', ')} at one revision`,
    async () => {
      const revisions = await Promise.all(
        members.map((m) =>
          withMember(m, async (c) => Number((await c.maintenance.status()).header.revision)),
        ),
      );
      const at = Math.min(...revisions);
      const hs = await hashKVAt(
        h,
        members.map((m) => urlOf(ref, m)),
        access,
        at,
      );
      const byMember = new Map(members.map((m) => [m, hs.get(urlOf(ref, m)) ?? 'none']));
      lastHashes = { hashRevision: at, hashes: byMember };
      return new Set(byMember.values()).size === 1 ? lastHashes : undefined;
    },
    timeoutMs,
  ).catch((err: unknown) => {
    // Hashes that never agreed are returned for the assertion to show; no hash at all is an error of its own.
    if (lastHashes) return lastHashes;
    throw err;
  });
  return { members: copies, hashRevision, hashes };
}

export interface AvailabilityFigures {
  what: string;
  acknowledged: number;
  failed: number;
  longestGapMs: number;
  /** The longest gap on the clock, and how much of it the writer itself was stalled (not counted). */
  longestGapWallMs: number;
  writerStalledMs: number;
  boundMs: number;
  recovered: number;
  members: number;
  hashRevision: number;
  hashesEqual: boolean;
}

/** One line per test, for copying into a table. */
export function describeAvailability(f: AvailabilityFigures): string {
  return (
    `availability | ${f.what} | acknowledged ${f.acknowledged} | failed ${f.failed} | ` +
    `longest gap ${f.longestGapMs} ms (bound ${f.boundMs} ms${f.writerStalledMs > 0 ? `; ${f.longestGapWallMs} ms on the clock, the writer stalled ${f.writerStalledMs} ms of it` : ''}) | recovered ${f.recovered} | ` +
    `${f.members} members, hashkv ${f.hashesEqual ? 'equal' : 'DIFFERENT'} at revision ${f.hashRevision}`
  );
}

/**
 * The stalls of the stack's daemon inside a gap, as lines for the report: a diagnosis, not discounted. The daemon
 * carries the Pods' relays to Temporal and MinIO; Service traffic is forwarded in the nodes' kernels and is not held.
 */
function stackStallsWithin(h: Harness, gap: { from: number; to: number }): string[] {
  let text: string;
  try {
    text = readFileSync(join(h.stack.stateDir, DAEMON_STALLS_FILE), 'utf8');
  } catch {
    return [];
  }
  const inGap = parseStallLog(text).filter((x) => x.to > gap.from && x.from < gap.to);
  return inGap.length === 0
    ? []
    : [
        `  the stack daemon (Service forwarding) stalled in the gap: ${inGap
          .map((x) => `${new Date(x.from).toISOString()} for ${x.to - x.from} ms`)
          .join(', ')}`,
      ];
}

/**
 * The availability assertions of a test that changed a running cluster: nothing acknowledged lost (on any
 * member), nothing changed or invented, hashKV equal, and the longest gap between acknowledged writes (less the
 * writer's own stalls, printed beside it) under `boundMs` (PLANNED_GAP_BOUND_MS or FAULT_GAP_BOUND_MS). Prints the figures before asserting, so they are in the
 * output whether the test passes or not.
 */
export async function expectAvailability(
  h: Harness,
  report: WriterReport,
  input: { what: string; boundMs: number; members?: string[]; access?: WriterReport['access'] },
): Promise<AvailabilityFigures> {
  const verified = await verifyWrites(h, report, input);
  const { figures } = report;
  const result: AvailabilityFigures = {
    what: input.what,
    acknowledged: figures.acknowledged,
    failed: figures.failed,
    longestGapMs: figures.longestGap.ms,
    longestGapWallMs: figures.longestGap.wallMs,
    writerStalledMs: figures.longestGap.stalledMs,
    boundMs: input.boundMs,
    recovered: Math.max(0, ...verified.members.map((m) => m.recovered)),
    members: verified.members.length,
    hashRevision: verified.hashRevision,
    hashesEqual:
      [...verified.hashes.values()].every((x) => /^\d+$/.test(x)) &&
      new Set(verified.hashes.values()).size === 1,
  };
  const line = describeAvailability(result);
  const gapAt = `longest gap from ${new Date(figures.longestGap.from).toISOString()} to ${new Date(figures.longestGap.to).toISOString()}`;
  // The failed writes, when and why (at most 10): what a gap over its bound is made of.
  const failures = report.records
    .filter((r) => !r.ok)
    .slice(0, 10)
    .map(
      (r) =>
        `  failed ${new Date(r.startedAt).toISOString()} after ${r.endedAt - r.startedAt} ms: ${(r.error ?? '').slice(0, 160)}`,
    );
  const stalls =
    report.stalls.length > 0
      ? [
          `  the writer's own process stalled ${report.stalls.length} times, longest ${figures.longestStallMs} ms (not counted in gaps)`,
        ]
      : [];
  console.log([line, gapAt, ...failures, ...stalls, ...stackStallsWithin(h, figures.longestGap)].join('\n'));
  if (figures.longestGap.ms >= input.boundMs) {
    // Over its bound: what the members said around the gap (an election, a heartbeat sent late, a slow apply), and
    // how busy the machine was, so that the failure below can be explained from this output alone.
    const around = await memberLogsAround(h, report, figures.longestGap).catch((err: unknown) => [
      `  the members' logs could not be listed (${String(err).slice(0, 120)})`,
    ]);
    const [one = 0, five = 0] = loadavg();
    console.log(
      [
        `${gapAt}: over its bound; load average ${one.toFixed(1)} (1 min), ${five.toFixed(1)} (5 min)`,
        ...around,
      ].join('\n'),
    );
  }
  try {
    appendFileSync(join(h.stack.stateDir, 'availability.log'), `${new Date().toISOString()} ${line}\n`);
  } catch {
    // The log file is a convenience; the assertions below are what count.
  }

  expect(figures.acknowledged).toBeGreaterThan(0);
  const problems = verified.members
    .filter((m) => m.lost.length + m.changed.length + m.unexpected.length > 0)
    .map((m) => ({
      member: m.member,
      lost: m.lost.slice(0, 20),
      lostCount: m.lost.length,
      changed: m.changed.slice(0, 20),
      unexpected: m.unexpected.slice(0, 20),
    }));
  expect(problems).toEqual([]);
  // One hash per member, all numbers, all equal.
  const hashes = [...verified.hashes.values()];
  expect(hashes).toHaveLength(verified.members.length);
  expect(
    hashes.every((x) => /^\d+$/.test(x)) && new Set(hashes).size === 1
      ? 'equal'
      : Object.fromEntries(verified.hashes),
  ).toBe('equal');
  expect(figures.longestGap.ms).toBeLessThan(input.boundMs);
  return result;
}
