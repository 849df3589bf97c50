// ScaleUp: add one learner, let it catch up, promote it; repeat until spec.replicas voters.
import type { OperationModule } from './operation-module';

export const scaleUp: OperationModule = {
  type: 'ScaleUp',
  summarize: (ref, from, to) => `scale ${ref} ${from} -> ${to}`,
  alsoContinues: [],
  compensation: 'removePendingLearner',
};
