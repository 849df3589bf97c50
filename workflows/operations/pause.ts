// Pause (replicas 0): shrink to one member, then stop its Pod and keep its claim, so the cluster id and every key survive.
import type { OperationModule } from './operation-module';

export const pause: OperationModule = {
  type: 'Pause',
  summarize: (ref, from) => `pause ${ref} ${from} -> 0`,
  alsoContinues: [],
  compensation: 'removePendingLearner',
  pausedAfter: true,
};
