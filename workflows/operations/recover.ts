// Recover: the rebuild a user approved after a permanent quorum loss (workflows/quorum-loss.ts). The survivor with
// the newest data restarts once with etcd's --force-new-cluster (it keeps its data and drops every other member),
// then again as a plain member; with spec.backup a snapshot of what is left is taken then; fresh members are added back one at a time as learners and promoted by the ScaleUp
// the cluster starts next. The window of acknowledged writes given up is reported as an Event and in the result.
//
// Invariants: nothing is touched unless the quorum is still lost when the operation starts; no other member's Pod runs
// while the survivor starts with the flag (a live member of the old cluster makes etcd panic); a Pod started with the
// flag never outlives the operation (replaced by a plain one, also when the operation halts: compensation), since a
// restart with the flag would drop members added later; the survivor's claim and data are never deleted.
import { ApplicationFailure, proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { ClusterActivities } from '../../activities/cluster-activities';
import { FailureTypes } from '../../crds/conditions';
import { ActivityKinds } from '../activity-kinds';
import type { RevisionSeen } from '../quorum-loss';
import { lostWindow } from '../quorum-loss';
import type { OperationContext, OperationModule } from './operation-module';
import type { StepContext } from './step-executors';

const acts = proxyActivities<ClusterActivities>(ActivityKinds.operationStep);
const polls = proxyActivities<Pick<ClusterActivities, 'awaitSoleMember'>>(ActivityKinds.waitingPoll);

/** How long one poll for the rebuilt member's answer lasts (inside waitingPoll's 30 s start-to-close). */
const ANSWER_POLL_MAX_MS = 20_000;
/** How often a Pod being deleted is looked at again. */
const POD_GONE_POLL = '1s';
/** How many looks a halted recovery spends replacing a forced Pod with a plain one. */
const HALT_LOOKS = 60;
/** How many looks (a second apart) the snapshot of what is left waits for status to say the survivor serves. */
const AVAILABLE_LOOKS = 60;
/** The snapshot of what is left: read every SNAPSHOT_POLL, at most SNAPSHOT_LOOKS times (10 minutes). */
const SNAPSHOT_POLL = '2s';
const SNAPSHOT_LOOKS = 300;

/** The member to rebuild from, the members given up, and the last revision the operator had seen. */
export interface RecoveryPlan {
  member: string;
  id: string;
  revision: string;
  gone: string[];
  lastSeen?: RevisionSeen;
}

export const recover: OperationModule = {
  type: 'Recover',
  summarize: (ref, _from, _to, first) =>
    first?.kind === 'RecoverQuorum'
      ? `recover ${ref} from ${first.member} at revision ${first.revision}`
      : `recover ${ref}`,
  // Adding members back is the ScaleUp's (the next operation): this one ends once the survivor serves alone.
  alsoContinues: [],
  compensation: 'unforceMember',
  run: (ctx) => runRecovery(ctx),
  startInput: ({ step, lastSeenRevision }) =>
    step.kind === 'RecoverQuorum'
      ? {
          recovery: {
            member: step.member,
            id: step.id,
            revision: step.revision,
            gone: step.gone,
            ...(lastSeenRevision ? { lastSeen: lastSeenRevision } : {}),
          },
        }
      : {},
};

async function runRecovery(ctx: OperationContext): Promise<string> {
  const { ref, spec, input, details } = ctx;
  const plan = input.recovery;
  if (!plan) {
    throw ApplicationFailure.nonRetryable(
      'a Recover operation started without a plan',
      FailureTypes.InvalidSpec,
    );
  }
  // The approval is used once, whatever comes of it: a later loss needs a new one.
  await acts.removeRecoveryApproval({ ref });
  const now = await acts.observeCluster({ ref, version: spec.version });
  const forcedAlready = (await acts.forcedMembers({ ref })).includes(plan.member);
  if (now.etcd && !forcedAlready) {
    return `nothing done: the cluster answers a member list again (${now.etcd.members.length} members), so its quorum is not lost`;
  }
  await stopOtherMembers(ctx, plan.member);
  details(`restarting ${plan.member} with --force-new-cluster on its kept data (revision ${plan.revision})`);
  await startPod(ctx, plan.member, 'forced');
  details(`waiting for ${plan.member} to serve as a cluster of one`);
  const forced = await awaitAlone(ctx, plan);
  details(
    `${plan.member} serves alone at revision ${forced.revision}; restarting it without --force-new-cluster`,
  );
  await startPod(ctx, plan.member, 'plain');
  const plain = await awaitAlone(ctx, plan);
  const backup = spec.backup
    ? await snapshotWhatIsLeft(ctx)
    : 'no spec.backup, so no snapshot of what is left';
  const window = lostWindow(plain.revision, plan.lastSeen);
  const message = `rebuilt from ${plan.member} (member ${plan.id}); ${plan.gone.join(', ')} and their data are gone; ${window.message}; ${backup}; fresh members are added back next`;
  await acts.recordEvent({ ref, type: 'Warning', reason: 'QuorumRecovered', message });
  return message;
}

/**
 * Stops every other member's Pod (claims stay) and waits until they are gone: etcd's --force-new-cluster must not
 * meet a live member of the old cluster (etcd's recovery guide: it panics then). The lost members have no data to
 * give; an older survivor keeps its claim until etcd, no longer listing it, lets the planner delete it.
 */
async function stopOtherMembers(ctx: Pick<OperationContext, 'ref' | 'spec' | 'details'>, keep: string) {
  const { ref, spec } = ctx;
  for (;;) {
    const now = await acts.observeCluster({ ref, version: spec.version });
    const others = now.kube.filter((k) => k.name !== keep && k.pod);
    if (others.length === 0) return;
    ctx.details(`stopping ${others.map((k) => k.name).join(', ')} so no member of the old cluster runs`);
    for (const k of others) {
      if (!k.pod?.terminating) await acts.deleteMemberPod({ ref, member: k.name });
    }
    await sleep(POD_GONE_POLL);
  }
}

/**
 * With spec.backup: an EtcdSnapshot of what is left, taken from the rebuilt member before any new member joins
 * (the snapshot workflow streams only from an Available cluster, which the survivor is once it serves alone; the
 * KV data is what the survivor had: --force-new-cluster rewrites membership, not keys). Its end is told in the
 * result; a snapshot that fails or does not end within SNAPSHOT_LOOKS does not stop the recovery.
 */
async function snapshotWhatIsLeft(ctx: OperationContext): Promise<string> {
  const { ref, spec, details } = ctx;
  const seq = /\/op\/(\d+)-[a-z]+$/.exec(workflowInfo().workflowId)?.[1] ?? '0';
  const name = `${ref.name}-pre-recovery-${seq}`;
  details(`taking snapshot ${name} of what is left, before any member joins`);
  for (let look = 0; look < AVAILABLE_LOOKS && !(await acts.clusterAvailable({ ref })); look++) {
    await sleep(POD_GONE_POLL);
  }
  await acts.createPreUpgradeSnapshot({ ref, spec, name });
  for (let look = 0; look < SNAPSHOT_LOOKS; look++) {
    const state = await acts.readPreUpgradeSnapshot({ ref, name });
    if (state.phase === 'Succeeded') return `snapshot ${name} of what is left stored at ${state.uri}`;
    if (state.phase === 'Failed') {
      return `snapshot ${name} of what is left failed (${state.reason}: ${state.message}); the recovery went on`;
    }
    details(`waiting for snapshot ${name} of what is left: ${state.message}`);
    await sleep(SNAPSHOT_POLL);
  }
  return `snapshot ${name} of what is left did not end within ${SNAPSHOT_LOOKS * 2} s; the recovery went on`;
}

/** Replaces the member's Pod until the one running is the one wanted; its claim stays. */
async function startPod(
  ctx: Pick<OperationContext, 'ref' | 'spec'>,
  member: string,
  want: 'forced' | 'plain',
) {
  const { ref, spec } = ctx;
  for (;;) {
    const now = await acts.replaceMemberPod({ ref, member, want });
    if (now === 'done') return;
    if (now === 'absent') {
      await acts.createMemberPod({
        ref,
        spec,
        member,
        mode: 'restart',
        ...(want === 'forced' ? { forceNewCluster: true } : {}),
      });
      continue;
    }
    await sleep(POD_GONE_POLL);
  }
}

/** Waits (within the progress deadline) until the member answers alone; fails if etcd still lists others. */
async function awaitAlone(
  ctx: Pick<OperationContext, 'ref' | 'details'>,
  plan: RecoveryPlan,
): Promise<{ revision: string; clusterId: string }> {
  for (;;) {
    const answer = await polls.awaitSoleMember({
      ref: ctx.ref,
      member: plan.member,
      maxMs: ANSWER_POLL_MAX_MS,
    });
    if ('waiting' in answer) {
      ctx.details(`waiting for ${plan.member} to answer: ${answer.waiting}`);
      continue;
    }
    if (answer.members.length !== 1 || answer.members[0] !== plan.id) {
      throw ApplicationFailure.nonRetryable(
        `${plan.member} answers with members ${answer.members.join(', ')}, not itself (${plan.id}) alone: --force-new-cluster did not take; nothing else was changed`,
        FailureTypes.MemberMismatch,
      );
    }
    return { revision: answer.revision, clusterId: answer.clusterId };
  }
}

/**
 * A recovery halted (cancelled, past its deadline) with a Pod started with --force-new-cluster replaces it with a
 * plain one: the member keeps what it recovered, and a later restart cannot drop members added after it.
 */
export async function unforceMembers(ctx: StepContext): Promise<string> {
  const forced = await acts.forcedMembers({ ref: ctx.ref });
  if (forced.length === 0) return 'no Pod runs with --force-new-cluster';
  for (const member of forced) {
    ctx.details(`halted: restarting ${member} without --force-new-cluster`);
    let looks = 0;
    for (;;) {
      const now = await acts.replaceMemberPod({ ref: ctx.ref, member, want: 'plain' });
      if (now === 'done') break;
      if (now === 'absent') {
        await acts.createMemberPod({ ref: ctx.ref, spec: ctx.spec, member, mode: 'restart' });
        continue;
      }
      if (++looks >= HALT_LOOKS) return `${member}'s Pod with --force-new-cluster is still being deleted`;
      await sleep(POD_GONE_POLL);
    }
  }
  return `${forced.join(', ')} restarted without --force-new-cluster`;
}
