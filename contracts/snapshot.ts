// What the snapshot activities report to the snapshot workflow.
import type { AgentResult } from './agent-result';

/** A Job of one attempt, as the workflow needs it: finished or not, and the agent's result if it left one. */
export type SnapshotJobObservation =
  | { state: 'absent' }
  | { state: 'running' }
  | { state: 'finished'; succeeded: boolean; result?: AgentResult; jobMessage: string };

/** Upper bound of one verification Job (its activeDeadlineSeconds): download, restore and one etcd start of 8 GiB. */
export const VERIFY_JOB_DEADLINE_SECONDS = 1800;
