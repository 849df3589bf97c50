// A step in words: the line the Temporal UI shows as current details and status.currentOperation.step says.
import type { RemoveReason, Step } from './plan-types';
import { describeSource } from './rebuild-point';
import { describeRolloutStep } from './rollout-plan';

const removeWhy: Record<RemoveReason, string> = {
  ScaleDown: 'scale down',
  DataLost: 'its data is lost',
  Zombie: 'it never started and nothing runs it',
};

/** One line for the Temporal UI's current details and status.currentOperation.step. */
export function describeStep(step: Step): string {
  switch (step.kind) {
    case 'Bootstrap':
      return step.members
        ? `start the ${step.members.length} initial members together (${step.members.join(', ')})`
        : `start seed member ${step.member}`;
    case 'AddMember':
      return `add member ${step.member} as a learner`;
    case 'PromoteLearner':
      return `promote learner ${step.member} to voter`;
    case 'RestartLearner':
      return `restart learner ${step.member} on its claim: it applied the leader's snapshot, which already held its own publish, and etcd would let it answer only after its request timeout`;
    case 'RemoveMember':
      return `remove member ${step.member} (${removeWhy[step.reason]})`;
    case 'MoveLeader':
      if (step.reason === 'Upgrade') {
        return `move leadership from ${step.from.name} to ${step.to.name}, which runs ${step.upgrade.to}, before upgrading ${step.from.name}`;
      }
      if (step.reason === 'Rollout') return describeRolloutStep(step);
      return `move leadership from ${step.from.name} to ${step.to.name} before removing ${step.from.name}`;
    case 'UpgradeMember':
      return `restart member ${step.member} on ${step.to} (it runs ${step.from}): delete its Pod, keep its claim`;
    case 'EnableDowngrade':
      return `validate and enable etcd's downgrade to ${step.targetVersion} (members run ${step.from}, spec.version ${step.to})`;
    case 'RolloutMember':
    case 'UpdateMemberMetadata':
    case 'ExpandClaim':
      return describeRolloutStep(step);
    case 'RecreatePod':
      return `recreate the Pod of ${step.member} on its kept data`;
    case 'DeleteOrphan':
      return `delete the Pod and claim of ${step.member}, which etcd does not list`;
    case 'ReplacePod':
      return `delete the Pod of ${step.member}, which never ran and which the spec no longer describes (${step.why}); its claim is kept and it starts again from the spec`;
    case 'Pause':
      return `stop ${step.member} and keep its claim`;
    case 'Resume':
      return `start ${step.member} again from its kept claim`;
    case 'EnableAuth':
      return "make sure the root user has the Secret's password and the root role, and enable auth";
    case 'Defrag':
      return step.message;
    case 'RotateAuth':
      return "apply the Secret's changed root password to etcd";
    case 'RecoverQuorum':
      return `recover the cluster from ${step.member} at revision ${step.revision} (etcd --force-new-cluster); ${step.gone.join(', ')} lost their data`;
    case 'Rebuild':
      return `rebuild the cluster in place from ${describeSource(step.source)} (${step.reason === 'Rollback' ? 'an approved rollback' : `no member kept its data: ${step.gone.join(', ')}`})`;
    case 'Wait':
      return `wait (${step.reason}): ${step.message}`;
    case 'None':
      return step.message;
  }
}
