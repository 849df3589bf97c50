// The Defrag operation's side effects: defragment one member, compact to the current revision, disarm NOSPACE; each safe to repeat.
//
// Idempotent by nature: a second defragmentation of a member only rewrites an already compact file, a
// compaction to a revision already compacted is reported as done, and disarming an alarm that is not raised
// changes nothing. Never deletes a key: compaction drops only revisions that a later one superseded.
import type { EtcdAdmin } from './etcd-admin';
import { memberClientURL } from '../crds/names';
import type { ClusterRef } from '../contracts/cluster-ref';
import type { DefragmentResult } from '../contracts/defrag';
import { heartbeating } from './heartbeat';

export interface DefragActivityDeps {
  etcd: EtcdAdmin;
}

/**
 * How long one member's defragmentation may take. etcd rewrites the whole database file, and the member
 * blocks meanwhile; on a loaded disk a multi-GiB database takes minutes. The activity's startToClose
 * (workflows/defrag-operation.ts) is longer than this, so etcd's answer, not Temporal, ends a slow one.
 */
export const DEFRAG_CALL_TIMEOUT_MS = 5 * 60_000;

export function createDefragActivities(deps: DefragActivityDeps) {
  const { etcd } = deps;
  const sizes = async (endpoint: string) => {
    try {
      const s = await etcd.status(endpoint);
      return { dbSize: s.dbSize, dbSizeInUse: s.dbSizeInUse };
    } catch {
      return undefined;
    }
  };
  const urls = (ref: ClusterRef, members: readonly string[]) => members.map((m) => memberClientURL(ref, m));

  return {
    /** Maintenance.Defragment against this one member (never a load-balanced client), with sizes around it. */
    async defragmentMember(input: { ref: ClusterRef; member: string }): Promise<DefragmentResult> {
      const endpoint = memberClientURL(input.ref, input.member);
      const before = await sizes(endpoint);
      // Minutes on a large database: heartbeats say the worker still waits on etcd (workflows/defrag-operation.ts).
      await heartbeating(etcd.defragment(endpoint, DEFRAG_CALL_TIMEOUT_MS));
      const after = await sizes(endpoint);
      return { member: input.member, ...(before ? { before } : {}), ...(after ? { after } : {}) };
    },

    /** Compacts to the current revision through the named voters (the first that answers). */
    async compactToCurrentRevision(input: {
      ref: ClusterRef;
      voters: string[];
    }): Promise<{ revision: string; alreadyCompacted: boolean }> {
      let last: unknown = new Error('no voter to compact through');
      for (const endpoint of urls(input.ref, input.voters)) {
        try {
          return await heartbeating(etcd.compactToCurrent([endpoint]));
        } catch (err) {
          last = err;
        }
      }
      throw last;
    },

    /** Disarms every NOSPACE alarm raised now; returns the member ids it disarmed (none when none was raised). */
    async disarmNoSpace(input: { ref: ClusterRef; voters: string[] }): Promise<string[]> {
      let last: unknown = new Error('no voter to disarm through');
      for (const endpoint of urls(input.ref, input.voters)) {
        try {
          const raised = (await etcd.alarms([endpoint])).filter((a) => a.alarm === 'NOSPACE');
          for (const a of raised) await etcd.disarmNoSpace([endpoint], a.memberId);
          return raised.map((a) => a.memberId);
        } catch (err) {
          last = err;
        }
      }
      throw last;
    },
  };
}

export type DefragActivities = ReturnType<typeof createDefragActivities>;
