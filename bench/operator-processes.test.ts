import { processFigures } from './operator-processes';

describe("processFigures: an operator replica's memory and CPU from its /metrics", () => {
  const exposition = [
    '# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.',
    '# TYPE process_cpu_seconds_total counter',
    'process_cpu_seconds_total 2.844888',
    'process_cpu_user_seconds_total 2.1',
    '# TYPE process_resident_memory_bytes gauge',
    'process_resident_memory_bytes 262144000',
  ].join('\n');
  test.each([
    ['both present', exposition, { rssMb: 250, cpuSeconds: 2.844888 }],
    ['memory missing', 'process_cpu_seconds_total 3', undefined],
    ['cpu missing', 'process_resident_memory_bytes 1048576', undefined],
    [
      'a labelled or prefixed metric is not taken for it',
      'x_process_cpu_seconds_total 1\nprocess_resident_memory_bytes 1048576',
      undefined,
    ],
    ['not a number', 'process_cpu_seconds_total NaN\nprocess_resident_memory_bytes 1048576', undefined],
    ['empty', '', undefined],
  ] as const)('%s', (_what, text, want) => {
    expect(processFigures(text)).toEqual(want);
  });
});
