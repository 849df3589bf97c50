// Rollout: restart members one by one on a changed Pod template (options, resources, TLS), the leader last; relabel and grow claims in place.
import { summarizeRollout } from '../rollout-plan';
import type { OperationModule } from './operation-module';

export const rollout: OperationModule = {
  type: 'Rollout',
  summarize: (ref, _from, _to, first) =>
    summarizeRollout(
      ref,
      first?.kind === 'RolloutMember' ||
        first?.kind === 'UpdateMemberMetadata' ||
        first?.kind === 'ExpandClaim'
        ? first
        : first?.kind === 'MoveLeader' && first.reason === 'Rollout'
          ? first
          : undefined,
    ),
  // The member it restarted comes back through RecreatePod, inside the same operation.
  alsoContinues: ['RecreatePod'],
  compensation: 'restartStoppedMember',
};
