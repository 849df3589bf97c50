// Keeping one Temporal Schedule as wanted: the one mechanism behind EtcdSnapshotSchedule and the defrag schedule.
//
// Idempotent: update when it exists, create when it does not (a concurrent create counts), then set paused
// explicitly; delete treats "not found" as deleted. A spec Temporal refuses fails non-retryably as
// InvalidSchedule with the server's reason, so the caller can report it instead of retrying for ever.
import type { Client, ScheduleOptionsStartWorkflowAction, ScheduleSpec } from '@temporalio/client';
import { ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { ScheduleReasons } from '../crds/conditions';

export interface WantedSchedule {
  scheduleId: string;
  spec: ScheduleSpec;
  action: ScheduleOptionsStartWorkflowAction<never>;
  paused: boolean;
  /** The note the Web UI shows beside the schedule's state. */
  note: string;
  /** Shown in the Web UI's schedule view; set when the schedule is created. */
  memo?: Record<string, unknown>;
  /** How the refusal names what was refused, e.g. `the schedule "0 3 * * *"`. */
  what: string;
}

/** One run at a time; after Temporal itself was down, at most the firings of the last minute are caught up. */
export const SCHEDULE_POLICIES = { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' } as const;

function isInvalidArgument(err: unknown): boolean {
  // The schedule client turns the server's INVALID_ARGUMENT (e.g. "CronString does not have 5-7 fields")
  // into a TypeError; a raw gRPC error carries code 3.
  return err instanceof TypeError || (err as { code?: number }).code === 3;
}

/** Creates or updates the Temporal Schedule, paused exactly when `paused` is true. */
export async function keepTemporalSchedule(
  temporal: Pick<Client, 'schedule'>,
  wanted: WantedSchedule,
): Promise<'created' | 'updated'> {
  const { paused, note } = wanted;
  const body = { spec: wanted.spec, action: wanted.action, policies: SCHEDULE_POLICIES };
  const handle = temporal.schedule.getHandle(wanted.scheduleId);
  try {
    let outcome: 'created' | 'updated';
    try {
      await handle.update((prev) => ({ ...prev, ...body, state: { ...prev.state, paused, note } }));
      outcome = 'updated';
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
      try {
        await temporal.schedule.create({
          scheduleId: wanted.scheduleId,
          ...body,
          ...(wanted.memo ? { memo: wanted.memo } : {}),
          state: { paused, note },
        });
      } catch (createErr) {
        if (!(createErr instanceof ScheduleAlreadyRunning)) throw createErr;
      }
      outcome = 'created';
    }
    // Pause and unpause explicitly: what an update does to the paused state differs across servers.
    const described = await handle.describe();
    if (described.state.paused !== paused) {
      if (paused) await handle.pause(note);
      else await handle.unpause(note);
    }
    return outcome;
  } catch (err) {
    if (err instanceof ScheduleNotFoundError || !isInvalidArgument(err)) throw err;
    throw ApplicationFailure.nonRetryable(
      `Temporal refused ${wanted.what}: ${(err as Error).message}`,
      ScheduleReasons.InvalidSchedule,
    );
  }
}

/** Deletes the Temporal Schedule; one that is already gone counts as deleted. */
export async function deleteTemporalSchedule(
  temporal: Pick<Client, 'schedule'>,
  scheduleId: string,
): Promise<'deleted' | 'absent'> {
  try {
    await temporal.schedule.getHandle(scheduleId).delete();
    return 'deleted';
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) return 'absent';
    throw err;
  }
}
