// Bootstrap: start the seed member, then grow to spec.replicas one learner at a time (auth enabled on the way when spec.auth asks).
import type { OperationModule } from './operation-module';

export const bootstrap: OperationModule = {
  type: 'Bootstrap',
  summarize: (ref, _from, to) => `bootstrap ${ref} with ${to} member${to === 1 ? '' : 's'}`,
  alsoContinues: ['AddMember', 'PromoteLearner', 'RestartLearner', 'EnableAuth'],
  compensation: 'removePendingLearner',
};
