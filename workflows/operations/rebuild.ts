// Rebuild: the cluster started again in place from a backup point the user approved (workflows/rebuild-point.ts):
// after a quorum lost with no member keeping its data. Every member's Pod and claim go; the first member starts from
// the point through the restore init container a restored new cluster uses (activities/restore-manifests.ts);
// the ScaleUp the cluster starts next adds the other members back. The cluster's name, Services and Secrets stay.
//
// Invariants: nothing is touched until the backup point resolves (a point that cannot be restored fails the
// operation with everything as it was); on a quorum loss nothing is touched if etcd answers again when it starts;
// the approval is used once, whatever comes of it; the window of writes given up is told in the result and an Event.
import { ApplicationFailure, proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { ClusterActivities } from '../../activities/cluster-activities';
import type { RestoreActivities } from '../../activities/restore-activities';
import type { RestoreInit } from '../../activities/restore-manifests';
import { RESTORE_BUMP_REVISION } from '../../contracts/agent-result';
import { FailureTypes } from '../../crds/conditions';
import type { EtcdClusterRestore, EtcdClusterSpec } from '../../crds/etcd-cluster';
import { memberName } from '../../crds/labels';
import type { ClusterRef } from '../../contracts/cluster-ref';
import { ActivityKinds } from '../activity-kinds';
import type { RevisionSeen } from '../quorum-loss';
import { lostWindow } from '../quorum-loss';
import type { RebuildReason, RebuildSource } from '../rebuild-point';
import { describeSource } from '../rebuild-point';
import type { OperationContext, OperationModule } from './operation-module';
import { refuseRestore } from './step-executors';

const acts = proxyActivities<ClusterActivities>(ActivityKinds.operationStep);
const polls = proxyActivities<Pick<ClusterActivities, 'awaitSoleMember'>>(ActivityKinds.waitingPoll);
const restoreActs = proxyActivities<RestoreActivities>(ActivityKinds.operationStep);

/** How long one poll for the rebuilt member's answer lasts (inside waitingPoll's 30 s start-to-close). */
const ANSWER_POLL_MAX_MS = 20_000;
/** How often Pods and claims being deleted, or a restore source not ready yet, are looked at again. */
const GONE_POLL = '1s';
const SOURCE_POLL = '5s';
/** The snapshot of the present data before a rollback: read every SNAPSHOT_POLL, at most SNAPSHOT_LOOKS times (10 minutes). */
const SNAPSHOT_POLL = '2s';
const SNAPSHOT_LOOKS = 300;

/** What the Rebuild restores, why, the members whose data it gives up, and the last revision the operator saw. */
export interface RebuildPlan {
  reason: RebuildReason;
  source: RebuildSource;
  gone: string[];
  lastSeen?: RevisionSeen;
}

export const rebuild: OperationModule = {
  type: 'Rebuild',
  summarize: (ref, _from, _to, first) =>
    first?.kind === 'Rebuild' ? `rebuild ${ref} from ${describeSource(first.source)}` : `rebuild ${ref}`,
  // Adding members back is the ScaleUp's (the next operation): this one ends once the first member serves.
  alsoContinues: [],
  // Nothing half-done can be made whole again: the members' data was gone (or given up by the approval) before
  // the first change; a halted rebuild leaves a quorum loss the planner reports again, for a new approval.
  compensation: 'none',
  run: (ctx) => runRebuild(ctx),
  startInput: ({ step, lastSeenRevision }) =>
    step.kind === 'Rebuild'
      ? {
          rebuild: {
            reason: step.reason,
            source: step.source,
            gone: step.gone,
            ...(lastSeenRevision ? { lastSeen: lastSeenRevision } : {}),
          },
        }
      : {},
};

/** spec.bootstrap.restore as a restored new cluster would say it, for the backup point (the restore activities read it). */
export function restoreFor(
  ref: ClusterRef,
  spec: EtcdClusterSpec,
  source: RebuildSource,
): EtcdClusterRestore {
  if (source.kind === 'Snapshot') return { source: { snapshotRef: { name: source.snapshot } } };
  const s3 = spec.backup?.destination.s3;
  const own = { name: ref.name, namespace: ref.namespace, uid: ref.uid };
  if (source.kind === 'PointInTime' && s3) {
    const pointInTime =
      source.revision !== undefined ? { revision: source.revision } : { time: source.time ?? '' };
    return { source: { continuous: { destination: { s3 }, cluster: own } }, pointInTime };
  }
  if (!s3) {
    throw ApplicationFailure.nonRetryable(
      'a rebuild from the continuous backup needs spec.backup.destination.s3',
      FailureTypes.InvalidSpec,
    );
  }
  return {
    source: {
      continuous: {
        destination: { s3 },
        cluster: own,
      },
    },
  };
}

async function runRebuild(ctx: OperationContext): Promise<string> {
  const { ref, spec, input, details } = ctx;
  const plan = input.rebuild;
  if (!plan) {
    throw ApplicationFailure.nonRetryable(
      'a Rebuild operation started without a plan',
      FailureTypes.InvalidSpec,
    );
  }
  await acts.removeRecoveryApproval({ ref, approval: plan.reason === 'Rollback' ? 'rollback' : 'recovery' });
  const now = await acts.observeCluster({ ref, version: spec.version });
  if (plan.reason === 'QuorumLoss' && now.etcd) {
    return `nothing done: the cluster answers a member list again (${now.etcd.members.length} members), so there is nothing to rebuild`;
  }
  const seed = memberName(ref.name, 0);
  // The point is resolved before anything is touched; a rollback then keeps the present data first, and without
  // that copy nothing is replaced.
  const restore = await resolvePoint(ctx, plan, seed);
  const kept = plan.reason === 'Rollback' ? await snapshotPresent(ctx) : undefined;
  await removeAllMembers(ctx);
  details(`starting ${seed} from ${describeSource(plan.source)}`);
  await acts.ensureClusterObjects({
    ref,
    voters: spec.replicas,
    additionalMetadata: spec.additionalMetadata,
  });
  await acts.createMemberClaim({ ref, spec, member: seed });
  await acts.createMemberPod({ ref, spec, member: seed, mode: 'seed', restore });
  const served = await awaitServing(ctx, seed);
  // etcd's restore bumps revisions (agent/restore.ts: --bump-revision), so the member serves a higher revision than
  // the point's; the window counts from the point's own revision when it is known.
  const point = pointRevision(plan.source) ?? unbumped(served.revision);
  const window = lostWindow(point ?? served.revision, plan.lastSeen);
  const why =
    plan.reason === 'Rollback'
      ? 'rolled back as approved'
      : `${plan.gone.join(', ')} had lost their data for good`;
  const message = `rebuilt in place from ${describeSource(plan.source)} (${why}): ${seed} serves its data (at revision ${served.revision}: a restore bumps revisions so they only go up); ${window.message}${kept ? `; ${kept}` : ''}; the other members are added back next`;
  await acts.recordEvent({ ref, type: 'Warning', reason: 'ClusterRebuilt', message });
  return message;
}

/**
 * The restore init container for the backup point, before anything is touched: a source not ready yet is waited on
 * (within the progress deadline), one that can never be restored ends the operation Failed with every member as it was.
 */
async function resolvePoint(ctx: OperationContext, plan: RebuildPlan, seed: string): Promise<RestoreInit> {
  const { ref, spec, details } = ctx;
  const restoring: EtcdClusterSpec = { ...spec, bootstrap: { restore: restoreFor(ref, spec, plan.source) } };
  for (;;) {
    const prepared = await restoreActs.prepareRestore({ ref, spec: restoring, member: seed });
    if (prepared.state === 'ready') {
      details(`restoring ${seed} from ${prepared.uri}`);
      return prepared.init;
    }
    if (prepared.state === 'refused') {
      return refuseRestore(ref, `${prepared.message}; nothing was changed`);
    }
    details(`waiting for the backup point: ${prepared.message}`);
    await sleep(SOURCE_POLL);
  }
}

/** Deletes every member's Pod, then every member's claim, and waits until none is left (the data is given up). */
async function removeAllMembers(ctx: Pick<OperationContext, 'ref' | 'spec' | 'details'>): Promise<void> {
  const { ref, spec, details } = ctx;
  for (;;) {
    const now = await acts.observeCluster({ ref, version: spec.version });
    const pods = now.kube.filter((k) => k.pod);
    const claims = now.kube.filter((k) => k.claim);
    if (pods.length === 0 && claims.length === 0) return;
    details(
      `removing ${[...new Set([...pods, ...claims].map((k) => k.name))].join(', ')}: Pods first, then claims`,
    );
    for (const k of pods) if (!k.pod?.terminating) await acts.deleteMemberPod({ ref, member: k.name });
    if (pods.length === 0) {
      for (const k of claims)
        if (!k.claim?.terminating) await acts.deleteMemberClaim({ ref, member: k.name });
    }
    await sleep(GONE_POLL);
  }
}

/** Waits (within the progress deadline) until the restored member answers a member list of one; a restore that fails for good ends the operation. */
async function awaitServing(
  ctx: Pick<OperationContext, 'ref' | 'spec' | 'details'>,
  seed: string,
): Promise<{ revision: string }> {
  const { ref, spec, details } = ctx;
  for (;;) {
    const answer = await polls.awaitSoleMember({ ref, member: seed, maxMs: ANSWER_POLL_MAX_MS });
    if (!('waiting' in answer)) {
      if (answer.members.length !== 1) {
        throw ApplicationFailure.nonRetryable(
          `${seed} answers with ${answer.members.length} members, not itself alone: the restore did not start a new cluster`,
          FailureTypes.MemberMismatch,
        );
      }
      return { revision: answer.revision };
    }
    const now = await acts.observeCluster({ ref, version: spec.version });
    const failure = now.kube.find((k) => k.name === seed)?.pod?.restoreFailure;
    if (failure?.permanent)
      return refuseRestore(ref, `restore of ${seed} failed: ${failure.reason}: ${failure.message}`);
    details(
      `waiting for ${seed} to serve from the backup point: ${failure ? failure.message : answer.waiting}`,
    );
  }
}

/**
 * Before a rollback: an EtcdSnapshot of the present data, `<cluster>-pre-rollback-<n>`, which must succeed; a failed
 * or unfinished one ends the operation with nothing replaced (the approval is used up: approve again to retry).
 */
async function snapshotPresent(ctx: OperationContext): Promise<string> {
  const { ref, spec, details } = ctx;
  const seq = /\/op\/(\d+)-[a-z]+$/.exec(workflowInfo().workflowId)?.[1] ?? '0';
  const name = `${ref.name}-pre-rollback-${seq}`;
  details(`taking snapshot ${name} of the present data before it is replaced`);
  await acts.createPreUpgradeSnapshot({ ref, spec, name });
  for (let look = 0; look < SNAPSHOT_LOOKS; look++) {
    const state = await acts.readPreUpgradeSnapshot({ ref, name });
    if (state.phase === 'Succeeded')
      return `the data before the rollback is kept in snapshot ${name} (${state.uri})`;
    if (state.phase === 'Failed') {
      throw ApplicationFailure.nonRetryable(
        `snapshot ${name} of the present data failed (${state.reason}: ${state.message}): nothing was rolled back`,
        FailureTypes.RestoreFailed,
      );
    }
    details(`waiting for snapshot ${name} of the present data: ${state.message}`);
    await sleep(SNAPSHOT_POLL);
  }
  throw ApplicationFailure.nonRetryable(
    `snapshot ${name} of the present data did not end within ${SNAPSHOT_LOOKS * 2} s: nothing was rolled back`,
    FailureTypes.RestoreFailed,
  );
}

/** The backup point's own revision, when the plan knows it (a continuous backup's newest point: at least this one). */
export function pointRevision(source: RebuildSource): string | undefined {
  if (source.kind === 'PointInTime')
    return source.revision !== undefined ? String(source.revision) : undefined;
  return source.revision > 0 ? String(source.revision) : undefined;
}

/** The revision of the data a restored member serves, from the one it serves (undefined when not bumped). */
export function unbumped(served: string): string | undefined {
  const n = BigInt(/^\d+$/.test(served) ? served : '0') - BigInt(RESTORE_BUMP_REVISION);
  return n > 0n ? n.toString() : undefined;
}
