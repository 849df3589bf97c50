// RotateAuth: apply the Secret's changed root password to etcd.
import type { OperationModule } from './operation-module';

export const rotateAuth: OperationModule = {
  type: 'RotateAuth',
  summarize: (ref) => `apply the changed root password to ${ref}`,
  alsoContinues: [],
  compensation: 'removePendingLearner',
};
