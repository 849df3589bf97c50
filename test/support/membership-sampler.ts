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
}

export interface MembershipFigures {
  samples: number;
  mostLearners: number;
  fewestVoters: number;
  mostVoters: number;
  /** Every voter id seen in any sample. */
  voterIds: string[];
  /** The first sample with the most learners, for the failure message. */
  mostLearnersAt?: MembershipSample;
  fewestVotersAt?: MembershipSample;
}

/** What the samples say, over all of them (a member that answered from its own, possibly stale, view counts too). */
export function membershipFigures(samples: readonly MembershipSample[]): MembershipFigures {
  const voters = (s: MembershipSample) => s.members.filter((m) => !m.isLearner).length;
  const learners = (s: MembershipSample) => s.members.filter((m) => m.isLearner).length;
  let mostLearnersAt: MembershipSample | undefined;
  let fewestVotersAt: MembershipSample | undefined;
  let mostVoters = 0;
  const ids = new Set<string>();
  for (const s of samples) {
    if (!mostLearnersAt || learners(s) > learners(mostLearnersAt)) mostLearnersAt = s;
    if (!fewestVotersAt || voters(s) < voters(fewestVotersAt)) fewestVotersAt = s;
    mostVoters = Math.max(mostVoters, voters(s));
    for (const m of s.members) if (!m.isLearner) ids.add(m.id);
  }
  return {
    samples: samples.length,
    mostLearners: mostLearnersAt ? learners(mostLearnersAt) : 0,
    fewestVoters: fewestVotersAt ? voters(fewestVotersAt) : 0,
    mostVoters,
    voterIds: [...ids].sort(),
    ...(mostLearnersAt ? { mostLearnersAt } : {}),
    ...(fewestVotersAt ? { fewestVotersAt } : {}),
  };
}

export interface MembershipSampler {
  stop(): Promise<MembershipFigures>;
}

/**
 * Asks for the member list every `intervalMs` (default 250 ms), serializably (each member's own view, so it
 * answers without a leader: quorum loss does not blind the sampler), through the client Service and each member
 * client URL seen so far, each request with a 1 s deadline. Bounded: it stops by itself after `maxMs` (default
 * 15 min).
 */
export function startMembershipSampler(
  input: { namespace: string; name: string; intervalMs?: number; maxMs?: number } & ClusterAccess,
): MembershipSampler {
  const service = clusterClientEndpoint({ namespace: input.namespace, name: input.name });
  const hosts = new Set<string>([service]);
  const samples: MembershipSample[] = [];
  const until = Date.now() + (input.maxMs ?? 900_000);
  let stopped = false;
  const ask = async (host: string) => {
    const access = {
      credentials: typeof input.credentials === 'function' ? input.credentials() : input.credentials,
      auth: typeof input.auth === 'function' ? input.auth() : input.auth,
    };
    const c = strictClient([host], access);
    try {
      const res = await c.cluster.memberList({ linearizable: false });
      const members = res.members.map((m) => ({
        id: String(m.ID),
        name: m.name,
        isLearner: Boolean(m.isLearner),
      }));
      samples.push({ at: Date.now(), from: host, members });
      // A member that has not started yet has no client URL (and no name); it is asked once it has.
      for (const m of res.members) for (const u of m.clientURLs) hosts.add(u);
    } catch {
      // A member down, frozen or gone: that is what the test does to it; its view is simply not sampled.
    } finally {
      c.close();
    }
  };
  const loop = (async () => {
    while (!stopped && Date.now() < until) {
      const started = Date.now();
      await Promise.all([...hosts].map(ask));
      const wait = started + (input.intervalMs ?? 250) - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return membershipFigures(samples);
    },
  };
}

/**
 * What every test that changes or breaks a cluster asserts about its membership: never more than one learner
 * (etcd's own limit, and the operator adds one member at a time), never fewer voters than `floor` (the operator
 * never takes membership below quorum of what it started from), and, when given, exactly these voter ids (a
 * fault must bring the same members back, not replace them).
 */
export function expectMembership(
  figures: MembershipFigures,
  input: { what: string; floor: number; voterIds?: string[] },
): void {
  console.log(
    `membership | ${input.what} | ${figures.samples} samples | most learners ${figures.mostLearners} | ` +
      `voters ${figures.fewestVoters}..${figures.mostVoters} (floor ${input.floor}) | voter ids ${figures.voterIds.join(',')}`,
  );
  expect(figures.samples).toBeGreaterThan(0);
  expect(figures.mostLearners <= 1 ? 'at most one learner' : figures.mostLearnersAt).toBe(
    'at most one learner',
  );
  expect(figures.fewestVoters >= input.floor ? 'floor kept' : figures.fewestVotersAt).toBe('floor kept');
  if (input.voterIds) expect(figures.voterIds).toEqual([...input.voterIds].sort());
}
