// Heal (replace member): remove a member whose data is lost or that never started, re-add it fresh; recreate lost Pods; delete orphans.
import { describeStep } from '../plan';
import type { OperationModule } from './operation-module';

export const heal: OperationModule = {
  type: 'Heal',
  summarize: (ref, _from, _to, first) => (first ? `heal ${ref}: ${describeStep(first)}` : `heal ${ref}`),
  // The member it removed is re-added; a Pod replaced because it could not run is started again (Bootstrap
  // for a seed that never answered).
  alsoContinues: ['AddMember', 'PromoteLearner', 'RestartLearner', 'Bootstrap'],
  compensation: 'removePendingLearner',
};
