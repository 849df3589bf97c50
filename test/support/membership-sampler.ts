// Samples etcd's member list while a test changes or breaks a cluster, from every member it has seen and through the client Service, so the test can assert what held throughout: never more than one learner, never fewer voters than the floor, the same member ids.
import { clusterClientEndpoint } from '../../crds/names';
import type { ClusterAccess } from './writer';
import { strictClient } from './writer';

export interface SampledMember {
  id: string;
  name: string;
  isLearner: boolean;
}

export interface MembershipSample {
  at: number;
  /** Who answered: the Service or a member's client URL. */
  from: string;
  members: SampledMember[];
  /** Taken by stop(), after the test's change: the cluster's state at the end. */
  final?: boolean;
}

export interface MembershipFigures {
  samples: number;
  mostLearners: number;
  fewestVoters: number;
  mostVoters: number;
  /** Every voter id seen in any sample. */
  voterIds: string[];
  /** Samples per source (the Service, each member URL): a sampler that only one source answers shows here. */
  bySource: Record<string, number>;
  /**
   * The longest stretch with no sample from any source, counting from the start to the first sample and from the
   * last to the stop: a sampler that saw nothing for a while cannot vouch for that while.
   */
  longestBlindMs: number;
  /** The fewest voters any member answered with in the final round (stale removed members list more); absent if none answered. */
  finalVoters?: number;
  /** The voter ids of that final answer. */
  finalVoterIds?: string[];
  /** The first sample with the most learners, for the failure message. */
  mostLearnersAt?: MembershipSample;
  fewestVotersAt?: MembershipSample;
}

/** When sampling ran: what blindness is measured against. */
export interface SamplingSpan {
  startedAt: number;
  stoppedAt: number;
}

const votersOf = (s: MembershipSample) => s.members.filter((m) => !m.isLearner);

/** What the samples say, over all of them (a member that answered from its own, possibly stale, view counts too). */
export function membershipFigures(
  samples: readonly MembershipSample[],
  span?: SamplingSpan,
): MembershipFigures {
  const voters = (s: MembershipSample) => votersOf(s).length;
  const learners = (s: MembershipSample) => s.members.filter((m) => m.isLearner).length;
  let mostLearnersAt: MembershipSample | undefined;
  let fewestVotersAt: MembershipSample | undefined;
  let finalAt: MembershipSample | undefined;
  let mostVoters = 0;
  const ids = new Set<string>();
  const bySource: Record<string, number> = {};
  for (const s of samples) {
    if (!mostLearnersAt || learners(s) > learners(mostLearnersAt)) mostLearnersAt = s;
    if (!fewestVotersAt || voters(s) < voters(fewestVotersAt)) fewestVotersAt = s;
    if (s.final && (!finalAt || voters(s) < voters(finalAt))) finalAt = s;
    mostVoters = Math.max(mostVoters, voters(s));
    for (const m of s.members) if (!m.isLearner) ids.add(m.id);
    bySource[s.from] = (bySource[s.from] ?? 0) + 1;
  }
  return {
    samples: samples.length,
    mostLearners: mostLearnersAt ? learners(mostLearnersAt) : 0,
    fewestVoters: fewestVotersAt ? voters(fewestVotersAt) : 0,
    mostVoters,
    voterIds: [...ids].sort(),
    bySource,
    longestBlindMs: longestBlind(samples, span),
    ...(finalAt
      ? {
          finalVoters: voters(finalAt),
          finalVoterIds: votersOf(finalAt)
            .map((m) => m.id)
            .sort(),
        }
      : {}),
    ...(mostLearnersAt ? { mostLearnersAt } : {}),
    ...(fewestVotersAt ? { fewestVotersAt } : {}),
  };
}

/** The longest time between two samples (from any source), bounded by the span when given. */
export function longestBlind(samples: readonly MembershipSample[], span?: SamplingSpan): number {
  const times = samples.map((s) => s.at);
  if (span) times.push(span.startedAt, span.stoppedAt);
  times.sort((a, b) => a - b);
  let longest = 0;
  for (let i = 1; i < times.length; i++) longest = Math.max(longest, (times[i] ?? 0) - (times[i - 1] ?? 0));
  return longest;
}

export interface MembershipSampler {
  stop(): Promise<MembershipFigures>;
}

/** Each ask's own deadline, and a hard bound on it whatever the client does (name resolution, connecting). */
const ASK_DEADLINE_MS = 1000;
const ASK_HARD_BOUND_MS = 2000;
/** How long stop() keeps asking for the final view before it gives up (and the figures say none was seen). */
const FINAL_VIEW_MS = 15_000;

/**
 * Asks for the member list every `intervalMs` (default 250 ms), serializably (each member's own view, so it
 * answers without a leader: quorum loss does not blind the sampler), through the client Service and each member
 * client URL seen so far, each request with a 1 s deadline and a hard 2 s bound, so one host that hangs (a name
 * that no longer resolves, a connection to a Pod that is gone) cannot stall the rounds. stop() then asks every
 * source once more, for up to 15 s until one answers: the final view, which a test compares with the membership it
 * expects, so a sampler that saw only stale or no answers fails instead of passing. Bounded: it stops by itself
 * after `maxMs` (default 15 min).
 */
export function startMembershipSampler(
  input: { namespace: string; name: string; intervalMs?: number; maxMs?: number } & ClusterAccess,
): MembershipSampler {
  const service = clusterClientEndpoint({ namespace: input.namespace, name: input.name });
  const hosts = new Set<string>([service]);
  const samples: MembershipSample[] = [];
  const startedAt = Date.now();
  const until = startedAt + (input.maxMs ?? 900_000);
  let stopped = false;
  const ask = async (host: string, final = false): Promise<boolean> => {
    const access = {
      credentials: typeof input.credentials === 'function' ? input.credentials() : input.credentials,
      auth: typeof input.auth === 'function' ? input.auth() : input.auth,
    };
    const c = strictClient([host], access, ASK_DEADLINE_MS);
    let timer: NodeJS.Timeout | undefined;
    try {
      const bound = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no answer within ${ASK_HARD_BOUND_MS} ms`)),
          ASK_HARD_BOUND_MS,
        );
      });
      const res = await Promise.race([c.cluster.memberList({ linearizable: false }), bound]);
      const members = res.members.map((m) => ({
        id: String(m.ID),
        name: m.name,
        isLearner: Boolean(m.isLearner),
      }));
      samples.push({ at: Date.now(), from: host, members, ...(final ? { final } : {}) });
      // A member that has not started yet has no client URL (and no name); it is asked once it has.
      for (const m of res.members) for (const u of m.clientURLs) hosts.add(u);
      return true;
    } catch {
      // A member down, frozen or gone: that is what the test does to it; its view is simply not sampled.
      return false;
    } finally {
      clearTimeout(timer);
      c.close();
    }
  };
  const loop = (async () => {
    while (!stopped && Date.now() < until) {
      const started = Date.now();
      await Promise.all([...hosts].map((h) => ask(h)));
      const wait = started + (input.intervalMs ?? 250) - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      const finalUntil = Date.now() + FINAL_VIEW_MS;
      for (;;) {
        const answers = await Promise.all([...hosts].map((h) => ask(h, true)));
        if (answers.some(Boolean) || Date.now() >= finalUntil) break;
        await new Promise((r) => setTimeout(r, 500));
      }
      return membershipFigures(samples, { startedAt, stoppedAt: Date.now() });
    },
  };
}

/** A sampler that saw nothing for longer than this cannot vouch for membership over that time. */
export const BLIND_BOUND_MS = 15_000;

/** What a test expects of the sampled membership (see expectMembership). */
export interface MembershipExpectation {
  what: string;
  floor: number;
  /** Exactly these voter ids throughout, and at the end (a fault must bring the same members back). */
  voterIds?: string[];
  /** The voters the cluster has at the end (a scale's target); the final view must show them. */
  finalVoters?: number;
  /** The longest stretch allowed without any sample (default BLIND_BOUND_MS). */
  blindBoundMs?: number;
}

/**
 * Why the figures cannot be trusted or break the rules, in words; empty when they hold. The sampler must have seen
 * the cluster: some samples, none of its blind stretches over the bound, and a final view (stop()'s last round)
 * that shows the membership the test expects, so a sampler that only reached a stale or no member fails loudly.
 */
export function membershipProblems(figures: MembershipFigures, e: MembershipExpectation): string[] {
  const problems: string[] = [];
  const blindBound = e.blindBoundMs ?? BLIND_BOUND_MS;
  if (figures.samples === 0) problems.push('the sampler saw no member list at all');
  if (figures.longestBlindMs > blindBound)
    problems.push(`the sampler saw nothing for ${figures.longestBlindMs} ms (bound ${blindBound} ms)`);
  if (figures.finalVoters === undefined) problems.push('no member answered the final view');
  if (figures.mostLearners > 1)
    problems.push(`${figures.mostLearners} learners at once: ${JSON.stringify(figures.mostLearnersAt)}`);
  if (figures.samples > 0 && figures.fewestVoters < e.floor)
    problems.push(
      `${figures.fewestVoters} voters, floor ${e.floor}: ${JSON.stringify(figures.fewestVotersAt)}`,
    );
  const expectedFinal = e.finalVoters ?? e.voterIds?.length;
  if (
    figures.finalVoters !== undefined &&
    expectedFinal !== undefined &&
    figures.finalVoters !== expectedFinal
  )
    problems.push(`the final view shows ${figures.finalVoters} voters, ${expectedFinal} expected`);
  if (e.voterIds) {
    const want = [...e.voterIds].sort().join(',');
    if (figures.voterIds.join(',') !== want)
      problems.push(`voter ids ${figures.voterIds.join(',')}, expected ${want}`);
    if (figures.finalVoterIds && figures.finalVoterIds.join(',') !== want)
      problems.push(`final voter ids ${figures.finalVoterIds.join(',')}, expected ${want}`);
  }
  return problems;
}

/**
 * What every test that changes or breaks a cluster asserts about its membership: the sampler saw the cluster
 * throughout and at the end (membershipProblems), never more than one learner (etcd's own limit, and the operator
 * adds one member at a time), never fewer voters than `floor` (the operator never takes membership below quorum of
 * what it started from), and, when given, exactly these voter ids and the final voter count.
 */
export function expectMembership(figures: MembershipFigures, input: MembershipExpectation): void {
  const sources = Object.entries(figures.bySource)
    .map(([from, n]) => `${from} ${n}`)
    .join(', ');
  console.log(
    `membership | ${input.what} | ${figures.samples} samples | most learners ${figures.mostLearners} | ` +
      `voters ${figures.fewestVoters}..${figures.mostVoters} (floor ${input.floor}), final ${figures.finalVoters ?? 'none'}` +
      `${input.finalVoters !== undefined ? ` (expected ${input.finalVoters})` : ''} | longest blind ${figures.longestBlindMs} ms | ` +
      `voter ids ${figures.voterIds.join(',')} | by source: ${sources}`,
  );
  expect(membershipProblems(figures, input)).toEqual([]);
}
