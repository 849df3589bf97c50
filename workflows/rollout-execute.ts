// Carries out one Rollout step inside the operation workflow: restart an out-of-date member, patch Pod metadata, grow a claim.
//
// Sandbox-pure like the operation workflow that calls it; the restarted member comes back through the
// operation's own RecreatePod on the next plan (same claim, same member id).
import { proxyActivities } from '@temporalio/workflow';
import type { RolloutActivities } from '../activities/rollout-activities';
import type { EtcdClusterSpec } from '../crds/etcd-cluster';
import type { ExpandClaimStep, RolloutMemberStep, UpdateMemberMetadataStep } from './rollout-plan';
import type { ClusterRef } from '../contracts/cluster-ref';
import { ActivityKinds } from './activity-kinds';

const acts = proxyActivities<RolloutActivities>(ActivityKinds.operationStep);

export async function executeRolloutStep(input: {
  ref: ClusterRef;
  spec: EtcdClusterSpec;
  step: RolloutMemberStep | UpdateMemberMetadataStep | ExpandClaimStep;
  details: (line: string) => void;
}): Promise<void> {
  const { ref, spec, step, details } = input;
  switch (step.kind) {
    case 'RolloutMember': {
      const deleted = await acts.deleteMemberPodForRollout({ ref, member: step.member, hash: step.hash });
      details(
        deleted === 'already-rolled'
          ? `member ${step.member} already runs the new spec`
          : `member ${step.member} stopped; restarting with the new spec on its claim and member id`,
      );
      return;
    }
    case 'UpdateMemberMetadata':
      await acts.patchMemberPodMetadata({ ref, spec, member: step.member });
      return;
    case 'ExpandClaim': {
      const expanded = await acts.expandMemberClaim({ ref, member: step.member, size: step.to });
      if (expanded.result === 'refused') details(`claim of ${step.member} not grown: ${expanded.message}`);
      return;
    }
  }
}
