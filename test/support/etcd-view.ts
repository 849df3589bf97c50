// etcd's own view of who leads, asked of each member on its own endpoint: the leader all who answered agree on.
import { memberClientURL, memberFromPeerURL } from '../../crds/names';
import { strictClient } from './writer';

/** The leader's member name, as every member that answers within 2 s reports it; throws unless they agree. */
export async function agreedLeader(
  ref: { namespace: string; name: string },
  members: string[],
): Promise<string> {
  const leaders = new Set<string>();
  for (const member of members) {
    const c = strictClient([memberClientURL(ref, member)], {}, 2000);
    try {
      const status = await c.maintenance.status();
      const list = await c.cluster.memberList({ linearizable: false });
      const leader = list.members.find((m) => String(m.ID) === String(status.leader))?.name;
      if (leader) leaders.add(leader);
    } catch {
      // Down, frozen or cut off: not asked.
    } finally {
      c.close();
    }
  }
  if (leaders.size !== 1) throw new Error(`no agreed leader: ${[...leaders].join(', ') || 'none'}`);
  return [...leaders][0] ?? '';
}

/** What `asked` says `member` is: 'learner', 'voter', or 'absent' (not in its member list). */
export async function memberRole(
  ref: { namespace: string; name: string },
  asked: string,
  member: string,
): Promise<'learner' | 'voter' | 'absent'> {
  const c = strictClient([memberClientURL(ref, asked)], {}, 5000);
  try {
    const list = await c.cluster.memberList({ linearizable: false });
    const m = list.members.find(
      (x) => x.name === member || x.peerURLs.some((u) => memberFromPeerURL(ref, u) === member),
    );
    if (!m) return 'absent';
    return m.isLearner ? 'learner' : 'voter';
  } finally {
    c.close();
  }
}

/**
 * Every key under `prefix` as `key=value`, as `member` itself holds it at `revision` (its latest when absent; a
 * serializable read needs no quorum), with each key's mod revision and the revision of the read.
 */
export async function memberKeysAt(
  cluster: { namespace: string; name: string },
  member: string,
  prefix: string,
  revision?: number,
): Promise<{ revision: number; keys: string[]; modRevisions: Map<string, number> }> {
  const c = strictClient([memberClientURL(cluster, member)], {}, 10_000);
  try {
    const start = Buffer.from(`${prefix}/`);
    const end = Buffer.from(start);
    end[end.length - 1] = (end[end.length - 1] ?? 0) + 1;
    const res = await c.kv.range({
      key: start,
      range_end: end,
      serializable: true,
      ...(revision !== undefined ? { revision: String(revision) } : {}),
    });
    const keys = res.kvs.map((kv) => `${kv.key.toString()}=${kv.value.toString()}`).sort();
    const modRevisions = new Map(
      res.kvs.map((kv) => [`${kv.key.toString()}=${kv.value.toString()}`, Number(kv.mod_revision)]),
    );
    return { revision: Number(res.header.revision), keys, modRevisions };
  } finally {
    c.close();
  }
}
