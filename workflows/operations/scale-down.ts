// ScaleDown: remove one voter at a time (leadership moved away first), each removal keeping quorum.
import type { OperationModule } from './operation-module';

export const scaleDown: OperationModule = {
  type: 'ScaleDown',
  summarize: (ref, from, to) => `scale ${ref} ${from} -> ${to}`,
  alsoContinues: [],
  compensation: 'removePendingLearner',
};
