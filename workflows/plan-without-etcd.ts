// The planner's chain when no member answered a member list (nothing runs yet, the cluster is paused, quorum is
// gone, or members refuse the operator's certificate): it only starts or stops Pods on kept data.
import { Reasons } from '../crds/conditions';
import { memberName } from '../crds/labels';
import { dataKept, ordinalFor, podLive } from './cluster-state';
import { judgeQuorumLoss, recoveryGate } from './quorum-loss';
import { rebuildGate } from './rebuild-point';
import type { Check } from './plan-checks';
import { replaceStuckPod, wait } from './plan-checks';
import type { Desired, KubeMemberView, Observed } from './plan-types';

export interface WithoutEtcd {
  desired: Desired;
  observed: Observed;
}

// The member the cluster last listed comes first, so Resume never starts an orphan left by a crash
// between MemberRemove and the claim's deletion.
function preferRecorded(c: WithoutEtcd, names: string[]): string | undefined {
  const recorded = new Set(c.observed.recorded.members);
  const ord = (n: string) => ordinalFor(c.desired.cluster, n);
  return [...names].sort((a, b) => Number(recorded.has(b)) - Number(recorded.has(a)) || ord(a) - ord(b))[0];
}

/**
 * The membership a never-formed cluster's members start together with: the one its claims and Pods carry (the lowest
 * ordinal's, should they ever differ), else spec.replicas' first names when nothing exists at all. Undefined when the
 * cluster starts a seed alone: a restore, a single member, or objects left by a bootstrap that started a seed.
 */
function initialMembersOf(c: WithoutEtcd): string[] | undefined {
  const ord = (k: KubeMemberView) => ordinalFor(c.desired.cluster, k.name);
  const carried = c.observed.kube.filter((k) => k.initialMembers).sort((a, b) => ord(a) - ord(b))[0];
  if (carried?.initialMembers) return carried.initialMembers;
  if (c.observed.kube.length > 0 || c.desired.replicas < 2 || c.desired.restore) return undefined;
  return Array.from({ length: c.desired.replicas }, (_, i) => memberName(c.desired.cluster, i));
}

// Without etcd's member list the only trustworthy facts are the Kubernetes objects; every step here only
// starts or stops Pods on kept data, never changes membership.
export const withoutEtcdChain: Check<WithoutEtcd>[] = [
  {
    name: 'replaceStuckPods',
    run: (c) => replaceStuckPod(c.desired, c.observed.kube, c.observed.recorded.clusterId === undefined),
  },
  {
    // Members that refuse the operator's certificate run and may well have quorum: nothing is started or
    // stopped on a guess, and status says what is wrong instead of QuorumLost.
    name: 'operatorTrusted',
    run: (c) =>
      c.observed.etcdRefused !== undefined && c.observed.kube.some((k) => podLive(k))
        ? wait(
            Reasons.TLSTrustBroken,
            `every member refuses the TLS handshake with the operator, so it cannot tell whether quorum holds (${c.observed.etcdRefused}); members trust the CA bundle (ca.crt) they started with: the operator's client certificate must be signed by a CA in it, and its ca.crt must hold the CA of the members' serving certificate (docs/operations.md, Rotating the CA)`,
          )
        : undefined,
  },
  {
    name: 'stayPaused',
    run: (c) => {
      if (c.desired.replicas !== 0) return undefined;
      const live = c.observed.kube.filter((k) => podLive(k));
      const stopping = c.observed.kube.filter((k) => k.pod?.terminating);
      if (live.length === 0 && stopping.length === 0) {
        return { kind: 'None', reason: Reasons.Paused, message: 'paused; the data is kept on its claim' };
      }
      if (live.length === 0) return wait(Reasons.WaitingForDeletion, 'the last member Pod is stopping');
      const only = live[0];
      if (live.length === 1 && only) return { kind: 'Pause', member: only.name };
      return wait(Reasons.MemberNotReady, 'no member answers; pausing needs one member left first');
    },
  },
  {
    // Too many members' data is gone for the rest ever to form a quorum (quorum-loss.ts): waiting cannot help, and
    // only the user may give up what the lost members had. Survivors' Pods are started first (startPodsOnKeptData),
    // so they can say how far their data goes; with no survivor at all, AllMembersLost below says what is left.
    name: 'permanentQuorumLoss',
    run: (c) => {
      const recovery = c.desired.recovery;
      if (!recovery) return undefined;
      const verdict = judgeQuorumLoss(c.desired, c.observed);
      if (verdict.kind !== 'Permanent') return undefined;
      // What both gates judge: the loss, what was found about it, and the user's approval.
      const judged = {
        cluster: c.desired.cluster,
        uid: recovery.uid,
        ...(recovery.approval !== undefined ? { approval: recovery.approval } : {}),
        verdict,
        ...(c.observed.lossFindings ? { findings: c.observed.lossFindings } : {}),
      };
      if (verdict.survivors.length === 0) {
        // No member to recover from: a rebuild from the newest backup point, approved (rebuild-point.ts).
        if (!recovery.fromBackup) return undefined;
        const gate = rebuildGate(judged);
        if (gate.kind === 'Wait') return wait(Reasons.PermanentQuorumLoss, gate.message);
        const { kind: _kind, ...rebuild } = gate;
        return { kind: 'Rebuild', ...rebuild };
      }
      const kube = new Map(c.observed.kube.map((k) => [k.name, k]));
      if (verdict.survivors.some((n) => !podLive(kube.get(n)))) return undefined;
      const gate = recoveryGate(judged);
      if (gate.kind === 'Wait') return wait(Reasons.PermanentQuorumLoss, gate.message);
      const { kind: _kind, ...recover } = gate;
      return { kind: 'RecoverQuorum', ...recover };
    },
  },
  {
    // A brand-new cluster holds no data, so its initial members start together, each with --initial-cluster naming
    // them all. The membership is written on their claims and Pods: a bootstrap interrupted after some of them starts
    // the rest with the same one, never a seed of another membership (etcd derives member and cluster ids from it).
    name: 'startInitialMembersTogether',
    run: (c) => {
      if (!c.desired.bootstrapTogether || c.observed.recorded.clusterId !== undefined) return undefined;
      const members = initialMembersOf(c);
      if (!members) return undefined;
      const kube = new Map(c.observed.kube.map((k) => [k.name, k]));
      const missing = members.find((n) => !kube.get(n)?.pod);
      if (missing) return { kind: 'Bootstrap', member: missing, members };
      if (members.some((n) => kube.get(n)?.pod?.terminating)) {
        return wait(
          Reasons.WaitingForDeletion,
          'an initial member Pod is being deleted; it starts again after',
        );
      }
      return wait(
        Reasons.MemberNotReady,
        `the ${members.length} initial members start together; waiting for a quorum of them to answer`,
      );
    },
  },
  {
    // A recorded cluster id means the cluster existed; starting an empty one under the same name would
    // make clients see revisions go backwards, so that is left to a person.
    name: 'bootstrapWhenNothingExists',
    run: (c) => {
      const anyData = c.observed.kube.some((k) => dataKept(k, c.desired.medium) || podLive(k));
      if (anyData) return undefined;
      if (c.observed.recorded.clusterId !== undefined) {
        return wait(
          Reasons.AllMembersLost,
          `every member's data is gone (cluster ${c.observed.recorded.clusterId})`,
        );
      }
      return { kind: 'Bootstrap', member: memberName(c.desired.cluster, 0) };
    },
  },
  {
    name: 'startPodsOnKeptData',
    run: (c) => {
      const idle = c.observed.kube.filter(
        (k) => dataKept(k, c.desired.medium) && !podLive(k) && !k.pod?.terminating,
      );
      const member = preferRecorded(
        c,
        idle.map((k) => k.name),
      );
      if (member === undefined) return undefined;
      if (c.observed.kube.some((k) => podLive(k))) return { kind: 'RecreatePod', member };
      // Nothing runs. A bootstrap that never reported a cluster id runs again (its seed is started with
      // `new`, which etcd ignores on a data dir that already has data); a paused cluster resumes; any
      // other cluster lost all its Pods at once and heals.
      if (c.observed.recorded.clusterId === undefined) return { kind: 'Bootstrap', member };
      return c.observed.recorded.paused ? { kind: 'Resume', member } : { kind: 'RecreatePod', member };
    },
  },
  {
    // A seed whose restore failed holds everything else back (no member can join a cluster that never
    // started). A refusal no restart can fix (wrong bytes, missing object, bad credentials) is reported as
    // such; anything else is left to the kubelet, which restarts the init container.
    name: 'reportRestoreFailure',
    run: (c) => {
      const seed = c.observed.kube.find((k) => podLive(k) && k.pod?.restoreFailure);
      const failure = seed?.pod?.restoreFailure;
      if (!seed || !failure) return undefined;
      const text = `restore of ${seed.name} failed: ${failure.reason}: ${failure.message}`;
      return failure.permanent
        ? wait(Reasons.RestoreFailed, text)
        : wait(Reasons.MemberNotReady, `${text}; its init container is retried`);
    },
  },
  {
    name: 'waitForMembersToAnswer',
    run: (c) =>
      c.observed.kube.some((k) => k.pod?.terminating)
        ? wait(Reasons.WaitingForDeletion, 'a member Pod is being deleted')
        : wait(Reasons.MemberNotReady, 'member Pods run but no member answers yet'),
  },
];
