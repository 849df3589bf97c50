// Defrag: compact, then defragment every member in its own order and gates (workflows/defrag-operation.ts), the leader last.
import { patched } from '@temporalio/workflow';
import { runDefragOperation } from '../defrag-operation';
import { advanceSchedule } from '../defrag-schedule';
import { withoutDefragDue } from '../defrag-schedule-keeper';
import type { OperationModule } from './operation-module';
import { withDefragSchedule } from './operation-module';

/** The patch behind remembering when a Defrag ended (histories before it started threshold Defrags without a cooldown). */
const DEFRAG_COOLDOWN_PATCH = 'defrag-threshold-cooldown';

export const defrag: OperationModule = {
  type: 'Defrag',
  summarize: (ref, _from, _to, first) =>
    first?.kind === 'Defrag'
      ? `defrag ${ref} (${first.trigger}): ${first.members.join(', ')}`
      : `defrag ${ref}`,
  // Membership is not its business: it never takes the shared loop's steps.
  alsoContinues: [],
  compensation: 'removePendingLearner',
  run: ({ ref, spec, input, details }) =>
    runDefragOperation({ ref, spec, scheduleDue: input.defragScheduleDue === true, details }),
  startInput: ({ defragDue }) => (defragDue ? { defragScheduleDue: true } : {}),
  ended(state, { defragDue, spec }) {
    let next = state;
    // The threshold waits out its cooldown after any Defrag; the schedule and NOSPACE do not (defrag-plan.ts).
    if (patched(DEFRAG_COOLDOWN_PATCH)) next = { ...next, lastDefragAt: new Date().toISOString() };
    // Any Defrag that ran while the schedule was due defragmented every member: that firing is served (and
    // so is any firing while it ran). Without hand-cron state the run keeps a Temporal Schedule.
    if (defragDue && !next.defragSchedule) {
      next = withoutDefragDue(next);
    } else if (defragDue) {
      const schedule = spec.maintenance?.defrag?.schedule;
      next = withDefragSchedule(
        next,
        advanceSchedule(next.defragSchedule, schedule, new Date().toISOString(), true),
      );
    }
    return next;
  },
};
