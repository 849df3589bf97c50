// Resume: start the kept member again from its claim, then grow to spec.replicas.
import type { OperationModule } from './operation-module';

export const resume: OperationModule = {
  type: 'Resume',
  summarize: (ref, _from, to) => `resume ${ref} 0 -> ${to}`,
  alsoContinues: ['AddMember', 'PromoteLearner', 'RestartLearner', 'RecreatePod'],
  compensation: 'removePendingLearner',
  pausedAfter: false,
};
