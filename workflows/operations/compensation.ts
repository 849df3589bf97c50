// What a halted operation (cancelled, or past its progress deadline) undoes, by its module's Compensation; runs in a non-cancellable scope.
//
// Invariant: only the operation's own half-done step is undone (a learner it added, a member it stopped to
// restart); never anything that could cost quorum or data.
import { proxyActivities, sleep } from '@temporalio/workflow';
import type { ClusterActivities } from '../../activities/cluster-activities';
import { ActivityKinds } from '../activity-kinds';
import type { StepContext } from './step-executors';
import type { Compensation } from './operation-module';
import { unforceMembers } from './recover';

const acts = proxyActivities<ClusterActivities>(ActivityKinds.operationStep);

// How many observations (WAIT_INTERVAL apart) a halted rolling restart spends bringing back a member it stopped.
const HALT_RESTART_LOOKS = 60;
const WAIT_INTERVAL = '1s';

/** Undoes the operation's half-done step; returns what it undid, for the operation's result message. */
export function compensate(
  compensation: Compensation,
  ctx: StepContext,
  snapshotUri: string | undefined,
): Promise<string> {
  switch (compensation) {
    case 'restartStoppedMember':
      return restartStoppedMember(ctx, snapshotUri);
    case 'removePendingLearner':
      return removePendingLearner(ctx);
    case 'unforceMember':
      return unforceMembers(ctx);
    case 'none':
      return Promise.resolve('nothing to undo');
  }
}

/**
 * A rolling restart (upgrade, downgrade, rollout) halted between deleting a member's Pod and recreating it
 * would leave that member down while the cluster starts nothing more (halted). So the Pod comes back, on the
 * image spec.version names: etcd runs mixed versions of one upgrade step, so the cluster keeps working. Then
 * say who runs what.
 */
async function restartStoppedMember(ctx: StepContext, snapshotUri: string | undefined): Promise<string> {
  const { ref, spec, details } = ctx;
  for (let look = 0; look < HALT_RESTART_LOOKS; look++) {
    const o = await acts.observeCluster({ ref, version: spec.version });
    const listed = new Set(o.etcd?.members.map((m) => m.name) ?? ctx.recordedMembers());
    const down = o.kube.find(
      (k) => listed.has(k.name) && !k.pod && k.claim && !k.claim.terminating && !k.claim.dataLost,
    );
    const stopping = o.kube.find((k) => listed.has(k.name) && k.pod?.terminating);
    if (down && !stopping) {
      details(`halted: starting ${down.name} again so the cluster keeps every member`);
      await acts.createMemberPod({ ref, spec, member: down.name, mode: 'restart' });
      continue;
    }
    if (!stopping) {
      const versions = (o.etcd?.members ?? [])
        .map(
          (m) => `${m.name} ${m.version ?? o.kube.find((k) => k.name === m.name)?.pod?.version ?? 'unknown'}`,
        )
        .sort();
      return `members run: ${versions.join(', ') || 'unknown (no member answered)'}${snapshotUri ? `; pre-upgrade snapshot ${snapshotUri}` : ''}`;
    }
    await sleep(WAIT_INTERVAL);
  }
  return 'a member Pod was still stopping; the next operation recreates it';
}

/** A membership change halted with a learner it added and did not promote: that learner goes. */
async function removePendingLearner(ctx: StepContext): Promise<string> {
  const { ref, details } = ctx;
  if (!ctx.pendingLearner) return 'nothing was left half-done';
  const { member, id } = ctx.pendingLearner;
  details(`halted: removing learner ${member} it added`);
  await acts.removeMember({ ref, id });
  await acts.deleteMemberPod({ ref, member });
  await acts.deleteMemberClaim({ ref, member });
  ctx.pendingLearner = undefined;
  return `learner ${member} that it added was removed`;
}
