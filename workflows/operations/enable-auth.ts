// EnableAuth: the root user with the Secret's password and the root role, then auth on (TLS and auth rotation's first half).
import type { OperationModule } from './operation-module';

export const enableAuth: OperationModule = {
  type: 'EnableAuth',
  summarize: (ref) => `enable auth on ${ref}`,
  alsoContinues: [],
  compensation: 'removePendingLearner',
};
