// The defrag schedule on a Temporal Schedule: its id, its spec, and the signal its runs send the cluster workflow.
//
// spec.maintenance.defrag.schedule (five cron fields in UTC, or a macro such as @daily) becomes one Temporal
// Schedule per EtcdCluster object. Each firing starts defragDueWorkflow, which signals the cluster workflow
// `defragDue`; the cluster workflow serves it with a Defrag operation when the cluster can take one.
import type { ClusterRef } from './cluster-ref';
import { clusterWorkflowId } from './messages';

/**
 * One Temporal Schedule per EtcdCluster object: the uid is part of the id, so an object deleted and created
 * again under the same name never inherits the old object's schedule. Runs are `<id>/due-<timestamp>`.
 */
export function defragScheduleId(ref: ClusterRef): string {
  return `${clusterWorkflowId(ref.namespace, ref.name)}/defrag/${ref.uid}`;
}

/** The macros the CRD accepts, as the five fields they stand for (so Temporal sees plain cron, whatever it supports). */
export const CRON_MACROS: Readonly<Record<string, string>> = {
  '@hourly': '0 * * * *',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@weekly': '0 0 * * 0',
  '@monthly': '0 0 1 * *',
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
};

/** The Temporal ScheduleSpec for a defrag schedule: one cron expression, judged in UTC as the CRD documents. */
export function defragScheduleSpec(schedule: string): { cronExpressions: string[]; timezone: string } {
  const text = schedule.trim();
  return { cronExpressions: [CRON_MACROS[text] ?? text.replace(/ +/g, ' ')], timezone: 'UTC' };
}

/** The schedule's note and memo in the Temporal Web UI: which cluster it defragments, on what cron. */
export function defragScheduleNote(ref: ClusterRef, schedule: string): string {
  return `defragments EtcdCluster ${ref.namespace}/${ref.name} (uid ${ref.uid}) on "${schedule}" (UTC): kept by its cluster workflow`;
}
