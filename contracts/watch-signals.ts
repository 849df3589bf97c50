// What the watchers tell workflows about, by kind: the label values of etcd_conductor_watch_changes_signalled_total
// (docs/metrics.md lists each; contracts/watch-signals.test.ts checks that it does).
export const WATCH_SIGNAL_KINDS = [
  'cluster',
  'members',
  'snapshot',
  'job',
  'schedule',
  'alarms',
  'secrets',
] as const;

export type WatchSignalKind = (typeof WATCH_SIGNAL_KINDS)[number];
