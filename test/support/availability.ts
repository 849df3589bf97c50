// What a writer's run proves, asserted: every acknowledged write is on every member (read from each member itself, once it has applied the highest acknowledged revision), hashKV agrees at one revision, and the longest write gap stays under its bound. The figures go to the test output and to <stack>/availability.log.
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { memberClientURL, memberClientURLTLS } from '../../crds/names';
import type { Harness } from './cluster-harness';
import { eventually, getCluster } from './cluster-harness';
import type { MemberCopyCheck, StoredKey } from './write-history';
import { checkMemberCopy, highestAcknowledgedRevision } from './write-history';
import type { WriterReport } from './writer';
import { strictClient } from './writer';

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

  const { hashRevision, hashes } = await eventually(
    `equal hashKV on ${members.join(', ')} at one revision`,
    async () => {
      const revisions = await Promise.all(
        members.map((m) =>
          withMember(m, async (c) => Number((await c.maintenance.status()).header.revision)),
        ),
      );
      const at = Math.min(...revisions);
      const hs = new Map<string, string>();
      for (const m of members)
        hs.set(
          m,
          await withMember(m, async (c) => String((await c.maintenance.hashKV({ revision: at })).hash)),
        );
      return new Set(hs.values()).size === 1 ? { hashRevision: at, hashes: hs } : undefined;
    },
    timeoutMs,
  ).catch(async (err: unknown) => {
    // Report what differs instead of only the timeout: the assertion below then shows the hashes.
    const at = Math.min(
      ...(await Promise.all(
        members.map((m) =>
          withMember(m, async (c) => Number((await c.maintenance.status()).header.revision)),
        ),
      )),
    );
    const hs = new Map<string, string>();
    for (const m of members)
      hs.set(
        m,
        await withMember(m, async (c) => String((await c.maintenance.hashKV({ revision: at })).hash)).catch(
          (e: unknown) => `error: ${String(e)} (${String(err)})`,
        ),
      );
    return { hashRevision: at, hashes: hs };
  });
  return { members: copies, hashRevision, hashes };
}

export interface AvailabilityFigures {
  what: string;
  acknowledged: number;
  failed: number;
  longestGapMs: number;
  boundMs: number;
  recovered: number;
  members: number;
  hashRevision: number;
}

/** One line per test, for copying into a table. */
export function describeAvailability(f: AvailabilityFigures): string {
  return (
    `availability | ${f.what} | acknowledged ${f.acknowledged} | failed ${f.failed} | ` +
    `longest gap ${f.longestGapMs} ms (bound ${f.boundMs} ms) | recovered ${f.recovered} | ` +
    `${f.members} members, hashkv equal at revision ${f.hashRevision}`
  );
}

/**
 * The availability assertions of a test that changed a running cluster: nothing acknowledged lost (on any
 * member), nothing changed or invented, hashKV equal, and the longest gap between acknowledged writes under
 * `boundMs` (PLANNED_GAP_BOUND_MS or FAULT_GAP_BOUND_MS). Prints the figures before asserting, so they are in the
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
    boundMs: input.boundMs,
    recovered: Math.max(0, ...verified.members.map((m) => m.recovered)),
    members: verified.members.length,
    hashRevision: verified.hashRevision,
  };
  const line = describeAvailability(result);
  const gapAt = `longest gap from ${new Date(figures.longestGap.from).toISOString()} to ${new Date(figures.longestGap.to).toISOString()}`;
  console.log(`${line}\n${gapAt}`);
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
  expect(verified.hashes.size).toBeGreaterThan(0);
  expect(new Set(verified.hashes.values()).size === 1 ? 'equal' : Object.fromEntries(verified.hashes)).toBe(
    'equal',
  );
  expect(figures.longestGap.ms).toBeLessThan(input.boundMs);
  return result;
}
